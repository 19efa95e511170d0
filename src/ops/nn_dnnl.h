/*!
 * \file nn_dnnl.h
 * \brief oneDNN helpers of the window ops (convolution, pooling) on top of dnnl_utils.h:
 * activation descriptors from a Geometry, descriptor queries on cached primitives, and
 * cached reorders between the user's layout and the one a primitive prefers.
 */
#ifndef IR_OPS_NN_DNNL_H_
#define IR_OPS_NN_DNNL_H_

#include <string>

#include "ops/dnnl_utils.h"
#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace nn {

/*! \brief The input (or output) of a window op as oneDNN's logical (N, C, H, W) with our strides. */
inline dnnl::memory::desc ActivationDesc(const Geometry& g, bool output) {
  return dnnl_utils::Desc(g.LogicalDims(output), DType::kFloat32, g.LogicalStrides(output));
}

/*!
 * \brief A memory descriptor a primitive was created with (e.g. dnnl_query_weights_md for the
 * layout it chose for format_tag::any, or dnnl_query_workspace_md); empty when it has none.
 */
inline dnnl::memory::desc QueryDesc(const dnnl::primitive& primitive, dnnl_query_t what) {
  const dnnl_memory_desc_t* md = dnnl_primitive_desc_query_md(primitive.get_primitive_desc(), what, 0);
  return md == nullptr ? dnnl::memory::desc() : dnnl::memory::desc(*md);
}

/*!
 * \brief Copies `from` into `to` (one tensor, two layouts) with a reorder primitive cached
 * under `key`, which must determine both descriptors.
 */
inline void Reorder(const std::string& what, const dnnl_utils::PrimitiveKey& key, const dnnl::memory& from,
                    const dnnl::memory& to) {
  dnnl_utils::CachedPrimitive reorder = dnnl_utils::PrimitiveCache::Global().GetOrCreate(key, [&] {
    return dnnl_utils::Guard(what, [&] {
      dnnl::reorder::primitive_desc pd(dnnl_utils::Engine(), from.get_desc(), dnnl_utils::Engine(), to.get_desc(),
                                       dnnl_utils::DefaultAttr());
      return dnnl_utils::MakeCached<dnnl::reorder>(pd);
    });
  });
  dnnl_utils::Execute(what, reorder, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

}  // namespace nn
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_NN_DNNL_H_
