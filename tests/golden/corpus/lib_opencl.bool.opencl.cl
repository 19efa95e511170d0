/* ir: hand-written OpenCL kernels for element type bool */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define IR_HAS_FP64 1
#define T uchar
#define T_LOWEST 0
#define T_HIGHEST 1
#define IR_T_FLOAT 0
#define IR_T_NUMERIC 0
#define IR_T_IS_DOUBLE 0
#define IR_UNIT_SCALE (1.0f / 16777216.0f)

/* Separate multiplies and adds, as the CPU kernels compute them. */
#pragma OPENCL FP_CONTRACT OFF

typedef struct { long ndim; long extent[8]; long stride[8]; } ir_strided;

/* The geometry of a convolution or pooling window (see WindowArg). */
typedef struct {
  long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  long xs[4];
  long ys[4];
} ir_window;

/* Offset of element i (row-major over w.extent) of a strided walk. */
inline long ir_offset(const ir_strided w, long i) {
  long offset = 0;
  for (int d = (int)w.ndim - 1; d >= 0; --d) {
    offset += (i % w.extent[d]) * w.stride[d];
    i /= w.extent[d];
  }
  return offset;
}

/* ---- array ---- */

/* dst[i] = src[offset of i in walk] for i < n. */
__kernel void strided_copy(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                           const ir_strided walk, const long n) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)];
}

/* out[(o * depth + d) * inner + k] = indices[o * inner + k] == d ? on : off. */
#define IR_ONE_HOT(NAME, I)                                                                          \
  __kernel void NAME(__global const I* indices, const long indices_offset, __global T* out,          \
                     const long out_offset, const long depth, const long inner, const T on,          \
                     const T off, const long n) {                                                    \
    indices += indices_offset;                                                                       \
    out += out_offset;                                                                               \
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {                                \
      const long k = i % inner, d = i / inner % depth, o = i / (inner * depth);                      \
      out[i] = (long)indices[o * inner + k] == d ? on : off;                                         \
    }                                                                                                \
  }
IR_ONE_HOT(one_hot_i32, int)
IR_ONE_HOT(one_hot_i64, long)
