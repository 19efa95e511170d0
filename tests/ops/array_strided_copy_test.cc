#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

/*! \brief The copy `spec` describes, one index at a time. */
template <typename T>
void ReferenceCopy(const StridedCopySpec& spec, const T* src, T* dst) {
  int64_t total = 1;
  for (int64_t e : spec.extents) total *= e;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat, s = spec.src_offset, d = spec.dst_offset;
    for (int k = static_cast<int>(spec.extents.size()) - 1; k >= 0; --k) {
      s += (rem % spec.extents[k]) * spec.src_strides[k];
      d += (rem % spec.extents[k]) * spec.dst_strides[k];
      rem /= spec.extents[k];
    }
    dst[d] = src[s];
  }
}

template <typename T>
void ExpectSameAsReference(const StridedCopySpec& spec, size_t src_size, size_t dst_size) {
  std::vector<T> src(src_size), want(dst_size, T(7)), got(dst_size, T(7));
  for (size_t i = 0; i < src_size; ++i) src[i] = static_cast<T>(i * 2654435761u);
  ReferenceCopy(spec, src.data(), want.data());
  StridedCopy(spec, src.data(), got.data(), sizeof(T));
  EXPECT_EQ(got, want);
}

StridedCopySpec Spec(std::vector<int64_t> extents, std::vector<int64_t> src, std::vector<int64_t> dst,
                     int64_t src_offset = 0, int64_t dst_offset = 0) {
  StridedCopySpec s;
  s.extents = std::move(extents);
  s.src_strides = std::move(src);
  s.dst_strides = std::move(dst);
  s.src_offset = src_offset;
  s.dst_offset = dst_offset;
  return s;
}

TEST(StridedCopyTest, ContiguousBroadcastReversedAndTransposedCopies) {
  // Contiguous in both (merges into one memcpy).
  ExpectSameAsReference<float>(Spec({4, 5, 6}, {30, 6, 1}, {30, 6, 1}), 120, 120);
  // A broadcast row (source stride 0) and a broadcast column.
  ExpectSameAsReference<double>(Spec({3, 1000}, {0, 1}, {1000, 1}), 1000, 3000);
  ExpectSameAsReference<int32_t>(Spec({700, 9}, {1, 0}, {9, 1}), 700, 6300);
  // Reversed with a step (negative strides from an offset), into a sub-box of the destination.
  ExpectSameAsReference<int64_t>(Spec({3, 4}, {-10, -2}, {8, 1}, 29, 2), 30, 26);
  // Transposes large enough to be tiled, in every element size.
  ExpectSameAsReference<uint8_t>(Spec({97, 130}, {1, 97}, {130, 1}), 97 * 130, 97 * 130);
  ExpectSameAsReference<uint16_t>(Spec({40, 70}, {1, 40}, {70, 1}), 2800, 2800);
  ExpectSameAsReference<float>(Spec({3, 65, 33}, {2145, 1, 65}, {2145, 33, 1}), 3 * 2145, 3 * 2145);
  ExpectSameAsReference<double>(Spec({33, 7, 65}, {1, 33 * 65, 33}, {7 * 65, 65, 1}), 33 * 7 * 65, 33 * 7 * 65);
  // A 3-way permutation with a short inner dimension (row loop, strided).
  ExpectSameAsReference<float>(Spec({5, 3, 2}, {1, 10, 5}, {6, 2, 1}), 30, 30);
}

TEST(StridedCopyTest, EmptyAndScalarCopies) {
  ExpectSameAsReference<float>(Spec({3, 0, 2}, {0, 0, 0}, {0, 0, 0}), 1, 1);
  ExpectSameAsReference<float>(Spec({}, {}, {}, 3, 1), 5, 2);
  ExpectSameAsReference<float>(Spec({1, 1}, {5, 5}, {1, 1}, 2, 0), 3, 1);
}

}  // namespace
}  // namespace op
}  // namespace ir
