/*!
 * \file strided_slice_spec.cc
 * \brief CanonicalizeStridedSlice, following TensorFlow's ValidateStridedSliceOp.
 */
#include "ops/strided_slice_spec.h"

#include <algorithm>

namespace ir {
namespace op {

DMLC_REGISTER_PARAMETER(StridedSliceParam);

namespace {

/*! \brief Where an output dimension comes from: an input dimension, a new axis, or nowhere. */
constexpr int kNewAxis = -1;
constexpr int kShrunk = -2;

bool Bit(int mask, size_t i) { return i < 31 && ((mask >> i) & 1) != 0; }

/*! \brief One entry of the slice spec (sparse) or one input dimension (dense). */
struct SliceEntry {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t stride = 1;
  bool begin_masked = false;
  bool end_masked = false;
  bool shrink = false;
  bool ellipsis = false;
  bool new_axis = false;
};

std::vector<SliceEntry> SparseEntries(const NodeAttrs& attrs, const StridedSliceParam& p) {
  size_t n = p.begin.size();
  IR_CHECK(p.end.size() == n && (p.strides.empty() || p.strides.size() == n))
      << NodeDesc(attrs) << ": begin, end and strides must have one length, got begin " << p.begin << ", end " << p.end
      << ", strides " << p.strides;
  IR_CHECK((p.ellipsis_mask & (p.ellipsis_mask - 1)) == 0)
      << NodeDesc(attrs) << ": ellipsis_mask " << p.ellipsis_mask << " has more than one bit set";
  std::vector<SliceEntry> sparse(n);
  bool has_ellipsis = false;
  for (size_t i = 0; i < n; ++i) {
    SliceEntry& e = sparse[i];
    e.begin = p.begin[i];
    e.end = p.end[i];
    e.stride = p.strides.empty() ? 1 : p.strides[i];
    e.begin_masked = Bit(p.begin_mask, i);
    e.end_masked = Bit(p.end_mask, i);
    e.ellipsis = Bit(p.ellipsis_mask, i);
    e.new_axis = !e.ellipsis && Bit(p.new_axis_mask, i);
    e.shrink = Bit(p.shrink_axis_mask, i);
    has_ellipsis |= e.ellipsis;
  }
  // Without an ellipsis, dimensions the spec does not name are taken whole.
  if (!has_ellipsis) {
    sparse.emplace_back();
    sparse.back().ellipsis = true;
  }
  return sparse;
}

/*!
 * \brief TensorFlow's BuildDenseSpec: one entry per input dimension (the ellipsis expanded to
 * whole dimensions), and for each output dimension where it comes from (`sources`).
 */
std::vector<SliceEntry> DenseEntries(const NodeAttrs& attrs, const std::vector<SliceEntry>& sparse, const Shape& in,
                                     std::vector<int>* sources) {
  int rank = in.ndim(), ns = static_cast<int>(sparse.size());
  int ellipsis_at = 0;
  while (!sparse[ellipsis_at].ellipsis) ++ellipsis_at;
  int new_axes_after_ellipsis = 0;
  for (int i = ellipsis_at + 1; i < ns; ++i) new_axes_after_ellipsis += sparse[i].new_axis;
  std::vector<SliceEntry> dense(rank);
  int full = 0;
  for (int i = 0; i < ns; ++i) {
    const SliceEntry& e = sparse[i];
    if (e.ellipsis) {
      int next = std::min(rank - (ns - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) {
        dense[full].begin_masked = dense[full].end_masked = true;
        sources->push_back(full);
      }
    } else if (e.new_axis) {
      sources->push_back(kNewAxis);
    } else {
      IR_CHECK(full < rank) << NodeDesc(attrs) << ": slice entry " << i << " refers to dimension " << full
                            << " but input " << in << " has rank " << rank;
      dense[full] = e;
      sources->push_back(e.shrink ? kShrunk : full);
      ++full;
    }
  }
  return dense;
}

/*! \brief Resolves one dense entry against a known extent: first index and count. */
void Resolve(const NodeAttrs& attrs, const Shape& in, int d, const SliceEntry& e, int64_t* begin, int64_t* size) {
  int64_t dim = in[d];
  if (e.shrink) {
    int64_t index = e.begin < 0 ? dim + e.begin : e.begin;
    IR_CHECK(0 <= index && index < dim) << NodeDesc(attrs) << ": index " << e.begin
                                        << " is out of bounds for dimension " << d << " of input " << in;
    *begin = index;
    *size = 1;
    return;
  }
  // Valid first/last positions: [0, dim] going forward, [-1, dim - 1] going backward.
  int64_t lo = e.stride > 0 ? 0 : -1, hi = e.stride > 0 ? dim : dim - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_begin) {
    if (masked) return (e.stride > 0) == is_begin ? lo : hi;
    return std::clamp(x < 0 ? dim + x : x, lo, hi);
  };
  *begin = canonical(e.begin, e.begin_masked, true);
  int64_t length = canonical(e.end, e.end_masked, false) - *begin;
  bool empty = length == 0 || (length < 0) != (e.stride < 0);
  *size = empty ? 0 : length / e.stride + (length % e.stride != 0 ? 1 : 0);
}

}  // namespace

StridedSliceSpec CanonicalizeStridedSlice(const NodeAttrs& attrs, const StridedSliceParam& param, const Shape& in) {
  std::vector<SliceEntry> sparse = SparseEntries(attrs, param);
  StridedSliceSpec spec;
  if (!in.rank_known()) return spec;
  std::vector<int> sources;
  std::vector<SliceEntry> dense = DenseEntries(attrs, sparse, in, &sources);
  int rank = in.ndim();
  spec.begin.assign(rank, 0);
  spec.stride.assign(rank, 1);
  spec.size.assign(rank, kUnknownDim);
  for (int d = 0; d < rank; ++d) {
    const SliceEntry& e = dense[d];
    IR_CHECK(e.stride != 0) << NodeDesc(attrs) << ": stride 0 for dimension " << d << " of input " << in;
    IR_CHECK(!e.shrink || e.stride > 0) << NodeDesc(attrs) << ": shrinking dimension " << d
                                        << " needs a positive stride, got " << e.stride;
    spec.stride[d] = e.stride;
    if (in[d] >= 0) {
      Resolve(attrs, in, d, e, &spec.begin[d], &spec.size[d]);
    } else if (e.shrink) {
      spec.size[d] = 1;
    }
  }
  std::vector<int64_t> out;
  for (int source : sources) {
    if (source == kNewAxis) {
      out.push_back(1);
    } else if (source != kShrunk) {
      out.push_back(spec.size[source]);
    }
  }
  spec.out_shape = Shape(out);
  return spec;
}

}  // namespace op
}  // namespace ir
