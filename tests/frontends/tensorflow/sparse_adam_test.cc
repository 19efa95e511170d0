/*!
 * \file sparse_adam_test.cc
 * \brief The TF1 sparse embedding update of tf.train.AdamOptimizer, written by hand in the layout
 * TF 1.15 gives it (tf.nn.embedding_lookup on a VariableV2, the IndexedSlices gradient of its
 * GatherV2, optimizer.py's _deduplicate_indexed_slices and adam.py's _apply_sparse_shared): the
 * segment count of UnsortedSegmentSum is Shape(Unique)[0], known only when the graph runs. Training
 * steps are checked against an independent dense reimplementation of the update.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "ir/op.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

constexpr int64_t kVocab = 6, kDim = 3, kIds = 5;
constexpr double kLr = 0.1, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

std::string Loc(const std::string& node) { return Attr("_class", "list { s: 'loc:@" + node + "' }"); }
std::string Int(const std::string& key, int64_t v) { return Attr(key, "i: " + std::to_string(v)); }
std::string Bool(const std::string& key, bool v) { return Attr(key, v ? "b: true" : "b: false"); }
std::string Scalar(const std::string& name, double value) { return Const(name, {}, {value}); }

/*! \brief A VariableV2 with its `/read` Identity and an `/Assign` from `init` (a node name). */
std::string RefVariable(const std::string& name, const std::vector<int64_t>& dims, const std::string& init) {
  return Variable(name, dims) + Node(name + "/Assign", "Assign", {name, init}, Type() + Loc(name)) +
         Node(name + "/read", "Identity", {name}, Type() + Loc(name));
}

/*! \brief StridedSlice(input, [b], [e], [1]) named `name` with the masks given. */
std::string Slice1(const std::string& name, const std::string& input, int64_t b, int64_t e, int64_t begin_mask,
                   int64_t end_mask, int64_t shrink) {
  return Ints(name + "/stack", {b}) + Ints(name + "/stack_1", {e}) + Ints(name + "/stack_2", {1}) +
         Node(name, "StridedSlice", {input, name + "/stack", name + "/stack_1", name + "/stack_2"},
              Type("DT_INT32") + Type("DT_INT32", "Index") + Int("begin_mask", begin_mask) + Int("end_mask", end_mask) +
                  Int("ellipsis_mask", 0) + Int("new_axis_mask", 0) + Int("shrink_axis_mask", shrink));
}

/*! \brief Variables, their initializers and the forward pass: loss = mean((embedding_lookup(ids) - target)^2). */
std::string Forward(const std::vector<double>& table) {
  std::vector<double> zeros(kVocab * kDim, 0.0);
  return Placeholder("ids", {kIds}, "DT_INT32") + Placeholder("target", {kIds, kDim}) +
         Const("embedding/initial_value", {kVocab, kDim}, table) +
         RefVariable("embedding", {kVocab, kDim}, "embedding/initial_value") +
         Scalar("beta1_power/initial_value", kBeta1) + RefVariable("beta1_power", {}, "beta1_power/initial_value") +
         Scalar("beta2_power/initial_value", kBeta2) + RefVariable("beta2_power", {}, "beta2_power/initial_value") +
         Const("embedding/Adam/Initializer/zeros", {kVocab, kDim}, zeros) +
         RefVariable("embedding/Adam", {kVocab, kDim}, "embedding/Adam/Initializer/zeros") +
         Const("embedding/Adam_1/Initializer/zeros", {kVocab, kDim}, zeros) +
         RefVariable("embedding/Adam_1", {kVocab, kDim}, "embedding/Adam_1/Initializer/zeros") +
         Node("init", "NoOp",
              {"^embedding/Assign", "^beta1_power/Assign", "^beta2_power/Assign", "^embedding/Adam/Assign",
               "^embedding/Adam_1/Assign"}) +
         Ints("embedding_lookup/axis", {0}, true) +
         Node("embedding_lookup", "GatherV2", {"embedding/read", "ids", "embedding_lookup/axis"},
              Type("DT_INT32", "Taxis") + Type("DT_INT32", "Tindices") + Type("DT_FLOAT", "Tparams") +
                  Int("batch_dims", 0) + Loc("embedding")) +
         Node("embedding_lookup/Identity", "Identity", {"embedding_lookup"}, Type()) +
         Node("sub", "Sub", {"embedding_lookup/Identity", "target"}, Type()) +
         Node("Square", "Square", {"sub"}, Type()) + Ints("Const", {0, 1}) +
         Node("Mean", "Mean", {"Square", "Const"}, Type() + Type("DT_INT32", "Tidx") + Bool("keep_dims", false));
}

/*! \brief tf.gradients(loss, embedding): the dense part, then GatherV2's IndexedSlices (values, indices). */
std::string Gradients() {
  const std::string g = "gradients/embedding_lookup_grad/";
  return Const("gradients/Shape", {0}, {}, "DT_INT32", "int_val") + Scalar("gradients/grad_ys_0", 1) +
         Node("gradients/Fill", "Fill", {"gradients/Shape", "gradients/grad_ys_0"},
              Type() + Type("DT_INT32", "index_type")) +
         Ints("gradients/Mean_grad/Reshape/shape", {1, 1}) +
         Node("gradients/Mean_grad/Reshape", "Reshape", {"gradients/Fill", "gradients/Mean_grad/Reshape/shape"},
              Type() + Type("DT_INT32", "Tshape")) +
         Ints("gradients/Mean_grad/Const", {kIds, kDim}) +
         Node("gradients/Mean_grad/Tile", "Tile", {"gradients/Mean_grad/Reshape", "gradients/Mean_grad/Const"},
              Type() + Type("DT_INT32", "Tmultiples")) +
         Scalar("gradients/Mean_grad/Const_1", kIds * kDim) +
         Node("gradients/Mean_grad/truediv", "RealDiv", {"gradients/Mean_grad/Tile", "gradients/Mean_grad/Const_1"},
              Type()) +
         Node("gradients/Square_grad/Const", "Const", {"^gradients/Mean_grad/truediv"},
              Type("DT_FLOAT", "dtype") + Attr("value", "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 }")) +
         Node("gradients/Square_grad/Mul", "Mul", {"sub", "gradients/Square_grad/Const"}, Type()) +
         Node("gradients/Square_grad/Mul_1", "Mul", {"gradients/Mean_grad/truediv", "gradients/Square_grad/Mul"},
              Type()) +
         Node("gradients/sub_grad/Neg", "Neg", {"gradients/Square_grad/Mul_1"}, Type()) +
         Node("gradients/sub_grad/tuple/group_deps", "NoOp",
              {"^gradients/Square_grad/Mul_1", "^gradients/sub_grad/Neg"}) +
         Node("gradients/sub_grad/tuple/control_dependency", "Identity",
              {"gradients/Square_grad/Mul_1", "^gradients/sub_grad/tuple/group_deps"},
              Type() + Loc("gradients/Square_grad/Mul_1")) +
         Node(g + "Shape", "Const", {},
              Type("DT_INT64", "dtype") + Loc("embedding") +
                  Attr("value", "tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: " +
                                    std::to_string(kVocab) + " int64_val: " + std::to_string(kDim) + " }")) +
         Node(g + "Cast", "Cast", {g + "Shape"},
              Type("DT_INT64", "SrcT") + Type("DT_INT32", "DstT") + Bool("Truncate", false) + Loc("embedding")) +
         Node(g + "Size", "Size", {"ids"}, Type("DT_INT32") + Type("DT_INT32", "out_type")) +
         Ints(g + "ExpandDims/dim", {0}, true) +
         Node(g + "ExpandDims", "ExpandDims", {g + "Size", g + "ExpandDims/dim"},
              Type("DT_INT32") + Type("DT_INT32", "Tdim")) +
         Slice1(g + "strided_slice", g + "Cast", 1, 0, 0, 1, 0) + Ints(g + "concat/axis", {0}, true) +
         Node(g + "concat", "ConcatV2", {g + "ExpandDims", g + "strided_slice", g + "concat/axis"},
              Type("DT_INT32") + Int("N", 2) + Type("DT_INT32", "Tidx")) +
         Node(g + "Reshape", "Reshape", {"gradients/sub_grad/tuple/control_dependency", g + "concat"},
              Type() + Type("DT_INT32", "Tshape")) +
         Node(g + "Reshape_1", "Reshape", {"ids", g + "ExpandDims"}, Type("DT_INT32") + Type("DT_INT32", "Tshape"));
}

/*! \brief AdamOptimizer.apply_gradients on the IndexedSlices: dedup, _apply_sparse_shared, _finish. */
std::string AdamSparse() {
  const std::string u = "Adam/update_embedding/";
  auto mul = [&](const std::string& name, const std::string& a, const std::string& b) {
    return Node(u + name, "Mul", {a, b}, Type());
  };
  auto one_minus = [&](const std::string& name, const std::string& x) {
    return Scalar(u + name + "/x", 1) + Node(u + name, "Sub", {u + name + "/x", x}, Type());
  };
  auto assign = [&](const std::string& name, const std::string& var, const std::string& value) {
    return Node(name, "Assign", {var, value},
                Type() + Bool("use_locking", false) + Bool("validate_shape", true) + Loc(var));
  };
  auto scatter_add = [&](const std::string& name, const std::string& var, const std::string& value,
                         const std::string& after) {
    return Node(u + name, "ScatterAdd", {var, u + "Unique", value, "^" + after},
                Type() + Type("DT_INT32", "Tindices") + Bool("use_locking", false) + Loc(var));
  };
  return Scalar("Adam/learning_rate", kLr) + Scalar("Adam/beta1", kBeta1) + Scalar("Adam/beta2", kBeta2) +
         Scalar("Adam/epsilon", kEps) +
         Node(u + "Unique", "Unique", {"gradients/embedding_lookup_grad/Reshape_1"},
              Type("DT_INT32") + Type("DT_INT32", "out_idx") + Loc("embedding")) +
         Node(u + "Shape", "Shape", {u + "Unique"},
              Type("DT_INT32") + Type("DT_INT32", "out_type") + Loc("embedding")) +
         Slice1(u + "strided_slice", u + "Shape", 0, 1, 0, 0, 1) +
         Node(u + "UnsortedSegmentSum", "UnsortedSegmentSum",
              {"gradients/embedding_lookup_grad/Reshape", u + "Unique:1", u + "strided_slice"},
              Type() + Type("DT_INT32", "Tindices") + Type("DT_INT32", "Tnumsegments") + Loc("embedding")) +
         one_minus("sub", "beta2_power/read") + Node(u + "Sqrt", "Sqrt", {u + "sub"}, Type()) +
         mul("mul", "Adam/learning_rate", u + "Sqrt") + one_minus("sub_1", "beta1_power/read") +
         Node(u + "truediv", "RealDiv", {u + "mul", u + "sub_1"}, Type()) + one_minus("sub_2", "Adam/beta1") +
         mul("mul_1", u + "UnsortedSegmentSum", u + "sub_2") + mul("mul_2", "embedding/Adam/read", "Adam/beta1") +
         assign(u + "Assign", "embedding/Adam", u + "mul_2") +
         scatter_add("ScatterAdd", "embedding/Adam", u + "mul_1", u + "Assign") +
         mul("mul_3", u + "UnsortedSegmentSum", u + "UnsortedSegmentSum") + one_minus("sub_3", "Adam/beta2") +
         mul("mul_4", u + "mul_3", u + "sub_3") + mul("mul_5", "embedding/Adam_1/read", "Adam/beta2") +
         assign(u + "Assign_1", "embedding/Adam_1", u + "mul_5") +
         scatter_add("ScatterAdd_1", "embedding/Adam_1", u + "mul_4", u + "Assign_1") +
         Node(u + "Sqrt_1", "Sqrt", {u + "ScatterAdd_1"}, Type()) + mul("mul_6", u + "truediv", u + "ScatterAdd") +
         Node(u + "add", "Add", {u + "Sqrt_1", "Adam/epsilon"}, Type()) +
         Node(u + "truediv_1", "RealDiv", {u + "mul_6", u + "add"}, Type()) +
         Node(u + "AssignSub", "AssignSub", {"embedding", u + "truediv_1"},
              Type() + Bool("use_locking", false) + Loc("embedding")) +
         Node(u + "group_deps", "NoOp", {"^" + u + "AssignSub", "^" + u + "ScatterAdd", "^" + u + "ScatterAdd_1"}) +
         Node("Adam/mul", "Mul", {"beta1_power/read", "Adam/beta1", "^" + u + "group_deps"},
              Type() + Loc("embedding")) +
         assign("Adam/Assign", "beta1_power", "Adam/mul") +
         Node("Adam/mul_1", "Mul", {"beta2_power/read", "Adam/beta2", "^" + u + "group_deps"},
              Type() + Loc("embedding")) +
         assign("Adam/Assign_1", "beta2_power", "Adam/mul_1") +
         Node("Adam", "NoOp", {"^" + u + "group_deps", "^Adam/Assign", "^Adam/Assign_1"});
}

/*! \brief The optimizer's state, updated by the dense reference below. */
struct AdamState {
  std::vector<double> table, m, v;
  double beta1_power = kBeta1, beta2_power = kBeta2;
};

/*!
 * \brief One step of Adam's sparse update by its definition: the gradient of mean((E[ids] - t)^2)
 * summed per distinct row; m and v decay everywhere and take the summed rows; then every row of E
 * moves by its m / sqrt(v) (not only the rows looked up: tf.train.AdamOptimizer is not lazy).
 */
void ReferenceStep(AdamState* s, const std::vector<int>& ids, const std::vector<double>& target) {
  std::map<int, std::vector<double>> grad;  // distinct row -> summed gradient
  for (int64_t k = 0; k < kIds; ++k) {
    std::vector<double>& row = grad.emplace(ids[k], std::vector<double>(kDim, 0.0)).first->second;
    for (int64_t d = 0; d < kDim; ++d) {
      row[d] += 2.0 * (s->table[ids[k] * kDim + d] - target[k * kDim + d]) / (kIds * kDim);
    }
  }
  double lr = kLr * std::sqrt(1 - s->beta2_power) / (1 - s->beta1_power);
  for (double& x : s->m) x *= kBeta1;
  for (double& x : s->v) x *= kBeta2;
  for (const auto& kv : grad) {
    for (int64_t d = 0; d < kDim; ++d) {
      size_t at = static_cast<size_t>(kv.first * kDim + d);
      s->m[at] += (1 - kBeta1) * kv.second[d];
      s->v[at] += (1 - kBeta2) * kv.second[d] * kv.second[d];
    }
  }
  for (size_t at = 0; at < s->table.size(); ++at) s->table[at] -= lr * s->m[at] / (std::sqrt(s->v[at]) + kEps);
  s->beta1_power *= kBeta1;
  s->beta2_power *= kBeta2;
}

/*!
 * \brief The training step's plan is dynamic (the deduplicated rows are counted as it runs), yet the
 * nodes of known shapes (the dense Adam arithmetic and its assigns) are fused.
 */
void ExpectPartlyFused(const Graph& bound, bool fusion) {
  int fused = 0, dynamic = 0;
  const IndexedGraph& idx = bound.indexed_graph();
  const ShapeVector& shapes = bound.GetAttr<ShapeVector>("shape");
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (idx[nid].source->is_variable()) continue;
    fused += idx[nid].source->op()->name == "_fused";
    dynamic += !shapes[idx.entry_id(nid, 0)].is_known();
  }
  EXPECT_GT(dynamic, 0) << "the segment sum's rows should be known only when the step runs";
  if (fusion) {
    EXPECT_GE(fused, 2) << "the statically shaped updates should be fused";
  } else {
    EXPECT_EQ(fused, 0);
  }
}

TEST(TFSparseAdamTest, EmbeddingUpdateWithRunTimeSegmentCountMatchesTheReference) {
  std::vector<double> table;
  for (int64_t i = 0; i < kVocab * kDim; ++i) table.push_back(0.1 * static_cast<double>(i % 7) - 0.3);
  std::string graph = Forward(table) + Gradients() + AdamSparse();
  // Two batches with repeated ids (the dedup sums their rows) and different distinct counts.
  std::vector<std::vector<int>> batches = {{1, 4, 1, 0, 4}, {5, 5, 5, 2, 3}};
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    SessionOptions options;
    options.fusion = fusion;
    TFSession session(test::TextModel(graph), options);
    session.Run({}, {}, {"init"});
    AdamState state{table, std::vector<double>(table.size(), 0.0), std::vector<double>(table.size(), 0.0)};
    for (int step = 0; step < 4; ++step) {
      const std::vector<int>& ids = batches[step % 2];
      std::vector<float> target;
      for (int64_t i = 0; i < kIds * kDim; ++i) target.push_back(0.05f * static_cast<float>((i * 5 + step) % 9));
      session.Run({{"ids", NDArray::FromVector<int32_t>(Shape{kIds}, std::vector<int32_t>(ids.begin(), ids.end()))},
                   {"target", NDArray::FromVector<float>(Shape{kIds, kDim}, target)}},
                  {}, {"Adam"});
      ReferenceStep(&state, ids, std::vector<double>(target.begin(), target.end()));
      if (step == 0) ExpectPartlyFused(session.session().last_graph(), fusion);
    }
    std::vector<NDArray> got = session.Run({}, {"embedding", "embedding/Adam", "embedding/Adam_1", "beta1_power"});
    ExpectClose(got[0], state.table, "embedding", 1e-5, 1e-4);
    ExpectClose(got[1], state.m, "embedding/Adam (m)", 1e-6, 1e-4);
    ExpectClose(got[2], state.v, "embedding/Adam_1 (v)", 1e-8, 1e-4);
    ExpectClose(got[3], {state.beta1_power}, "beta1_power", 1e-6, 1e-5);
  }
}

}  // namespace
}  // namespace tf
}  // namespace ir
