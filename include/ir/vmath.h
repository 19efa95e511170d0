/*!
 * \file vmath.h
 * \brief Vectorizable float32 e^x, tanh and erf: one source for the op library's CPU kernels
 * (src/ops/simd.h) and the C the CPU code generator prints (src/runtime/cpu/c_printer.cc), so a
 * fused kernel computes the same bits as the op it fused.
 *
 * libmvec's expf costs more per element than a memory pass (issue 32: softmax at 31% of STREAM).
 * These are branch-free: every lane computes every case and selects, so `omp simd` loops that call
 * them vectorize inline for any instruction set, without -ffast-math.
 *
 * - ir_expf: Cody-Waite reduction x = n ln2 + r, |r| <= ln2 / 2, Cephes' degree-7 polynomial
 *   for e^r, times 2^n as two powers of two (so results that are subnormal round once). x is
 *   clamped to [-104, 89] first: beyond, e^x is 0 or +inf in float, which the scaling gives.
 * - ir_tanhf: for |x| < 0.625 Cephes' odd polynomial, else sign(x) (1 - 2 / (e^2|x| + 1)).
 * - ir_erff: for |x| < 1, x P(x^2); else sign(x) (1 - e^-x^2 Q(1/|x|)), |x| clamped to 4
 *   (erf is 1 in float from 3.92); P and Q fitted for this file (relative error of the
 *   polynomial in float below 1.2e-7 and 2.7e-7).
 *
 * NaN stays NaN, +-Inf gives the limits, -0 stays -0 (tanh, erf); e^x overflows to +inf above
 * 88.7228 and underflows through the subnormals to +0. The error bounds are verified against
 * double libm (tests/ops/vmath_test.cc: a sweep over every 4099th float; bench/vmath_ulp.cc:
 * all 2^32): at most 1 ulp for ir_expf, 2 for ir_tanhf and ir_erff (measured figures in the test).
 *
 * The code is written once, in IR_VMATH_FUNCTIONS, as C that is also C++: the CPU kernels expand
 * it (IR_VMATH_CODE), the C printer prints its text (IR_VMATH_TEXT). Every operation is a plain
 * IEEE add, multiply or divide in a fixed order and integer bit work: the values do not depend
 * on the vector width or the instruction set, provided no a * b + c is contracted into an FMA
 * (the generated C is compiled with -ffp-contract=off, the kernel files of src/ops that use these
 * likewise: CMakeLists.txt). Only comments in the C-block style may appear inside the macro.
 */
#ifndef IR_VMATH_H_
#define IR_VMATH_H_

#include <stdint.h>

/*! \brief Expands to the code of the functions. */
#define IR_VMATH_CODE(...) __VA_ARGS__
/*! \brief Expands to the code of the functions as one string literal. */
#define IR_VMATH_TEXT(...) #__VA_ARGS__

/*! \brief Applies X (IR_VMATH_CODE or IR_VMATH_TEXT) to the code of the functions. */
// clang-format off
#define IR_VMATH_FUNCTIONS(X) \
X(                                                                                                              \
  static inline uint32_t ir_vm_bits(float x) {                                                                  \
    uint32_t u;                                                                                                 \
    __builtin_memcpy(&u, &x, sizeof(u));                                                                        \
    return u;                                                                                                   \
  }                                                                                                             \
  static inline float ir_vm_float(uint32_t u) {                                                                 \
    float x;                                                                                                    \
    __builtin_memcpy(&x, &u, sizeof(x));                                                                        \
    return x;                                                                                                   \
  }                                                                                                             \
  /* The magnitude of y with the sign of x. */                                                                  \
  static inline float ir_vm_copysign(float y, float x) {                                                        \
    return ir_vm_float((ir_vm_bits(y) & 0x7FFFFFFFu) | (ir_vm_bits(x) & 0x80000000u));                          \
  }                                                                                                             \
  /* e^x, at most 1 ulp from the true value. */                                                                 \
  static inline __attribute__((always_inline)) float ir_expf(float x) {                                         \
    /* NaN clamps to 89 and is put back at the end. */                                                          \
    float c = x < 89.0f ? x : 89.0f;                                                                            \
    c = c > -104.0f ? c : -104.0f;                                                                              \
    /* n = round(c / ln2): adding 1.5 * 2^23 rounds to an integer, which lands in the low bits. */              \
    float t = c * 1.44269504088896341f + 12582912.0f;                                                           \
    float n = t - 12582912.0f;                                                                                  \
    int32_t k = (int32_t)ir_vm_bits(t) - 0x4B400000;                                                            \
    /* r = c - n ln2 with ln2 in two parts, the first with 9 significant bits: n * it is exact. */              \
    float r = c - n * 0.693359375f;                                                                             \
    r = r - n * -2.12194440e-4f;                                                                                \
    float p = 1.9875691500e-4f;                                                                                 \
    p = p * r + 1.3981999507e-3f;                                                                               \
    p = p * r + 8.3334519073e-3f;                                                                               \
    p = p * r + 4.1665795894e-2f;                                                                               \
    p = p * r + 1.6666665459e-1f;                                                                               \
    p = p * r + 5.0000001201e-1f;                                                                               \
    p = p * (r * r) + r + 1.0f;                                                                                 \
    /* 2^k as 2^k1 2^k2, k in [-150, 128]: both factors are normal floats. */                                   \
    int32_t k1 = k / 2;                                                                                         \
    int32_t k2 = k - k1;                                                                                        \
    float s1 = ir_vm_float((uint32_t)(k1 + 127) << 23);                                                         \
    float s2 = ir_vm_float((uint32_t)(k2 + 127) << 23);                                                         \
    float y = (p * s1) * s2;                                                                                    \
    return x == x ? y : x + x;                                                                                  \
  }                                                                                                             \
  /* tanh x, at most 2 ulp from the true value. */                                                              \
  static inline __attribute__((always_inline)) float ir_tanhf(float x) {                                        \
    float a = ir_vm_float(ir_vm_bits(x) & 0x7FFFFFFFu);                                                         \
    float z = x * x;                                                                                            \
    float p = -5.70498872745e-3f;                                                                               \
    p = p * z + 2.06390887954e-2f;                                                                              \
    p = p * z - 5.37397155531e-2f;                                                                              \
    p = p * z + 1.33314422036e-1f;                                                                              \
    p = p * z - 3.33332819422e-1f;                                                                              \
    /* tanh is odd and |tanh x| <= |x|: the sign of x, also for -0 (which p z x + x makes +0). */               \
    float small = ir_vm_copysign(p * z * x + x, x);                                                             \
    float e = ir_expf(a + a);                                                                                   \
    float big = ir_vm_copysign(1.0f - 2.0f / (e + 1.0f), x);                                                    \
    /* NaN takes the second branch, where it stays NaN. */                                                      \
    return a < 0.625f ? small : big;                                                                            \
  }                                                                                                             \
  /* erf x, at most 2 ulp from the true value. */                                                               \
  static inline __attribute__((always_inline)) float ir_erff(float x) {                                         \
    float a = ir_vm_float(ir_vm_bits(x) & 0x7FFFFFFFu);                                                         \
    float z = x * x;                                                                                            \
    /* |x| < 1: erf x = x (1 + p(x^2)); x p + x rounds better than x (1 + p) for small x. */                    \
    float p = 7.913859735708684e-05f;                                                                           \
    p = p * z - 8.029054151847959e-4f;                                                                          \
    p = p * z + 5.190575961023569e-3f;                                                                          \
    p = p * z - 2.6855066418647766e-2f;                                                                         \
    p = p * z + 1.1283617466688156e-1f;                                                                         \
    p = p * z - 3.761262893676758e-1f;                                                                          \
    p = p * z + 1.2837916612625122e-1f;                                                                         \
    float small = x * p + x;                                                                                    \
    /* |x| >= 1: 1 - erfc, erfc = e^-x^2 q(1/x); NaN clamps to 4 and is put back at the end. */                 \
    float b = a < 4.0f ? a : 4.0f;                                                                              \
    float u = 1.0f / b;                                                                                         \
    float q = -1.742279902100563e-2f;                                                                           \
    q = q * u + 1.1899610608816147e-1f;                                                                         \
    q = q * u - 3.514433801174164e-1f;                                                                          \
    q = q * u + 5.733069777488708e-1f;                                                                          \
    q = q * u - 5.046059489250183e-1f;                                                                          \
    q = q * u + 5.059904605150223e-2f;                                                                          \
    q = q * u + 5.578084588050842e-1f;                                                                          \
    q = q * u + 3.4515472361817956e-4f;                                                                         \
    float big = ir_vm_copysign(1.0f - ir_expf(-(b * b)) * q, x);                                                \
    float y = a < 1.0f ? small : big;                                                                           \
    return x == x ? y : x + x;                                                                                  \
  })
// clang-format on

#endif  // IR_VMATH_H_
