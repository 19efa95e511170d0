/*!
 * \file kernels_random.cc
 * \brief OpenCL kernels of random_uniform, random_normal, truncated_normal and dropout, with
 * the CPU's counter-based generator (src/ops/random_utils.h: Philox4x32-10 keyed by the run's
 * seed and the op's seed, one counter per element), so the device draws the CPU's numbers.
 *
 * Uniform values and dropout masks are bit-exact (integer arithmetic and exactly rounded
 * conversions). Normal values use Box-Muller in double precision as the CPU does, with the
 * device's log, sqrt, sin and cos, which may differ from glibc's in the last bits; without
 * cl_khr_fp64 the transform runs in float.
 */
#include <cmath>

#include "ops/random_utils.h"
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

const char kRandomKernels[] = R"CL(
/* Philox4x32-10 of counter (index, draw) under key, as random::WordsAt. */
inline uint4 ir_philox(const ulong key, const ulong index, const ulong draw) {
  uint4 c = (uint4)((uint)index, (uint)(index >> 32), (uint)draw, (uint)(draw >> 32));
  uint k0 = (uint)key, k1 = (uint)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = (uint4)(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

/* 24 random bits (float32 elements) or 53 (float64 elements): the integer behind UniformAt. */
inline ulong ir_uniform_bits(const uint4 w) {
#if IR_T_IS_DOUBLE
  return ((ulong)w.x << 21) ^ (w.y >> 11);
#else
  return w.x >> 8;
#endif
}

#if IR_HAS_FP64
typedef double ir_real;
#else
typedef float ir_real;
#endif

/* random::UnitDouble */
inline ir_real ir_unit(const uint high, const uint low) {
  return (ir_real)(((ulong)high << 21) ^ (low >> 11)) * (ir_real)(1.0 / 9007199254740992.0);
}

/* The standard normal of element index, draw `draw` (random::NormalAt). */
inline ir_real ir_normal(const ulong key, const ulong index, const ulong draw) {
  const uint4 w = ir_philox(key, index / 2, draw);
  const ir_real u1 = (ir_real)1 - ir_unit(w.x, w.y), u2 = ir_unit(w.z, w.w);
  const ir_real radius = sqrt((ir_real)-2 * log(u1)), angle = (ir_real)6.283185307179586476925 * u2;
  return index % 2 == 0 ? radius * cos(angle) : radius * sin(angle);
}

/* lo + u * (hi - lo) with u the element's uniform in [0, 1), kept below hi as the CPU does. */
__kernel void random_uniform(__global T* out, const long out_offset, const long n, const ulong key, const T lo,
                             const T hi, const T below_hi) {
  out += out_offset;
  const T width = hi - lo;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const T u = (T)ir_uniform_bits(ir_philox(key, (ulong)i, 0)) * IR_UNIT_SCALE;
    const T v = lo + u * width;
    out[i] = v < hi || !(hi > lo) ? v : below_hi;
  }
}

__kernel void random_normal(__global T* out, const long out_offset, const long n, const ulong key,
                            const ir_real mean, const ir_real stddev, const int truncated) {
  out += out_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    ir_real z = ir_normal(key, (ulong)i, 0);
    for (ulong draw = 1; truncated && fabs(z) > (ir_real)2; ++draw) z = ir_normal(key, (ulong)i, draw);
    out[i] = (T)(mean + stddev * z);
  }
}

/* mask = scale where the element's uniform bits are below keep_bits (u < keep_prob), else 0; y = x * mask. */
__kernel void dropout(__global const T* x, const long x_offset, __global T* y, const long y_offset,
                      __global T* mask, const long mask_offset, const long n, const ulong key,
                      const ulong keep_bits, const T scale, const int active) {
  x += x_offset;
  y += y_offset;
  mask += mask_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const T m = !active ? (T)1 : ir_uniform_bits(ir_philox(key, (ulong)i, 0)) < keep_bits ? scale : (T)0;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}
)CL";

OpenCLLibrarySource random_source("random", LibraryTypes::kFloat, kRandomKernels);

/*! \brief The generator key of a node, as the CPU ops compute it. */
uint64_t KeyOf(const OpContext& ctx, const NodeAttrs& attrs) {
  auto seed = static_cast<int64_t>(AttrDouble(attrs, "seed", 0));
  return op::random::CombineSeeds(ctx.seed, static_cast<uint64_t>(seed));
}

/*! \brief Bits of uniform precision of an element type: 24 for float32, 53 for float64. */
int UniformBits(DType dtype) { return dtype == DType::kFloat64 ? 53 : 24; }

void UniformCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>&,
                    const std::vector<NDArray>& out) {
  CheckArrays(out, attrs);
  DType dtype = out[0].dtype();
  double lo = AttrDouble(attrs, "minval", 0), hi = AttrDouble(attrs, "maxval", 1);
  // Values of the element type, as the CPU kernel rounds them.
  double lo_t = dtype == DType::kFloat32 ? static_cast<float>(lo) : lo;
  double hi_t = dtype == DType::kFloat32 ? static_cast<float>(hi) : hi;
  double below = dtype == DType::kFloat32 ? std::nextafter(static_cast<float>(hi_t), static_cast<float>(lo_t))
                                          : std::nextafter(hi_t, lo_t);
  KernelArgs args;
  args.Array(out[0]).Value(cl_long{out[0].Size()}).Value(cl_ulong{KeyOf(ctx, attrs)});
  args.Scalar(dtype, lo_t).Scalar(dtype, hi_t).Scalar(dtype, below);
  RunKernel(ctx, dtype, "random_uniform", args, out[0].Size());
}

template <bool kTruncated>
void NormalCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>&,
                   const std::vector<NDArray>& out) {
  CheckArrays(out, attrs);
  DType real = GetDevice(0).fp64 ? DType::kFloat64 : DType::kFloat32;
  KernelArgs args;
  args.Array(out[0]).Value(cl_long{out[0].Size()}).Value(cl_ulong{KeyOf(ctx, attrs)});
  args.Scalar(real, AttrDouble(attrs, "mean", 0)).Scalar(real, AttrDouble(attrs, "stddev", 1));
  args.Value(cl_int{kTruncated});
  RunKernel(ctx, out[0].dtype(), "random_normal", args, out[0].Size());
}

void DropoutCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0], out[1]}, attrs);
  DType dtype = in[0].dtype();
  double keep = AttrDouble(attrs, "keep_prob", 0.5);
  // u = bits / 2^b < keep  <=>  bits < ceil(keep * 2^b): exact, as keep * 2^b is.
  double scaled = std::ldexp(keep, UniformBits(dtype));
  auto keep_bits = static_cast<cl_ulong>(std::ceil(scaled));
  double scale = dtype == DType::kFloat32 ? static_cast<double>(static_cast<float>(1 / keep)) : 1 / keep;
  KernelArgs args;
  args.Array(in[0]).Array(out[0]).Array(out[1]).Value(cl_long{in[0].Size()}).Value(cl_ulong{KeyOf(ctx, attrs)});
  args.Value(keep_bits).Scalar(dtype, scale).Value(cl_int{ctx.is_train && keep < 1});
  RunKernel(ctx, dtype, "dropout", args, in[0].Size());
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(random_uniform).set_attr<FCompute>(kKey, UniformCompute);
IR_REGISTER_OP(random_normal).set_attr<FCompute>(kKey, NormalCompute<false>);
IR_REGISTER_OP(truncated_normal).set_attr<FCompute>(kKey, NormalCompute<true>);
IR_REGISTER_OP(dropout).set_attr<FCompute>(kKey, DropoutCompute);

}  // namespace opencl
}  // namespace ir
