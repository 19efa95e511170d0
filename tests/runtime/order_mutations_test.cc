#include <gtest/gtest.h>

#include "ir/graph_io.h"
#include "ir/pass.h"
#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Op;
using runtime_test::Var;
using runtime_test::Variable;

/*! \brief Node id of the node named `name` in `g`. */
uint32_t IdOf(const Graph& g, const std::string& name) {
  const IndexedGraph& idx = g.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (idx[nid].source->attrs.name == name) return nid;
  }
  ADD_FAILURE() << "no node named " << name;
  return 0;
}

/*!
 * A middle layer: h = x W feeds the loss; the backward pass reads W again for the gradient
 * of x (gx) and updates W from its own gradient (gw). gx is not an ancestor of the update,
 * and the graph lists the update first, so the plain post-order runs the write before gx.
 */
struct MiddleLayer {
  NodeEntry x = Var("x"), w = Variable("W"), dh = Var("dh");
  NodeEntry h = Op("runtime_test_matmul", "h", {x, w});
  NodeEntry gx = Op("runtime_test_matmul", "gx", {dh, w});
  NodeEntry gw = Op("runtime_test_matmul", "gw", {x, dh});
  NodeEntry upd = Op("assign", "upd", {w, Op("runtime_test_add", "w_new", {w, gw})});
  Graph graph{std::vector<NodeEntry>{upd, gx, h}};
};

TEST(OrderMutationsTest, ReadRunsBeforeTheWriteItDoesNotDependOn) {
  MiddleLayer layer;
  ASSERT_GT(IdOf(layer.graph, "gx"), IdOf(layer.graph, "upd"));
  Graph ordered = ApplyPass(layer.graph, "OrderMutations");
  EXPECT_LT(IdOf(ordered, "gx"), IdOf(ordered, "upd"));
  EXPECT_LT(IdOf(ordered, "h"), IdOf(ordered, "upd"));
  const IndexedGraph& idx = ordered.indexed_graph();
  std::vector<std::string> deps;
  for (uint32_t dep : idx[IdOf(ordered, "upd")].control_deps) deps.push_back(idx[dep].source->attrs.name);
  // h and gx get dependencies; w_new already feeds upd.
  EXPECT_EQ(deps, std::vector<std::string>({"gx", "h"}));
}

TEST(OrderMutationsTest, LeavesTheCallersNodesAlone) {
  MiddleLayer layer;
  Graph ordered = ApplyPass(layer.graph, "OrderMutations");
  EXPECT_TRUE(layer.upd.node->control_deps.empty());
  EXPECT_NE(ordered.outputs[0].node, layer.upd.node);
}

TEST(OrderMutationsTest, IsDeterministic) {
  auto ordered_json = [] {
    Graph g = ApplyPass(MiddleLayer().graph, "OrderMutations");
    g.attrs.erase("pass_timings");
    return SaveJSON(g);
  };
  EXPECT_EQ(ordered_json(), ordered_json());
}

TEST(OrderMutationsTest, ReadersOfTheWrittenValueStayAfterTheWrite) {
  NodeEntry w = Variable("W");
  NodeEntry upd = Op("assign", "upd", {w, Var("v")});
  NodeEntry after = Op("runtime_test_scale", "after", {w});
  after.node->control_deps.push_back(upd.node);  // reads W once written: adding upd <- after is a cycle
  NodeEntry through = Op("runtime_test_scale", "through", {upd});
  Graph g({through, after});
  Graph ordered = ApplyPass(g, "OrderMutations");
  EXPECT_EQ(ordered.outputs[0].node, through.node) << "nothing to add: the graph is returned as is";
  EXPECT_LT(IdOf(ordered, "upd"), IdOf(ordered, "after"));
}

TEST(OrderMutationsTest, TwoWritersOfOneVariableAreOrderedOnce) {
  NodeEntry w = Variable("W");
  NodeEntry first = Op("assign_add", "first", {w, Var("a")});
  NodeEntry second = Op("assign_add", "second", {w, Var("b")});
  Graph ordered = ApplyPass(Graph({first, second}), "OrderMutations");
  const IndexedGraph& idx = ordered.indexed_graph();
  uint32_t f = IdOf(ordered, "first"), s = IdOf(ordered, "second");
  // Each reads W; only one direction can be added without a cycle.
  size_t deps = idx[f].control_deps.size() + idx[s].control_deps.size();
  EXPECT_EQ(deps, 1u);
}

TEST(OrderMutationsTest, GraphWithoutWritesIsUnchanged) {
  NodeEntry y = Op("runtime_test_scale", "y", {Var("x")});
  Graph ordered = ApplyPass(Graph({y}), "OrderMutations");
  EXPECT_EQ(ordered.outputs[0].node, y.node);
}

}  // namespace
}  // namespace ir
