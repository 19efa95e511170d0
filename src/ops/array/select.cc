/*!
 * \file select.cc
 * \brief Ops that pick or reorder elements by value: unique (tf.unique), argwhere (tf.where with
 * one argument: coordinates of the true elements), invert_permutation (tf.invert_permutation)
 * and random_shuffle (tf.random_shuffle along axis 0).
 *
 * unique's and argwhere's output sizes are values: their kernels (FComputeShaped) allocate the
 * outputs when they run, and the executor plans the graph dynamically.
 */
#include <numeric>
#include <string>
#include <unordered_map>

#include "ops/index_util.h"
#include "ops/random_utils.h"

namespace ir {
namespace op {
namespace {

struct UniqueParam : public dmlc::Parameter<UniqueParam> {
  DType out_idx;
  DMLC_DECLARE_PARAMETER(UniqueParam) {
    DMLC_DECLARE_FIELD(out_idx).set_default(DType::kInt32).describe("dtype of idx: int32 or int64.");
  }
};

struct ShuffleParam : public dmlc::Parameter<ShuffleParam> {
  int seed;
  DMLC_DECLARE_PARAMETER(ShuffleParam) {
    DMLC_DECLARE_FIELD(seed).set_default(0).describe("Op seed, combined with the run's seed.");
  }
};

DMLC_REGISTER_PARAMETER(UniqueParam);
DMLC_REGISTER_PARAMETER(ShuffleParam);

/*! \brief A host copy of `a` (a view when it already is on the host). */
NDArray OnHost(const NDArray& a) { return a.device().type == DeviceType::kCPU ? a : a.CopyTo(Device::CPU()); }
/*! \brief `a` moved to the run's device. */
NDArray OnDevice(const OpContext& ctx, const NDArray& a) {
  return ctx.device.type == DeviceType::kCPU ? a : a.CopyTo(ctx.device);
}

/*! \brief Throws unless input `what` is a vector (or of unknown rank). */
void CheckVector(const NodeAttrs& attrs, const char* what, const Shape& shape) {
  IR_CHECK(!shape.rank_known() || shape.ndim() == 1)
      << NodeDesc(attrs) << ": " << what << " must be a vector, got shape " << shape;
}

// ---------------------------------------------------------------- unique

bool UniqueShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckVector(attrs, "x", (*in)[0]);
  AssignShape(attrs, "output 0", &(*out)[0], Shape::UnknownDims(1));
  AssignShape(attrs, "output 1", &(*out)[1], (*in)[0]);
  return false;  // the number of unique values is known only when it runs
}

bool UniqueType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType idx = dmlc::get<UniqueParam>(attrs.parsed).out_idx;
  CheckDType(attrs, "attribute 'out_idx'", idx, IndexDTypes());
  AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
  AssignType(attrs, "input 0", &(*in)[0], (*out)[0]);
  AssignType(attrs, "output 1", &(*out)[1], idx);
  return AllKnown(*in, *out);
}

std::vector<NDArray> UniqueCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  NDArray x = OnHost(in[0]);
  int64_t n = x.Size();
  NDArray idx(Shape{n}, dmlc::get<UniqueParam>(attrs.parsed).out_idx, Device::CPU());
  NDArray y;
  IR_ALL_TYPES_SWITCH(x.dtype(), DT, {
    const DT* src = x.data<DT>();
    std::unordered_map<DT, int64_t> first;
    std::vector<DT> values;
    for (int64_t i = 0; i < n; ++i) {
      auto it = first.emplace(src[i], static_cast<int64_t>(values.size())).first;
      if (it->second == static_cast<int64_t>(values.size())) values.push_back(src[i]);
      if (idx.dtype() == DType::kInt32) {
        idx.data<int32_t>()[i] = static_cast<int32_t>(it->second);
      } else {
        idx.data<int64_t>()[i] = it->second;
      }
    }
    y = NDArray(Shape{static_cast<int64_t>(values.size())}, x.dtype(), Device::CPU());
    std::copy(values.begin(), values.end(), y.data<DT>());
  });
  return {OnDevice(ctx, y), OnDevice(ctx, idx)};
}

// ---------------------------------------------------------------- argwhere

bool ArgwhereShape(const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  if ((*in)[0].rank_known()) (*out)[0] = Shape{kUnknownDim, (*in)[0].ndim()};
  return false;  // the number of true elements is known only when it runs
}

std::vector<NDArray> ArgwhereCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<NDArray>& in) {
  NDArray cond = OnHost(in[0]);
  const Shape& shape = cond.shape();
  std::vector<int64_t> coords;
  IR_ALL_TYPES_SWITCH(cond.dtype(), DT, {
    const DT* src = cond.data<DT>();
    for (int64_t i = 0; i < cond.Size(); ++i) {
      if (src[i] == DT(0)) continue;
      size_t at = coords.size();
      coords.resize(at + shape.ndim());
      for (int64_t d = shape.ndim() - 1, rem = i; d >= 0; --d) {
        coords[at + d] = rem % shape[d];
        rem /= shape[d];
      }
    }
  });
  int64_t rank = shape.ndim(), count = rank > 0 ? static_cast<int64_t>(coords.size()) / rank : 0;
  if (rank == 0) {  // a scalar: one coordinate-less row when it is true
    IR_ALL_TYPES_SWITCH(cond.dtype(), DT, { count = cond.data<DT>()[0] != DT(0) ? 1 : 0; });
  }
  return {OnDevice(ctx, NDArray::FromVector<int64_t>(Shape{count, rank}, coords))};
}

// ---------------------------------------------------------------- invert_permutation

bool InvertShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  CheckVector(attrs, "x", (*in)[0]);
  return ElemwiseShape(attrs, in, out);
}

bool InvertType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "x", (*in)[0]);
  return ElemwiseType(attrs, in, out);
}

void InvertCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  std::vector<int64_t> perm = ReadIndices(in[0]);
  int64_t n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> inverse(perm.size(), -1);
  for (int64_t i = 0; i < n; ++i) {
    IR_CHECK(0 <= perm[i] && perm[i] < n)
        << NodeDesc(attrs) << ": x[" << i << "] = " << perm[i] << " is not in [0, " << n << ")";
    IR_CHECK(inverse[perm[i]] < 0) << NodeDesc(attrs) << ": " << perm[i] << " is duplicated in the input";
    inverse[perm[i]] = i;
  }
  IR_NUMERIC_SWITCH(out[0].dtype(), DT, { std::copy(inverse.begin(), inverse.end(), out[0].data<DT>()); });
}

// ---------------------------------------------------------------- random_shuffle

bool ShuffleShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  return ElemwiseShape(attrs, in, out);
}

/*! \brief A Fisher-Yates shuffle of the rows (axis 0) drawn from the node's key. */
void ShuffleCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int64_t rows = shape.ndim() == 0 ? 1 : shape[0], inner = rows == 0 ? 0 : in[0].Size() / rows;
  uint64_t key = random::CombineSeeds(ctx.seed, static_cast<uint64_t>(dmlc::get<ShuffleParam>(attrs.parsed).seed));
  std::vector<int64_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = rows - 1; i > 0; --i) {
    random::Words w = random::WordsAt(key, static_cast<uint64_t>(i));
    uint64_t draw = (static_cast<uint64_t>(w[0]) << 32) | w[1];
    std::swap(order[i], order[draw % static_cast<uint64_t>(i + 1)]);
  }
  IR_ALL_TYPES_SWITCH(in[0].dtype(), DT, {
    const DT* src = in[0].data<DT>();
    DT* dst = out[0].data<DT>();
    for (int64_t r = 0; r < rows; ++r) std::copy_n(src + order[r] * inner, inner, dst + r * inner);
  });
}

}  // namespace

IR_REGISTER_OP(unique)
    .describe(
        "The distinct values of a vector in order of first occurrence, and each element's position "
        "among them (tf.unique).")
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_input_names({"x"})
    .set_param<UniqueParam>()
    .set_attr<FInferShape>("FInferShape", UniqueShape)
    .set_attr<FInferType>("FInferType", UniqueType)
    .set_attr<FComputeShaped>("FComputeShaped", UniqueCompute)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(argwhere)
    .describe(
        "Coordinates (int64, [num_true, rank]) of the nonzero elements in row-major order "
        "(tf.where with one argument).")
    .set_num_inputs(1)
    .set_input_names({"condition"})
    .set_attr<FInferShape>("FInferShape", ArgwhereShape)
    .set_attr<FInferType>("FInferType", [](const NodeAttrs&, std::vector<DType>* in,
                                           std::vector<DType>* out) { return OutputsAre(DType::kInt64, in, out); })
    .set_attr<FComputeShaped>("FComputeShaped", ArgwhereCompute)
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(invert_permutation)
    .describe("The inverse of a permutation vector: y[x[i]] = i (tf.invert_permutation).")
    .set_num_inputs(1)
    .set_input_names({"x"})
    .set_attr<FInferShape>("FInferShape", InvertShape)
    .set_attr<FInferType>("FInferType", InvertType)
    .set_attr<FCompute>("FCompute", InvertCompute)
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(random_shuffle)
    .describe("The value with its rows (axis 0) in a random order drawn from the seed (tf.random_shuffle).")
    .set_num_inputs(1)
    .set_input_names({"value"})
    .set_param<ShuffleParam>()
    .set_attr<FInferShape>("FInferShape", ShuffleShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", ShuffleCompute)
    .set_attr<TIsStateful>("TIsStateful", true)
    .set_attr<TReplayable>("TReplayable", true)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
