// Graphs without control flow whose shapes are partly known only at run time (an op whose output
// shape is a value, FComputeShaped): they bind dynamically, the nodes of known shapes are still
// fused, and an unknown shape nothing computes is an error naming its node.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/op.h"
#include "ir/runtime.h"

namespace ir {
namespace {

NodeEntry V(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }
NodeEntry Op(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
             std::map<std::string, std::string> attrs = {}) {
  return MakeNode(op, name, std::move(in), attrs);
}

/*! \brief (fused nodes, nodes of unknown output shape) of a bound graph. */
std::pair<int, int> Census(const Graph& bound) {
  const IndexedGraph& idx = bound.indexed_graph();
  const ShapeVector& shapes = bound.GetAttr<ShapeVector>("shape");
  std::pair<int, int> counts{0, 0};
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (idx[nid].source->is_variable()) continue;
    counts.first += idx[nid].source->op()->name == "_fused";
    counts.second += !shapes[idx.entry_id(nid, 0)].is_known();
  }
  return counts;
}

TEST(DynamicShapesTest, NodesOfKnownShapesAreFusedBesideOnesFoundAsTheGraphRuns) {
  // y = exp(x) * 2 + 1 has a known shape; the distinct ids (unique) and their squares do not.
  NodeEntry x = V("x"), ids = V("ids");
  NodeEntry y = Op("add_scalar", "y", {Op("multiply_scalar", "y2", {Op("exp", "ex", {x})}, {{"scalar", "2"}})},
                   {{"scalar", "1"}});
  NodeEntry distinct = Op("unique", "u", {ids});
  NodeEntry squares = Op("multiply", "sq", {distinct, distinct});
  std::vector<float> xv{0.5f, -1.0f, 2.0f};
  for (bool fusion : {false, true}) {
    SessionOptions options;
    options.fusion = fusion;
    Session session(options);
    for (const std::vector<int32_t>& idv : {std::vector<int32_t>{3, 1, 3, 2}, std::vector<int32_t>{5, 5, 0, 5}}) {
      std::vector<NDArray> out = session.Run({y, squares}, {{"x", NDArray::FromVector<float>(Shape{3}, xv)},
                                                            {"ids", NDArray::FromVector<int32_t>(Shape{4}, idv)}});
      std::vector<int32_t> expected;
      for (int32_t id : idv) {
        if (std::find(expected.begin(), expected.end(), id * id) == expected.end()) expected.push_back(id * id);
      }
      EXPECT_EQ(out[1].ToVector<int32_t>(), expected);
      for (size_t k = 0; k < xv.size(); ++k) EXPECT_NEAR(out[0].ToVector<float>()[k], std::exp(xv[k]) * 2 + 1, 1e-5);
      std::pair<int, int> census = Census(session.last_graph());
      EXPECT_GT(census.second, 0) << "unique's output is found as the graph runs";
      EXPECT_EQ(census.first, fusion ? 1 : 0) << "exp, multiply_scalar and add_scalar are one kernel";
    }
  }
}

TEST(DynamicShapesTest, AnInputWhoseShapeNothingComputesIsAnErrorNamingIt) {
  // v is uninitialized and assigned the distinct ids: its shape would be known only once unique ran,
  // but the variable is allocated before any node runs.
  NodeEntry v = NodeEntry{Node::CreateVariable("v", {{"__kind__", "variable"}}), 0};
  NodeEntry stored = Op("assign", "store", {v, Op("unique", "u", {V("ids")})});
  Session session;
  try {
    session.Run({stored}, {{"ids", NDArray::FromVector<int32_t>(Shape{2}, {1, 1})}});
    ADD_FAILURE() << "ran without an error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("input 'v' has the unknown shape"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace ir
