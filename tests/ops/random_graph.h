/*!
 * \file random_graph.h
 * \brief Random graphs of elementwise, broadcast and reduction ops for fusion property tests.
 */
#ifndef IR_TESTS_OPS_RANDOM_GRAPH_H_
#define IR_TESTS_OPS_RANDOM_GRAPH_H_

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ops/op_harness.h"

namespace ir {
namespace test {

/*! \brief A random graph of elementwise, broadcast and reduction ops over [b, c], [c] and [b, 1] inputs. */
class RandomGraph {
 public:
  explicit RandomGraph(uint64_t seed) : rng_(seed) {
    int64_t b = Pick(1, 5), c = Pick(1, 7);
    Add("x0", {b, c});
    Add("x1", {c});
    Add("x2", {b, 1});
    int steps = static_cast<int>(Pick(5, 12));
    for (int i = 0; i < steps; ++i) Step(i);
    fetches_ = {values_.back().entry, values_[values_.size() - 2].entry, values_[Pick(3, values_.size() - 1)].entry};
    // Only the placeholders the fetches read can be fed.
    Graph graph(fetches_);
    const IndexedGraph& idx = graph.indexed_graph();
    std::unordered_map<std::string, NDArray> used;
    for (uint32_t nid : idx.input_nodes()) used[idx[nid].source->attrs.name] = feeds_.at(idx[nid].source->attrs.name);
    feeds_ = used;
  }
  const std::vector<NodeEntry>& fetches() const { return fetches_; }
  const std::unordered_map<std::string, NDArray>& feeds() const { return feeds_; }

 private:
  struct Value {
    NodeEntry entry;
    std::vector<int64_t> shape;
  };

  int64_t Pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  const Value& Any() { return values_[Pick(0, values_.size() - 1)]; }

  void Add(const std::string& name, std::vector<int64_t> shape) {
    values_.push_back(Value{NodeEntry{Node::CreateVariable(name), 0}, shape});
    feeds_[name] = test::RandomArray(Shape(shape), DType::kFloat32, Pick(1, 1000), 0.5, 1.5);
  }

  static std::vector<int64_t> Broadcast(std::vector<int64_t> a, std::vector<int64_t> b) {
    if (a.size() < b.size()) std::swap(a, b);
    for (size_t i = 0; i < b.size(); ++i) {
      int64_t& d = a[a.size() - b.size() + i];
      d = d == 1 ? b[i] : d;
    }
    return a;
  }

  void Step(int i) {
    std::string name = StrCat("n", i);
    int kind = static_cast<int>(Pick(0, 9));
    if (kind < 4) {
      static const char* const kUnary[] = {"tanh", "sigmoid", "sin", "abs", "negative", "relu", "softplus", "cos"};
      const Value& x = Any();
      values_.push_back(Value{MakeNode(kUnary[Pick(0, 7)], name, {x.entry}), x.shape});
    } else if (kind < 8) {
      static const char* const kBinary[] = {"add", "subtract", "multiply", "maximum", "minimum"};
      const Value& a = Any();
      const Value& b = Any();
      values_.push_back(Value{MakeNode(kBinary[Pick(0, 4)], name, {a.entry, b.entry}), Broadcast(a.shape, b.shape)});
    } else {
      static const char* const kReduce[] = {"sum", "mean", "max"};
      const Value& x = Any();
      if (x.shape.empty()) return;
      int axis = static_cast<int>(Pick(0, x.shape.size() - 1));
      bool keep = Pick(0, 1) == 1;
      std::vector<int64_t> shape = x.shape;
      if (keep) {
        shape[axis] = 1;
      } else {
        shape.erase(shape.begin() + axis);
      }
      values_.push_back(Value{MakeNode(kReduce[Pick(0, 2)], name, {x.entry},
                                       {{"axis", std::to_string(axis)}, {"keepdims", keep ? "1" : "0"}}),
                              shape});
    }
  }

  std::mt19937_64 rng_;
  std::vector<Value> values_;
  std::vector<NodeEntry> fetches_;
  std::unordered_map<std::string, NDArray> feeds_;
};

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_OPS_RANDOM_GRAPH_H_
