/*!
 * \file matrix_device.cc
 * \brief Device kernels of matmul (tiles in shared memory, transpose flags, batch dimensions
 * broadcast as in NumPy), bias_add (NHWC and NCHW) and bias_add_grad (a reduction).
 */
#include "ops/device_walk.h"
#include "ops/matrix/matrix.h"
#include "ops/reduce/reduce_device.h"

namespace ir {
namespace op {
namespace {

/*! \brief Host side of matmul_geometry (int64 members only). */
struct MatmulGeometry {
  int64_t m, n, k, ta, tb, tiles_m, tiles_n, batches;
  DeviceWalk a_batch, b_batch;
};

/*! \brief Rows and columns of a tile of C (MM_T in the kernel). */
constexpr int64_t kTile = 16;

const DeviceKernelSource& kMatrixSource = RegisterDeviceKernelSource({"matrix", std::string(kDeviceWalkC) + R"(
/* A tile of C is MM_T x MM_T: each work-item of a group computes MM_PER of its elements
 * (those at IR_LOCAL_ID + q * IR_GROUP_SIZE); K is walked MM_T at a time through shared memory. */
#define MM_T 16
#define MM_PER ((MM_T * MM_T + IR_GROUP_SIZE - 1) / IR_GROUP_SIZE)

typedef struct {
  long m, n, k, ta, tb, tiles_m, tiles_n, batches;
  walk_t a_batch, b_batch;
} matmul_geometry;

/* C[batch] = op(A[batch]) op(B[batch]), C of [batches, m, n]; the batch walks give each C
 * matrix's A and B matrix offsets (stride 0 where an operand broadcasts). */
IR_KERNEL void matmul_tiled(IR_CONST_ARRAY(T, a), IR_CONST_ARRAY(T, b), IR_ARRAY(T, c), const matmul_geometry g) {
  IR_SHARED T a_tile[MM_T][MM_T + 1];
  IR_SHARED T b_tile[MM_T][MM_T + 1];
  IR_OFFSET(a);
  IR_OFFSET(b);
  IR_OFFSET(c);
  IR_GROUP_LOOP(t, g.batches * g.tiles_m * g.tiles_n) {
    const long batch = t / (g.tiles_m * g.tiles_n), tile = t % (g.tiles_m * g.tiles_n);
    const long row0 = tile / g.tiles_n * MM_T, col0 = tile % g.tiles_n * MM_T;
    const long oa = walk_offset(g.a_batch, batch), ob = walk_offset(g.b_batch, batch);
    T acc[MM_PER];
    for (long q = 0; q < MM_PER; ++q) acc[q] = (T)0;
    for (long k0 = 0; k0 < g.k; k0 += MM_T) {
      IR_LOCAL_LOOP(e, MM_T * MM_T) {
        const long i = e / MM_T, j = e % MM_T, r = row0 + i, ka = k0 + j, kb = k0 + i, col = col0 + j;
        a_tile[i][j] = r < g.m && ka < g.k ? a[oa + (g.ta ? ka * g.m + r : r * g.k + ka)] : (T)0;
        b_tile[i][j] = kb < g.k && col < g.n ? b[ob + (g.tb ? col * g.k + kb : kb * g.n + col)] : (T)0;
      }
      IR_BARRIER();
      for (long q = 0; q < MM_PER; ++q) {
        const long e = IR_LOCAL_ID + q * IR_GROUP_SIZE, i = e / MM_T, j = e % MM_T;
        if (e < MM_T * MM_T) {
          for (long p = 0; p < MM_T; ++p) acc[q] += a_tile[i][p] * b_tile[p][j];
        }
      }
      IR_BARRIER();
    }
    for (long q = 0; q < MM_PER; ++q) {
      const long e = IR_LOCAL_ID + q * IR_GROUP_SIZE, row = row0 + e / MM_T, col = col0 + e % MM_T;
      if (e < MM_T * MM_T && row < g.m && col < g.n) c[(batch * g.m + row) * g.n + col] = acc[q];
    }
  }
}

/* y[i] = x[i] + bias[channel of i], x viewed as [outer, channels, inner]. */
IR_KERNEL void bias_add(IR_CONST_ARRAY(T, x), IR_CONST_ARRAY(T, bias), IR_ARRAY(T, y), const long channels,
                        const long inner, const long n) {
  IR_OFFSET(x);
  IR_OFFSET(bias);
  IR_OFFSET(y);
  IR_THREAD_LOOP(i, n) y[i] = x[i] + bias[i / inner % channels];
}
)",
                                                                      NumericTypes()});

/*! \brief Element strides of an operand's matrices along C's batch dims: 0 where it broadcasts. */
std::vector<int64_t> BatchStrides(const std::vector<int64_t>& dims, int64_t matrix) {
  std::vector<int64_t> strides(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    strides[d] = dims[d] == 1 ? 0 : matrix;
    matrix *= dims[d];
  }
  return strides;
}

}  // namespace

void MatmulDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  MatmulProblem p = MakeProblem(in[0].shape(), in[1].shape(), dmlc::get<MatmulParam>(attrs.parsed));
  MatmulGeometry g{p.m, p.n, p.k, p.ta, p.tb, (p.m + kTile - 1) / kTile, (p.n + kTile - 1) / kTile, 1, {}, {}};
  if (!MakeDeviceWalk(p.batch_c, BatchStrides(p.batch_a, p.m * p.k), &g.a_batch) ||
      !MakeDeviceWalk(p.batch_c, BatchStrides(p.batch_b, p.k * p.n), &g.b_batch)) {
    return dev.RunOnHost(attrs, in, out);
  }
  for (int64_t d : p.batch_c) g.batches *= d;
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]).Value(g);
  dev.Launch(kMatrixSource, out[0].dtype(), "matmul_tiled", args,
             DeviceLaunch::Groups(g.batches * g.tiles_m * g.tiles_n));
}

void BiasAddDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  ChannelView v = ViewAroundChannels(attrs, in[0].shape());
  int64_t n = out[0].Size();
  DeviceArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]).Value(v.channels).Value(v.inner).Value(n);
  dev.Launch(kMatrixSource, out[0].dtype(), "bias_add", args, DeviceLaunch::Threads(n));
}

void BiasAddGradDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out) {
  DeviceReduce(dev, attrs, in, out, "sum", BiasGradAxes(attrs, in[0].shape().ndim()));
}

}  // namespace op
}  // namespace ir
