/*!
 * \file random_graph.h
 * \brief Random graphs of elementwise, broadcast and reduction ops for fusion property tests,
 * reductions with several consumers and broadcast back into their input's domain included.
 */
#ifndef IR_TESTS_OPS_RANDOM_GRAPH_H_
#define IR_TESTS_OPS_RANDOM_GRAPH_H_

#include <algorithm>
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

  static bool Broadcastable(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
      int64_t da = a[a.size() - i], db = b[b.size() - i];
      if (da != db && da != 1 && db != 1) return false;
    }
    return true;
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
    int kind = static_cast<int>(Pick(0, 12));
    if (kind >= 10) return BroadcastBack(name);
    if (kind < 4) {
      static const char* const kUnary[] = {"tanh", "sigmoid", "sin", "abs", "negative", "relu", "softplus", "cos"};
      const Value& x = Any();
      values_.push_back(Value{MakeNode(kUnary[Pick(0, 7)], name, {x.entry}), x.shape});
    } else if (kind < 8) {
      static const char* const kBinary[] = {"add", "subtract", "multiply", "maximum", "minimum"};
      const Value& a = Any();
      const Value& picked = Any();
      const Value& b = Broadcastable(a.shape, picked.shape) ? picked : a;
      values_.push_back(Value{MakeNode(kBinary[Pick(0, 4)], name, {a.entry, b.entry}), Broadcast(a.shape, b.shape)});
    } else {
      const Value& x = Any();
      if (x.shape.empty()) return;
      Reduce(name, x, static_cast<int>(Pick(0, x.shape.size() - 1)), Pick(0, 1) == 1);
    }
  }

  // A random reduction of `x` over `axis`, appended as a value.
  void Reduce(const std::string& name, Value x, int axis, bool keep) {
    static const char* const kReduce[] = {"sum", "mean", "max"};
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

  // As in norms and their gradients: a keepdims reduction r of x consumed with x itself by an
  // elementwise op (x - mean(x)), and with a value w of r's shape that also feeds a sibling
  // x*w of the reduction (exp(c) in exp(t)*exp(c) + exp(c)*mean(exp(t))) or x itself. r
  // stays available to later steps.
  void BroadcastBack(const std::string& name) {
    static const char* const kBinary[] = {"subtract", "multiply", "add"};
    Value source = Any();
    if (source.shape.empty()) return;
    values_.push_back(Value{MakeNode(Pick(0, 1) == 1 ? "tanh" : "cos", name + "_x", {source.entry}), source.shape});
    Value x = values_.back();  // computed, so that it and its siblings can form a group
    int axis = static_cast<int>(Pick(0, x.shape.size() - 1));
    std::vector<int64_t> reduced = x.shape;
    reduced[axis] = 1;
    std::vector<Value> same;
    for (const Value& v : values_) {
      if (v.shape == reduced) same.push_back(v);
    }
    Value w = same.empty() ? x : same[Pick(0, same.size() - 1)];
    if (!same.empty()) {  // a computed value, so that it can be in a group
      values_.push_back(Value{MakeNode(Pick(0, 1) == 1 ? "exp" : "sin", name + "_w0", {w.entry}), reduced});
      w = values_.back();
    }
    if (!same.empty()) {  // a sibling of the reduction that may share its group, reading w
      values_.push_back(Value{MakeNode(kBinary[Pick(0, 2)], name + "_xw", {x.entry, w.entry}), x.shape});
      if (Pick(0, 2) == 0) x = values_.back();
    }
    Reduce(name + "_r", x, axis, true);
    Value r = values_.back();
    bool reduced_first = Pick(0, 1) == 1;
    values_.push_back(Value{
        MakeNode(kBinary[Pick(0, 2)], name, {reduced_first ? r.entry : x.entry, reduced_first ? x.entry : r.entry}),
        x.shape});
    if (!same.empty())
      values_.push_back(Value{MakeNode(kBinary[Pick(0, 2)], name + "_w", {w.entry, r.entry}), reduced});
  }

  std::mt19937_64 rng_;
  std::vector<Value> values_;
  std::vector<NodeEntry> fetches_;
  std::unordered_map<std::string, NDArray> feeds_;
};

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_OPS_RANDOM_GRAPH_H_
