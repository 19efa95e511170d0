/*!
 * \file state_scatter.cc
 * \brief Sparse updates of a variable's rows: scatter_update, scatter_add, scatter_sub
 * (tf.scatter_update / scatter_add / scatter_sub: ref[indices[i], ...] = / += / -= updates[i, ...]).
 *
 * Like assign (state.cc) they mutate input 0 (FMutateInputs) and their output aliases it
 * (FInplaceOption), so the variable is written in place; gradients never flow through them.
 * updates has shape indices.shape + ref.shape[1:]; an index outside [0, ref.shape[0]) is an
 * error, as TensorFlow's CPU kernel reports.
 */
#include <string>

#include "ops/index_util.h"

namespace ir {
namespace op {
namespace {

std::vector<uint32_t> MutatesRef(const NodeAttrs&) { return {0}; }
std::vector<std::pair<int, int>> OutputIsRef(const NodeAttrs&) { return {{0, 0}}; }

bool ScatterShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[0]);
  AssignShape(attrs, "input 0 (ref)", &(*in)[0], (*out)[0]);
  const Shape &ref = (*in)[0], &indices = (*in)[1];
  if (ref.rank_known()) {
    IR_CHECK(ref.ndim() >= 1) << NodeDesc(attrs) << ": ref must have rank at least 1, got shape " << ref;
  }
  if (ref.rank_known() && indices.rank_known()) {
    std::vector<int64_t> dims = indices.dims();
    dims.insert(dims.end(), ref.dims().begin() + 1, ref.dims().end());
    AssignShape(attrs, "input 2 (updates)", &(*in)[2], Shape(dims));
  }
  return AllKnown(*in, *out);
}

bool ScatterType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckIndexDType(attrs, "indices", (*in)[1]);
  AssignType(attrs, "input 2 (updates)", &(*in)[2], (*in)[0]);
  AssignType(attrs, "input 0 (ref)", &(*in)[0], (*in)[2]);
  return SameTypeAsFirstInput(attrs, in, out);
}

/*! \brief ref[indices[r]] = f(ref[indices[r]], updates[r]) row by row, in order (repeats apply in turn). */
template <typename F>
FCompute ScatterCompute(F f) {
  return
      [f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
        const NDArray& ref = in[0];
        int64_t rows = ref.shape()[0], inner = rows == 0 ? 0 : ref.Size() / rows;
        std::vector<int64_t> index = ReadIndices(in[1]);
        for (size_t k = 0; k < index.size(); ++k) {
          IR_CHECK(0 <= index[k] && index[k] < rows)
              << NodeDesc(attrs) << ": index " << index[k] << " (indices element " << k << ") is out of range [0, "
              << rows << ") for ref " << ref.shape();
        }
        IR_ALL_TYPES_SWITCH(ref.dtype(), DT, {
          DT* dst = ref.data<DT>();
          const DT* src = in[2].data<DT>();
          ParallelFor(inner, [&](int64_t c0, int64_t c1) {  // threads own columns: repeated rows apply in order
            for (size_t k = 0; k < index.size(); ++k) {
              for (int64_t c = c0; c < c1; ++c)
                dst[index[k] * inner + c] = f(dst[index[k] * inner + c], src[k * inner + c]);
            }
          });
        });
        if (!out[0].Overlaps(ref)) out[0].CopyFrom(ref);
      };
}

/*! \brief What the scatter family shares; `numeric` excludes bool (the arithmetic updates). */
struct ScatterOp {
  bool numeric;
  void operator()(Op& op) const {
    const bool only_numeric = numeric;
    op.set_num_inputs(3)
        .set_input_names({"ref", "indices", "updates"})
        .set_attr<FMutateInputs>("FMutateInputs", MutatesRef)
        .set_attr<FInplaceOption>("FInplaceOption", OutputIsRef)
        .set_attr<FInferShape>("FInferShape", ScatterShape)
        .set_attr<FInferType>("FInferType",
                              [only_numeric](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                                bool known = ScatterType(attrs, in, out);
                                if (only_numeric && (*in)[0] != DType::kUnknown) {
                                  CheckDType(attrs, "ref", (*in)[0], NumericTypes());
                                }
                                return known;
                              })
        .set_attr<TOpPattern>("TOpPattern", kOpaque);
  }
};

}  // namespace

IR_REGISTER_OP(scatter_update)
    .describe(
        "ref[indices[i], ...] = updates[i, ...]; the output is the variable's new value (it shares ref's storage).")
    .apply(ScatterOp{false})
    .set_attr<FCompute>("FCompute", ScatterCompute([](auto, auto b) { return b; }));

IR_REGISTER_OP(scatter_add)
    .describe("ref[indices[i], ...] += updates[i, ...] (repeated indices add up); the output shares ref's storage.")
    .apply(ScatterOp{true})
    .set_attr<FCompute>("FCompute", ScatterCompute([](auto a, auto b) { return a + b; }));

IR_REGISTER_OP(scatter_sub)
    .describe("ref[indices[i], ...] -= updates[i, ...] (repeated indices add up); the output shares ref's storage.")
    .apply(ScatterOp{true})
    .set_attr<FCompute>("FCompute", ScatterCompute([](auto a, auto b) { return a - b; }));

}  // namespace op
}  // namespace ir
