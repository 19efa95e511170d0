/*!
 * \file random_utils.h
 * \brief Counter-based random numbers for stateful ops (random_*, dropout).
 *
 * Every value is a pure function of a 64-bit key (the run's OpContext::seed combined with
 * the op's `seed` attribute) and the element's index, so results are reproducible and do
 * not depend on how the work is split across threads. The generator is Philox4x32-10
 * (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), as used by
 * TensorFlow, JAX and cuRAND. random.cc holds the same generator in portable kernel C for
 * the device kernels of the random ops and dropout.
 */
#ifndef IR_OPS_RANDOM_UTILS_H_
#define IR_OPS_RANDOM_UTILS_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "ir/device_kernel.h"

namespace ir {
namespace op {
namespace random {

/*! \brief Four 32-bit words. */
using Words = std::array<uint32_t, 4>;

/*! \brief Philox4x32-10: four random words from a 128-bit counter and a 64-bit key. */
inline Words Philox4x32(Words counter, uint64_t key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kMul0) * counter[0];
    uint64_t p1 = static_cast<uint64_t>(kMul1) * counter[2];
    counter = {static_cast<uint32_t>(p1 >> 32) ^ counter[1] ^ k0, static_cast<uint32_t>(p1),
               static_cast<uint32_t>(p0 >> 32) ^ counter[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return counter;
}

/*! \brief The splitmix64 finalizer: a bijective 64-bit mix. */
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/*! \brief The generator key of a node: its run seed (OpContext::seed) and its `seed` attribute. */
inline uint64_t CombineSeeds(uint64_t context_seed, uint64_t op_seed) {
  return SplitMix64(context_seed ^ SplitMix64(op_seed));
}

/*!
 * \brief The four words of counter `index` in stream `draw`. Draw 0 is the first value of
 * an element; rejection sampling takes draws 1, 2, ... of the same index.
 */
inline Words WordsAt(uint64_t key, uint64_t index, uint64_t draw = 0) {
  return Philox4x32({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), static_cast<uint32_t>(draw),
                     static_cast<uint32_t>(draw >> 32)},
                    key);
}

/*! \brief Uniform in [0, 1) with 24 random bits (every float32 of the grid). */
inline float UnitFloat(uint32_t word) { return static_cast<float>(word >> 8) * (1.0f / 16777216.0f); }

/*! \brief Uniform in [0, 1) with 53 random bits (every float64 of the grid). */
inline double UnitDouble(uint32_t high, uint32_t low) {
  uint64_t bits = (static_cast<uint64_t>(high) << 21) ^ (low >> 11);
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

/*! \brief Uniform in [0, 1) for element `index`: 24 bits for float, 53 for double. */
template <typename T>
inline T UniformAt(uint64_t key, uint64_t index, uint64_t draw = 0) {
  Words w = WordsAt(key, index, draw);
  if constexpr (sizeof(T) == sizeof(float)) {
    return UnitFloat(w[0]);
  } else {
    return UnitDouble(w[0], w[1]);
  }
}

/*!
 * \brief Two independent standard normals by Box-Muller from counter `pair`: elements 2 * pair
 * and 2 * pair + 1 of a normal tensor.
 */
inline std::pair<double, double> NormalPair(uint64_t key, uint64_t pair, uint64_t draw = 0) {
  Words w = WordsAt(key, pair, draw);
  double u1 = 1.0 - UnitDouble(w[0], w[1]);  // (0, 1]: the log stays finite
  double u2 = UnitDouble(w[2], w[3]);
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 6.283185307179586476925 * u2;
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

/*! \brief The standard normal of element `index` (half of the pair index / 2). */
inline double NormalAt(uint64_t key, uint64_t index, uint64_t draw = 0) {
  std::pair<double, double> z = NormalPair(key, index / 2, draw);
  return index % 2 == 0 ? z.first : z.second;
}

/*!
 * \brief A standard normal of element `index` within [-2, 2]: draws 0, 1, 2, ... of the
 * element until one falls inside (the first draw is NormalAt's value).
 */
inline double TruncatedNormalAt(uint64_t key, uint64_t index) {
  for (uint64_t draw = 0;; ++draw) {
    double z = NormalAt(key, index, draw);
    if (std::fabs(z) <= 2.0) return z;
  }
}

/*!
 * \brief dropout on a device, drawing the CPU's mask: mask = 1 / keep_prob where the element's
 * uniform (UniformAt) is below keep_prob, else 0, when `active` (else ones); y = x * mask.
 */
void DropoutOnDevice(DeviceKernelContext& dev, uint64_t key, double keep_prob, bool active, const NDArray& x,
                     const NDArray& y, const NDArray& mask);

}  // namespace random
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_RANDOM_UTILS_H_
