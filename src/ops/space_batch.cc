/*!
 * \file space_batch.cc
 * \brief space_to_batch_nd (TensorFlow SpaceToBatchND) and batch_to_space_nd (BatchToSpaceND),
 * each the other's inverse and gradient: CPU kernels and device kernels (in the library of
 * nn_device_library.h).
 */
#include <algorithm>
#include <string>
#include <vector>

#include "ops/nn_device_library.h"

namespace ir {
namespace op {
namespace {

// ---------------------------------------------------------------- space_to_batch_nd, batch_to_space_nd

struct SpaceBatchParam : public dmlc::Parameter<SpaceBatchParam> {
  IntList block_shape;
  IntList paddings;
  DMLC_DECLARE_PARAMETER(SpaceBatchParam) {
    DMLC_DECLARE_FIELD(block_shape).describe("Block size of each of the M spatial dimensions (after the batch).");
    DMLC_DECLARE_FIELD(paddings).describe(
        "(start, end) for each spatial dimension, flattened: padding of space_to_batch_nd, crops of "
        "batch_to_space_nd.");
  }
};
DMLC_REGISTER_PARAMETER(SpaceBatchParam);

void ParseSpaceBatch(NodeAttrs* attrs) {
  ParamParser<SpaceBatchParam>(attrs);
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs->parsed);
  IR_CHECK(!p.block_shape.empty() && p.paddings.size() == 2 * p.block_shape.size())
      << NodeDesc(*attrs) << ": block_shape " << p.block_shape << " needs one (start, end) pair each in paddings, got "
      << p.paddings;
  for (int64_t b : p.block_shape.values)
    IR_CHECK(b >= 1) << NodeDesc(*attrs) << ": block_shape " << p.block_shape << " must be positive";
  for (int64_t v : p.paddings.values)
    IR_CHECK(v >= 0) << NodeDesc(*attrs) << ": paddings/crops " << p.paddings << " must not be negative";
}

/*! \brief space_to_batch_nd (kToSpace false) or batch_to_space_nd shapes, from the input's. */
template <bool kToSpace>
bool SpaceBatchShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs.parsed);
  const Shape& x = (*in)[0];
  if (!x.rank_known()) return false;
  int m = static_cast<int>(p.block_shape.size());
  IR_CHECK(x.ndim() >= m + 1) << NodeDesc(attrs) << ": input " << x << " must have rank at least " << m + 1
                              << " for block_shape " << p.block_shape;
  int64_t blocks = 1;
  for (int64_t b : p.block_shape.values) blocks *= b;
  Shape y = x;
  if (x[0] >= 0) {
    IR_CHECK(kToSpace ? x[0] % blocks == 0 : true)
        << NodeDesc(attrs) << ": batch of input " << x << " is not divisible by the product of block_shape "
        << p.block_shape;
    y[0] = kToSpace ? x[0] / blocks : x[0] * blocks;
  }
  for (int d = 0; d < m; ++d) {
    int64_t e = x[d + 1], pad = p.paddings[2 * d] + p.paddings[2 * d + 1], b = p.block_shape[d];
    if (e < 0) continue;
    if (kToSpace) {
      IR_CHECK(e * b >= pad) << NodeDesc(attrs) << ": crops " << p.paddings << " exceed dimension " << d + 1
                             << " of input " << x << " times block " << b;
      y[d + 1] = e * b - pad;
    } else {
      IR_CHECK((e + pad) % b == 0) << NodeDesc(attrs) << ": dimension " << d + 1 << " of input " << x << " padded by "
                                   << pad << " is not divisible by block " << b;
      y[d + 1] = (e + pad) / b;
    }
  }
  AssignShape(attrs, "output 0", &(*out)[0], y);
  return AllKnown(*in, *out);
}

/*!
 * \brief Walks the batch side b (shape [B*prod(block), blocked..., rest]) against the space side s
 * ([B, spatial..., rest]): batch element (ob, o_1..o_M, r) is space element (ob % B, o_i*block_i +
 * off_i - start_i, r) with off = ob / B in row-major order of the blocks (zero where that is padding).
 * kToSpace false fills batch from space (space_to_batch_nd), true space from batch.
 */
template <typename T, bool kToSpace>
void SpaceBatchKernel(const SpaceBatchParam& p, const NDArray& space, const NDArray& batch) {
  const Shape& ss = space.shape();
  const Shape& bs = batch.shape();
  int m = static_cast<int>(p.block_shape.size());
  int64_t rest = ss.ProdDims(m + 1, ss.ndim()), nb = ss[0];
  T* sp = space.data<T>();
  T* bp = batch.data<T>();
  int64_t outer = bs.ProdDims(0, m + 1);
  std::vector<int64_t> coord(m + 1, 0);
  for (int64_t i = 0; i < outer; ++i) {
    int64_t off = coord[0] / nb, src = coord[0] % nb;
    bool inside = true;
    std::vector<int64_t> offs(m);
    for (int d = m - 1; d >= 0; --d) {
      offs[d] = off % p.block_shape[d];
      off /= p.block_shape[d];
    }
    for (int d = 0; d < m; ++d) {
      int64_t pos = coord[d + 1] * p.block_shape[d] + offs[d] - p.paddings[2 * d];
      inside = inside && pos >= 0 && pos < ss[d + 1];
      src = src * ss[d + 1] + pos;
    }
    T* b = bp + i * rest;
    if (!kToSpace) {
      for (int64_t r = 0; r < rest; ++r) b[r] = inside ? sp[src * rest + r] : T(0);
    } else if (inside) {
      std::copy(b, b + rest, sp + src * rest);
    }
    for (int d = m; d >= 0 && ++coord[d] == bs[d]; --d) coord[d] = 0;
  }
}

/*! \brief FCompute of space_to_batch_nd (kToSpace false) or batch_to_space_nd. */
template <bool kToSpace>
void SpaceBatchCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out) {
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs.parsed);
  const NDArray& space = kToSpace ? out[0] : in[0];
  const NDArray& batch = kToSpace ? in[0] : out[0];
  IR_ALL_TYPES_SWITCH(in[0].dtype(), T, (SpaceBatchKernel<T, kToSpace>(p, space, batch)));
}

}  // namespace

const char nn::kSpaceBatchDeviceC[] = R"(
/* The batch side [nb * prod(block), blocked (bs)..., rest] against the space side [nb, spatial (xs)..., rest]:
   to_space 0 fills batch (space_to_batch_nd, zero in the padding), 1 fills space (batch_to_space_nd). */
IR_KERNEL void space_batch(IR_ARRAY(T, space), IR_ARRAY(T, batch), const nx_dims p, const long n, const long to_space) {
  IR_OFFSET(space);
  IR_OFFSET(batch);
  IR_THREAD_LOOP(e, n) {
    const long r = e % p.rest;
    long rest = e / p.rest, pos[8], off = 0, inside = 1, at = 0;
    if (!to_space) {
      long o[8];
      for (long d = p.m - 1; d >= 0; --d) {
        o[d] = rest % p.ys[d];
        rest /= p.ys[d];
      }
      long blk = rest / p.nb;
      at = rest % p.nb;
      for (long d = p.m - 1; d >= 0; --d) {
        pos[d] = o[d] * p.block[d] + blk % p.block[d] - p.before[d];
        blk /= p.block[d];
        inside = inside && pos[d] >= 0 && pos[d] < p.xs[d];
      }
      for (long d = 0; d < p.m; ++d) at = at * p.xs[d] + pos[d];
      batch[e] = inside ? space[at * p.rest + r] : (T)0;
    } else {
      for (long d = p.m - 1; d >= 0; --d) {
        pos[d] = rest % p.xs[d] + p.before[d];
        rest /= p.xs[d];
      }
      for (long d = 0; d < p.m; ++d) off = off * p.block[d] + pos[d] % p.block[d];
      at = off * p.nb + rest;
      for (long d = 0; d < p.m; ++d) at = at * p.ys[d] + pos[d] / p.block[d];
      space[e] = batch[at * p.rest + r];
    }
  }
}
)";

namespace {

/*! \brief space_to_batch_nd (kToSpace false) or batch_to_space_nd. */
template <bool kToSpace>
void SpaceBatchDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const NDArray& space = kToSpace ? out[0] : in[0];
  const NDArray& batch = kToSpace ? in[0] : out[0];
  const SpaceBatchParam& p = dmlc::get<SpaceBatchParam>(attrs.parsed);
  int m = static_cast<int>(p.block_shape.size());
  if (!nn::DeviceOrHost(dev, attrs, in, out, out[0].dtype(), m)) return;
  nn::DeviceDims d;
  d.m = m;
  d.nb = space.shape()[0];
  d.rest = space.shape().ProdDims(m + 1, space.shape().ndim());
  for (int i = 0; i < m; ++i) {
    d.xs[i] = space.shape()[i + 1];
    d.ys[i] = batch.shape()[i + 1];
    d.block[i] = p.block_shape[i];
    d.before[i] = p.paddings[2 * i];
  }
  DeviceArgs args;
  args.Array(space).Array(batch).Value(d).Value(out[0].Size()).Value(int64_t{kToSpace});
  dev.Launch(nn::DeviceLibrary(), out[0].dtype(), "space_batch", args, DeviceLaunch::Threads(out[0].Size()));
}

}  // namespace

IR_REGISTER_OP(space_to_batch_nd)
    .describe("Spatial blocks moved into the batch after zero padding (TensorFlow SpaceToBatchND).")
    .apply(InversePair<SpaceBatchParam>("data", ParseSpaceBatch, "batch_to_space_nd"))
    .set_attr<FInferShape>("FInferShape", SpaceBatchShape<false>)
    .set_attr<FCompute>("FCompute", SpaceBatchCompute<false>)
    .set_attr<FDeviceKernel>("FDeviceKernel", SpaceBatchDevice<false>);

IR_REGISTER_OP(batch_to_space_nd)
    .describe("The inverse of space_to_batch_nd: batch blocks moved back into space, then cropped (BatchToSpaceND).")
    .apply(InversePair<SpaceBatchParam>("data", ParseSpaceBatch, "space_to_batch_nd"))
    .set_attr<FInferShape>("FInferShape", SpaceBatchShape<true>)
    .set_attr<FCompute>("FCompute", SpaceBatchCompute<true>)
    .set_attr<FDeviceKernel>("FDeviceKernel", SpaceBatchDevice<true>);

}  // namespace op
}  // namespace ir
