#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ir/fusion.h"
#include "ir/pass.h"
#include "runtime/runtime_test_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using runtime_test::Op;
using runtime_test::Var;

/*! \brief InferShape, InferType and PlanMemory with every input float32 of `shape`. */
Graph Planned(std::vector<NodeEntry> outputs, const Shape& shape = Shape({4, 8}), DType dtype = DType::kFloat32) {
  Graph g(std::move(outputs));
  size_t num_inputs = g.indexed_graph().input_nodes().size();
  g.SetAttr("shape_inputs", ShapeVector(num_inputs, shape));
  g.SetAttr("dtype_inputs", DTypeVector(num_inputs, dtype));
  return ApplyPasses(g, {"InferShape", "InferType", "PlanMemory"});
}

const std::vector<int>& StorageId(const Graph& g) { return g.GetAttr<std::vector<int>>("storage_id"); }
const std::vector<int>& Inplace(const Graph& g) { return g.GetAttr<std::vector<int>>("storage_inplace_index"); }
int EntryOf(const Graph& g, const NodeEntry& e) { return static_cast<int>(g.indexed_graph().entry_id(e)); }

/*! \brief Per entry: the node that writes it and its last reader (itself when never read). */
void LiveRanges(const IndexedGraph& idx, std::vector<uint32_t>* def, std::vector<uint32_t>* last) {
  def->assign(idx.num_node_entries(), 0);
  last->assign(idx.num_node_entries(), 0);
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (uint32_t j = 0; j < idx.num_outputs(nid); ++j)
      (*def)[idx.entry_id(nid, j)] = (*last)[idx.entry_id(nid, j)] = nid;
    for (const auto& in : idx[nid].inputs) (*last)[idx.entry_id(in)] = std::max((*last)[idx.entry_id(in)], nid);
  }
}

/*!
 * \brief Checks the plan from its attributes alone: each pooled entry is live from the node
 * that writes it to its last reader and holds arena bytes [storage_offset, + its bytes); two
 * entries live at once must not share a byte, except an output written in place over an input
 * whose last reader is that very node. Offsets are 64-byte aligned and inside the arena.
 */
void ExpectNoLiveOverlap(const Graph& g) {
  const IndexedGraph& idx = g.indexed_graph();
  const auto& sid = StorageId(g);
  const auto& inplace = Inplace(g);
  const auto& offset = g.GetAttr<std::vector<int64_t>>("storage_offset");
  const auto& slot_bytes = g.GetAttr<std::vector<int64_t>>("storage_bytes");
  const auto& shapes = g.GetAttr<ShapeVector>("shape");
  const auto& dtypes = g.GetAttr<DTypeVector>("dtype");
  int64_t arena = g.GetAttr<int64_t>("memory_plan_bytes");
  std::vector<uint32_t> def, last;
  LiveRanges(idx, &def, &last);
  for (const auto& out : idx.outputs()) EXPECT_LT(sid[idx.entry_id(out)], 0) << "graph outputs are never pooled";
  auto bytes = [&](uint32_t e) { return shapes[e].Bytes(dtypes[e]); };
  for (uint32_t a = 0; a < sid.size(); ++a) {
    if (sid[a] < 0) {
      EXPECT_EQ(offset[a], -1);
      continue;
    }
    EXPECT_GE(slot_bytes[sid[a]], bytes(a));
    EXPECT_EQ(offset[a] % 64, 0);
    EXPECT_LE(offset[a] + bytes(a), arena);
    for (uint32_t b = 0; b < sid.size(); ++b) {
      if (a == b || sid[b] < 0 || def[a] > def[b] || last[a] < def[b]) continue;
      if (sid[a] == sid[b]) {
        EXPECT_EQ(offset[a], offset[b]);
      }
      if (offset[a] + bytes(a) <= offset[b] || offset[b] + bytes(b) <= offset[a]) continue;
      bool in_place = last[a] == def[b] && inplace[b] >= 0 && idx.entry_id(idx[def[b]].inputs[inplace[b]]) == a;
      EXPECT_TRUE(in_place) << "entries " << a << " and " << b << " share arena bytes while both live";
    }
  }
}

TEST(PlanMemoryTest, ChainReusesOneSlotInPlace) {
  NodeEntry x = Var("x");
  NodeEntry h = x;
  for (int i = 0; i < 5; ++i) h = Op("runtime_test_scale", "s" + std::to_string(i), {h});
  Graph g = Planned({h});
  // s0 reads a variable (external): new slot; s1..s3 reuse it in place; s4 is the output.
  EXPECT_EQ(g.GetAttr<std::vector<int64_t>>("storage_bytes"), std::vector<int64_t>({4 * 8 * 4}));
  EXPECT_EQ(g.GetAttr<int64_t>("memory_plan_bytes"), 128);
  EXPECT_EQ(g.GetAttr<int64_t>("memory_no_reuse_bytes"), 4 * 128);
  EXPECT_EQ(StorageId(g)[EntryOf(g, x)], -1);
  EXPECT_EQ(StorageId(g)[EntryOf(g, h)], -2);
  ExpectNoLiveOverlap(g);
}

TEST(PlanMemoryTest, LowerBoundIsTheMostBytesLiveAtOnce) {
  // [4,8] float32 = 128 bytes. a and b are live together while c = a + b runs (c in place over
  // one of them): 256 bytes at most, and d = scale(c) in place adds nothing.
  NodeEntry a = Op("runtime_test_scale", "a", {Var("x")});
  NodeEntry b = Op("runtime_test_scale", "b", {Var("y")});
  NodeEntry c = Op("runtime_test_add", "c", {a, b});
  Graph g = Planned({Op("runtime_test_scale", "out", {Op("runtime_test_scale", "d", {c})})});
  EXPECT_EQ(g.GetAttr<int64_t>("memory_lower_bound_bytes"), 256);
  EXPECT_EQ(g.GetAttr<int64_t>("memory_plan_bytes"), 256);
  // A value of a product that is never in place: its inputs and its output are live at once.
  Graph m = Planned({Op("runtime_test_scale", "o",
                        {Op("runtime_test_matmul", "m",
                            {Op("runtime_test_scale", "p", {Var("x")}), Op("runtime_test_scale", "q", {Var("y")})})})},
                    Shape({8, 8}));
  EXPECT_EQ(m.GetAttr<int64_t>("memory_lower_bound_bytes"), 3 * 256);
  EXPECT_GE(m.GetAttr<int64_t>("memory_plan_bytes"), m.GetAttr<int64_t>("memory_lower_bound_bytes"));
}

/*!
 * \brief A fused map node computing `member`(cast(in0) to float32, in1): in0 is a pooled value of
 * `in_shape` and `in_dtype` (a cast of a scale of x), in1 a float32 [6,2] input.
 */
Graph PlannedFusedCast(const Shape& in_shape, DType in_dtype) {
  FusedGroup group;
  NodeEntry in0{Node::CreateVariable("in0"), 0}, in1{Node::CreateVariable("in1"), 0};
  group.subgraph = Graph({Op("add", "add", {Op("cast", "cast", {in0}, {{"dtype", "float32"}}), in1})});
  NodeEntry value =
      Op("runtime_test_cast", "value", {Op("runtime_test_scale", "s", {Var("x")})}, {{"dtype", DTypeName(in_dtype)}});
  NodeEntry fused = Op("_fused", "fused", {value, Var("y")}, group.ToAttrs());
  Graph g({Op("runtime_test_scale", "out", {fused})});
  g.SetAttr("shape_inputs", ShapeVector{in_shape, Shape({6, 2})});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32, DType::kFloat32});
  return ApplyPasses(g, {"InferShape", "InferType", "PlanMemory"});
}

/*! \brief The input index output 0 of node `name` reuses in place, or -1. */
int InplaceOf(const Graph& g, const std::string& name) {
  const IndexedGraph& idx = g.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (idx[nid].source->attrs.name == name) return Inplace(g)[idx.entry_id(nid, 0)];
  }
  return -2;
}

TEST(PlanMemoryTest, FusedMapNodesReuseOnlyAnInputOfTheOutputsShapeAndDType) {
  EXPECT_EQ(InplaceOf(PlannedFusedCast({6, 2}, DType::kFloat32), "fused"), 0);
  // Equal bytes are not enough: int64 [6,1] is broadcast into float32 [6,2], int32 [6,2] converted.
  EXPECT_EQ(InplaceOf(PlannedFusedCast({6, 1}, DType::kInt64), "fused"), -1);
  EXPECT_EQ(InplaceOf(PlannedFusedCast({6, 2}, DType::kInt32), "fused"), -1);
}

TEST(PlanMemoryTest, InPlaceOnlyWhenTheInputDiesHere) {
  NodeEntry x = Var("x");
  NodeEntry a = Op("runtime_test_scale", "a", {x});
  NodeEntry b = Op("runtime_test_scale", "b", {a});   // a is still read by c: not in place
  NodeEntry c = Op("runtime_test_add", "c", {a, b});  // last use of a and b: in place
  NodeEntry d = Op("runtime_test_scale", "d", {c});
  Graph g = Planned({d});
  const auto& sid = StorageId(g);
  const auto& inplace = Inplace(g);
  EXPECT_EQ(inplace[EntryOf(g, b)], -1);
  EXPECT_NE(sid[EntryOf(g, b)], sid[EntryOf(g, a)]);
  EXPECT_EQ(inplace[EntryOf(g, c)], 0);
  EXPECT_EQ(sid[EntryOf(g, c)], sid[EntryOf(g, a)]);
  ExpectNoLiveOverlap(g);
}

TEST(PlanMemoryTest, NoInPlaceOverAGraphOutput) {
  NodeEntry x = Var("x");
  NodeEntry a = Op("runtime_test_scale", "a", {x});
  NodeEntry b = Op("runtime_test_scale", "b", {a});
  Graph g = Planned({a, b});
  EXPECT_EQ(StorageId(g)[EntryOf(g, a)], -2);
  EXPECT_EQ(Inplace(g)[EntryOf(g, b)], -1);
}

TEST(PlanMemoryTest, SizesFollowTheDType) {
  NodeEntry x = Var("x");
  NodeEntry a = Op("runtime_test_cast", "a", {x}, {{"dtype", "float64"}});
  NodeEntry b = Op("runtime_test_cast", "b", {a}, {{"dtype", "bool"}});
  NodeEntry c = Op("runtime_test_cast", "c", {b}, {{"dtype", "int64"}});
  NodeEntry d = Op("runtime_test_cast", "d", {c}, {{"dtype", "float32"}});
  Graph g = Planned({d}, Shape({3, 5}));
  // a: 15 float64 = 120 bytes; b: 15 bools while a is live; c reuses a's freed slot. Offsets
  // would not be smaller, so the slots stay, end to end at 64-byte offsets: 128 + 15 bytes.
  EXPECT_EQ(g.GetAttr<std::vector<int64_t>>("storage_bytes"), std::vector<int64_t>({120, 15}));
  EXPECT_EQ(StorageId(g)[EntryOf(g, c)], StorageId(g)[EntryOf(g, a)]);
  EXPECT_EQ(g.GetAttr<int64_t>("memory_plan_bytes"), 128 + 15);
  EXPECT_EQ(g.GetAttr<int64_t>("memory_no_reuse_bytes"), 120 + 15 + 120);
  ExpectNoLiveOverlap(g);
}

/*! \brief A random DAG of chains and diamonds over a few dtypes. */
std::vector<NodeEntry> RandomGraph(std::mt19937* rng) {
  std::vector<NodeEntry> pool{Var("x"), Var("y")};
  int n = 5 + static_cast<int>((*rng)() % 30);
  for (int i = 0; i < n; ++i) {
    auto pick = [&] {
      // Prefer recent entries: long chains with occasional long-lived values.
      size_t back = std::min<size_t>(pool.size() - 1, (*rng)() % 4 == 0 ? (*rng)() % pool.size() : (*rng)() % 3);
      return pool[pool.size() - 1 - back];
    };
    std::string name = "n" + std::to_string(i);
    switch ((*rng)() % 4) {
      case 0:
        pool.push_back(Op("runtime_test_scale", name, {pick()}));
        break;
      case 1:
        pool.push_back(Op("runtime_test_add", name, {pick(), pick()}));
        break;
      case 2: {
        NodeEntry wide = Op("runtime_test_cast", name + "_wide", {pick()}, {{"dtype", "float64"}});
        pool.push_back(
            Op("runtime_test_cast", name, {Op("runtime_test_scale", name + "_s", {wide})}, {{"dtype", "float32"}}));
        break;
      }
      default:
        pool.push_back(Op("runtime_test_add", name, {pick(), pick()}));
        break;
    }
  }
  std::vector<NodeEntry> outputs{pool.back()};
  if ((*rng)() % 2) outputs.push_back(pool[2 + (*rng)() % (pool.size() - 2)]);
  return outputs;
}

TEST(PlanMemoryTest, RandomGraphsNeverShareLiveMemoryAndReuseSome) {
  std::mt19937 rng(7);
  int reused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Graph g = Planned(RandomGraph(&rng));
    SCOPED_TRACE(trial);
    ExpectNoLiveOverlap(g);
    int64_t plan = g.GetAttr<int64_t>("memory_plan_bytes"), no_reuse = g.GetAttr<int64_t>("memory_no_reuse_bytes");
    EXPECT_LE(plan, no_reuse);
    EXPECT_GE(plan, g.GetAttr<int64_t>("memory_lower_bound_bytes"));
    reused += plan < no_reuse;
  }
  EXPECT_GT(reused, 30);
}

TEST(PlanMemoryTest, RandomGraphsOfOddSizesNeverShareLiveMemory) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    Graph g = Planned(RandomGraph(&rng), Shape({3, 5 + trial % 7}));
    SCOPED_TRACE(trial);
    ExpectNoLiveOverlap(g);
    EXPECT_GE(g.GetAttr<int64_t>("memory_plan_bytes"), g.GetAttr<int64_t>("memory_lower_bound_bytes"));
  }
}

TEST(PlanMemoryTest, OffsetsPackWhereSlotsFragment) {
  // [8,8]: a float64 = 512 bytes, then b, c, d float32 = 256 each. Slots: c takes a's freed
  // 512-byte slot and d, live with b and c, a third: 1024 bytes. Offsets put c and d in a's
  // bytes: 768, the most live at once (a + b, or b + c + d).
  NodeEntry a = Op("runtime_test_cast", "a", {Var("x")}, {{"dtype", "float64"}});
  NodeEntry b = Op("runtime_test_cast", "b", {a}, {{"dtype", "float32"}});
  NodeEntry c = Op("runtime_test_matmul", "c", {b, b});
  NodeEntry d = Op("runtime_test_matmul", "d", {b, c});
  Graph g = Planned({Op("runtime_test_scale", "out", {d})}, Shape({8, 8}));
  EXPECT_EQ(g.GetAttr<int64_t>("memory_lower_bound_bytes"), 768);
  EXPECT_EQ(g.GetAttr<int64_t>("memory_plan_bytes"), 768);
  const auto& offset = g.GetAttr<std::vector<int64_t>>("storage_offset");
  EXPECT_EQ(offset[EntryOf(g, a)], 0);
  EXPECT_EQ(offset[EntryOf(g, b)], 512);
  EXPECT_LT(offset[EntryOf(g, c)], 512);
  EXPECT_LT(offset[EntryOf(g, d)], 512);
  ExpectNoLiveOverlap(g);
}

TEST(PlanMemoryTest, MutatedVariableAliasIsExternal) {
  NodeEntry w = Var("w");
  NodeEntry upd = Op("assign", "upd", {w, Op("runtime_test_scale", "v", {Var("x")})});
  Graph g = Planned({Op("runtime_test_scale", "r", {upd})});
  EXPECT_EQ(StorageId(g)[EntryOf(g, upd)], -1);
  EXPECT_EQ(Inplace(g)[EntryOf(g, upd)], 0);
  EXPECT_EQ(StorageId(g)[EntryOf(g, w)], -1);
}

TEST(PlanMemoryTest, WritingAnIntermediateIsAnError) {
  NodeEntry a = Op("runtime_test_scale", "a", {Var("x")});
  EXPECT_ERROR(Planned({Op("assign", "bad", {a, Var("v")})}),
               "node 'bad' (op assign) writes its input 0, which must be a variable");
}

TEST(PlanMemoryTest, UnknownShapeNamesTheNode) {
  Graph g(std::vector<NodeEntry>{Op("runtime_test_scale", "s", {Var("x")})});
  g.SetAttr("shape_inputs", ShapeVector{Shape({kUnknownDim, 10})});
  g.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32});
  EXPECT_ERROR(ApplyPasses(g, {"InferShape", "InferType", "PlanMemory"}),
               "unknown shape at node 'x' (variable): output 0 is [?,10]; feed or annotate its inputs");
}

TEST(PlanMemoryTest, NeedsShapesFirst) {
  EXPECT_ERROR(ApplyPass(Graph({Op("runtime_test_scale", "s", {Var("x")})}), "PlanMemory"),
               "pass 'PlanMemory' needs graph attribute 'shape'");
}

}  // namespace
}  // namespace ir
