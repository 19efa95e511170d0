/*!
 * \file strided_copy.cc
 * \brief StridedCopy: simplification of the copy and the choice of its inner loop.
 */
#include "ops/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

/*! \brief Elements worth giving a thread. */
constexpr int64_t kGrain = 1 << 15;
/*! \brief Side of the square tiles of a transposing copy (32 x 8 bytes fits L1 twice over). */
constexpr int64_t kTile = 32;

/*!
 * \brief Drops unit dimensions and merges neighbours that are contiguous in both views.
 * Returns false when there is nothing to copy (an extent is 0).
 */
bool Simplify(const StridedCopySpec& spec, StridedCopySpec* out) {
  *out = StridedCopySpec();
  out->src_offset = spec.src_offset;
  out->dst_offset = spec.dst_offset;
  for (size_t d = 0; d < spec.extents.size(); ++d) {
    int64_t e = spec.extents[d], ss = spec.src_strides[d], ds = spec.dst_strides[d];
    if (e == 0) return false;
    if (e == 1) continue;
    if (!out->extents.empty() && out->src_strides.back() == ss * e && out->dst_strides.back() == ds * e) {
      out->extents.back() *= e;
      out->src_strides.back() = ss;
      out->dst_strides.back() = ds;
    } else {
      out->extents.push_back(e);
      out->src_strides.push_back(ss);
      out->dst_strides.push_back(ds);
    }
  }
  if (out->extents.empty()) out->extents = out->src_strides = out->dst_strides = {1};
  return true;
}

/*! \brief Walks the index space of the first `ndim` dimensions, tracking both offsets. */
class Cursor {
 public:
  Cursor(const StridedCopySpec& spec, int ndim) : spec_(spec), index_(ndim, 0) {}
  /*! \brief Moves to the `flat`-th index (row-major). */
  void Seek(int64_t flat) {
    src = spec_.src_offset;
    dst = spec_.dst_offset;
    for (int d = static_cast<int>(index_.size()) - 1; d >= 0; --d) {
      index_[d] = flat % spec_.extents[d];
      flat /= spec_.extents[d];
      src += index_[d] * spec_.src_strides[d];
      dst += index_[d] * spec_.dst_strides[d];
    }
  }
  /*! \brief Moves to the next index (wrapping to the first after the last). */
  void Next() {
    for (int d = static_cast<int>(index_.size()) - 1; d >= 0; --d) {
      src += spec_.src_strides[d];
      dst += spec_.dst_strides[d];
      if (++index_[d] < spec_.extents[d]) return;
      src -= index_[d] * spec_.src_strides[d];
      dst -= index_[d] * spec_.dst_strides[d];
      index_[d] = 0;
    }
  }
  int64_t src = 0;
  int64_t dst = 0;

 private:
  const StridedCopySpec& spec_;
  std::vector<int64_t> index_;
};

int64_t Product(const std::vector<int64_t>& extents, int end) {
  int64_t n = 1;
  for (int d = 0; d < end; ++d) n *= extents[d];
  return n;
}

/*! \brief Row by row along the last dimension: memcpy, fill or a strided loop. */
template <typename T>
void CopyRows(const StridedCopySpec& s, const T* src, T* dst) {
  int n = static_cast<int>(s.extents.size());
  int64_t inner = s.extents[n - 1], ss = s.src_strides[n - 1], ds = s.dst_strides[n - 1];
  auto body = [&](int64_t begin, int64_t end) {
    Cursor cursor(s, n - 1);
    cursor.Seek(begin);
    for (int64_t r = begin; r < end; ++r, cursor.Next()) {
      const T* in = src + cursor.src;
      T* out = dst + cursor.dst;
      if (ss == 1 && ds == 1) {
        std::memcpy(out, in, inner * sizeof(T));
      } else if (ss == 0 && ds == 1) {
        std::fill_n(out, inner, *in);
      } else {
        for (int64_t b = 0; b < inner; ++b) out[b * ds] = in[b * ss];
      }
    }
  };
  ParallelFor(Product(s.extents, n - 1), body, std::max<int64_t>(1, kGrain / inner));
}

/*!
 * \brief A transposing copy: dimension n-2 is contiguous in src, n-1 in dst. Square tiles
 * keep both the reads and the writes of a tile within a few cache lines each.
 */
template <typename T>
void CopyTiles(const StridedCopySpec& s, const T* src, T* dst) {
  int n = static_cast<int>(s.extents.size());
  int64_t rows = s.extents[n - 2], cols = s.extents[n - 1];
  int64_t src_row = s.src_strides[n - 2], src_col = s.src_strides[n - 1];
  int64_t dst_row = s.dst_strides[n - 2], dst_col = s.dst_strides[n - 1];
  int64_t row_tiles = (rows + kTile - 1) / kTile;
  auto body = [&](int64_t begin, int64_t end) {
    Cursor cursor(s, n - 2);
    for (int64_t u = begin; u < end; ++u) {
      cursor.Seek(u / row_tiles);
      int64_t r0 = (u % row_tiles) * kTile, r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          const T* in = src + cursor.src + r * src_row;
          T* out = dst + cursor.dst + r * dst_row;
          for (int64_t c = c0; c < c1; ++c) out[c * dst_col] = in[c * src_col];
        }
      }
    }
  };
  ParallelFor(Product(s.extents, n - 2) * row_tiles, body, std::max<int64_t>(1, kGrain / (kTile * cols)));
}

/*!
 * \brief When the last dimension is contiguous in dst but strided in src, and another
 * dimension is contiguous in src, moves that one next to the last (for CopyTiles).
 */
bool ArrangeForTiles(StridedCopySpec* s) {
  int n = static_cast<int>(s->extents.size());
  if (n < 2 || s->dst_strides[n - 1] != 1 || s->src_strides[n - 1] == 1 || s->src_strides[n - 1] == 0 ||
      s->extents[n - 1] < 4) {
    return false;
  }
  for (int j = n - 2; j >= 0; --j) {
    if (s->src_strides[j] != 1) continue;
    for (auto* v : {&s->extents, &s->src_strides, &s->dst_strides}) {
      int64_t moved = (*v)[j];
      v->erase(v->begin() + j);
      v->insert(v->end() - 1, moved);
    }
    return true;
  }
  return false;
}

template <typename T>
void CopyTyped(StridedCopySpec s, const void* src, void* dst) {
  const T* in = static_cast<const T*>(src);
  T* out = static_cast<T*>(dst);
  if (ArrangeForTiles(&s)) {
    CopyTiles(s, in, out);
  } else {
    CopyRows(s, in, out);
  }
}

}  // namespace

std::vector<int64_t> ContiguousStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.ndim());
  int64_t stride = 1;
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

void StridedCopy(const StridedCopySpec& spec, const void* src, void* dst, size_t elem_size) {
  StridedCopySpec s;
  if (!Simplify(spec, &s)) return;
  switch (elem_size) {
    case 1:
      CopyTyped<uint8_t>(std::move(s), src, dst);
      break;
    case 2:
      CopyTyped<uint16_t>(std::move(s), src, dst);
      break;
    case 4:
      CopyTyped<uint32_t>(std::move(s), src, dst);
      break;
    case 8:
      CopyTyped<uint64_t>(std::move(s), src, dst);
      break;
    default:
      throw Error(StrCat("StridedCopy: unsupported element size ", elem_size));
  }
}

void StridedCopy(const StridedCopySpec& spec, const NDArray& src, const NDArray& dst) {
  IR_CHECK(src.dtype() == dst.dtype()) << "StridedCopy from " << DTypeName(src.dtype()) << " to "
                                       << DTypeName(dst.dtype());
  if (src.Size() == 0 || dst.Size() == 0) return;
  StridedCopy(spec, src.data(), dst.data(), DTypeSize(src.dtype()));
}

void CopyUnlessAliased(const NDArray& src, const NDArray& dst) {
  IR_CHECK(src.nbytes() == dst.nbytes()) << "copy of " << src.nbytes() << " bytes into " << dst.nbytes();
  if (dst.Overlaps(src) || src.nbytes() == 0) return;
  const char* in = static_cast<const char*>(src.data());
  char* out = static_cast<char*>(dst.data());
  auto body = [&](int64_t begin, int64_t end) { std::memcpy(out + begin, in + begin, end - begin); };
  ParallelFor(static_cast<int64_t>(src.nbytes()), body, int64_t{1} << 20);
}

void Fill(const NDArray& dst, double value) {
  IR_ALL_TYPES_SWITCH(dst.dtype(), DT, {
    DT v = static_cast<DT>(value);
    DT* out = dst.data<DT>();
    ParallelFor(dst.Size(), [&](int64_t begin, int64_t end) { std::fill(out + begin, out + end, v); });
  });
}

void CopyDeviceKernel(DeviceKernelContext& dev, const NodeAttrs&, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  dev.Copy(in[0], out[0]);
}

}  // namespace op
}  // namespace ir
