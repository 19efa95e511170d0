/*!
 * \file collapse_sum.cc
 * \brief collapse_sum_like(data, like): sums `data` over the dimensions along which `like`
 * was broadcast to it, giving `like`'s shape. It is the gradient of broadcasting, so every
 * broadcasting op's FGradient ends in it; when nothing was broadcast it is a copy, or nothing
 * when the memory planner lets the output reuse the input.
 */
#include <algorithm>

#include "ir/device_kernel.h"
#include "ops/array/array_vectorize.h"
#include "ops/op_common.h"
#include "ops/reduce/reduce_device.h"

namespace ir {
namespace op {
namespace {

/*! \brief Throws naming the node unless `like` broadcasts to `data` (so data can be summed to it). */
void CheckCollapsible(const NodeAttrs& attrs, const Shape& data, const Shape& like) {
  bool ok = like.ndim() <= data.ndim();
  for (int i = 0; ok && i < like.ndim(); ++i) {
    int64_t l = like[i], d = data[data.ndim() - like.ndim() + i];
    ok = l == 1 || l == d || l == kUnknownDim || d == kUnknownDim;
  }
  IR_CHECK(ok) << NodeDesc(attrs) << ": cannot sum shape " << data << " down to shape " << like << " (" << like
               << " does not broadcast to " << data << ")";
}

bool CollapseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignShape(attrs, "input 1 (like)", &(*in)[1], (*out)[0]);
  if ((*in)[0].rank_known() && (*in)[1].rank_known()) CheckCollapsible(attrs, (*in)[0], (*in)[1]);
  return AllKnown(*in, *out);
}

bool CollapseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
  AssignType(attrs, "input 0", &(*in)[0], (*out)[0]);
  CheckDType(attrs, "input", (*in)[0], NumericTypes());
  return AllKnown(*in, *out);
}

/*!
 * \brief data's axes as runs that are all kept or all summed (extent-1 axes dropped, adjacent
 * axes of one kind merged): outer kept and summed runs with their element strides in data,
 * and the innermost run, which is contiguous.
 */
struct CollapsePlan {
  std::vector<int64_t> kept_dims, kept_strides, summed_dims, summed_strides;
  int64_t inner = 1;
  bool inner_kept = true;

  CollapsePlan(const Shape& data, const Shape& like) {
    std::vector<int64_t> dims;
    std::vector<bool> summed;
    int offset = data.ndim() - like.ndim();
    for (int i = 0; i < data.ndim(); ++i) {
      if (data[i] == 1) continue;
      bool s = i < offset || like[i - offset] == 1;
      if (!dims.empty() && summed.back() == s) {
        dims.back() *= data[i];
      } else {
        dims.push_back(data[i]);
        summed.push_back(s);
      }
    }
    if (dims.empty()) return;
    inner = dims.back();
    inner_kept = !summed.back();
    int64_t stride = inner;
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
      auto& d = summed[i] ? summed_dims : kept_dims;
      auto& s = summed[i] ? summed_strides : kept_strides;
      d.insert(d.begin(), dims[i]);
      s.insert(s.begin(), stride);
      stride *= dims[i];
    }
  }
};

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

/*! \brief Element offset in data of row-major position `index` over `dims`. */
int64_t OffsetOf(int64_t index, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    offset += (index % dims[i]) * strides[i];
    index /= dims[i];
  }
  return offset;
}

/*!
 * \brief The sum. Output row r holds `width` values (the inner run when it is kept, else 1).
 * Its summed elements are numbered f = s * run + j over summed positions s and, when the inner
 * run is summed, its elements j (run = its length, else 1). Rows are split across threads;
 * when there are fewer rows than threads and much work, blocks of kept columns are split
 * (when there are many), else the summed elements, whose partial sums are added in a fixed
 * order (so results do not depend on scheduling).
 */
/*! \brief Kept columns per task when threads split the columns. */
constexpr int64_t kColumnBlock = 256;

template <typename T>
void CollapseSum(const NDArray& data, const NDArray& out) {
  CollapsePlan p(data.shape(), out.shape());
  const T* src = data.data<T>();
  T* dst = out.data<T>();
  int64_t rows = Product(p.kept_dims), positions = Product(p.summed_dims);
  int64_t width = p.inner_kept ? p.inner : 1, run = p.inner_kept ? 1 : p.inner, total = positions * run;
  std::vector<int64_t> summed_offsets(positions);
  for (int64_t s = 0; s < positions; ++s) summed_offsets[s] = OffsetOf(s, p.summed_dims, p.summed_strides);
  // Adds summed elements [f_begin, f_end) of row r into acc.
  auto accumulate = [&](int64_t r, int64_t f_begin, int64_t f_end, T* acc) {
    const T* base = src + OffsetOf(r, p.kept_dims, p.kept_strides);
    if (p.inner_kept) {
      for (int64_t s = f_begin; s < f_end; ++s) {
        const T* block = base + summed_offsets[s];
        for (int64_t j = 0; j < width; ++j) acc[j] += block[j];
      }
      return;
    }
    T sum = 0;
    for (int64_t f = f_begin; f < f_end;) {
      int64_t j0 = f % run, j1 = std::min(run, j0 + (f_end - f));
      const T* block = base + summed_offsets[f / run];
#pragma omp simd reduction(+ : sum)
      for (int64_t j = j0; j < j1; ++j) sum += block[j];
      f += j1 - j0;
    }
    acc[0] += sum;
  };
  int64_t chunks = std::min<int64_t>(NumThreads(), total);
  if (rows >= chunks || data.Size() < (1 << 16)) {
    ParallelFor(
        rows,
        [&](int64_t begin, int64_t end) {
          std::fill(dst + begin * width, dst + end * width, T(0));
          for (int64_t r = begin; r < end; ++r) accumulate(r, 0, total, dst + r * width);
        },
        std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, total * width)));
    return;
  }
  if (p.inner_kept && width >= kColumnBlock * chunks) {
    // Many kept columns (a bias gradient [N, C] -> [C]): threads take blocks of columns and
    // sum them in the serial order, with no partial sums to combine.
    const int64_t blocks = (width + kColumnBlock - 1) / kColumnBlock;
    ParallelFor(
        rows * blocks,
        [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            const int64_t r = u / blocks, j0 = u % blocks * kColumnBlock, j1 = std::min(width, j0 + kColumnBlock);
            T* acc = dst + r * width;
            std::fill(acc + j0, acc + j1, T(0));
            const T* base = src + OffsetOf(r, p.kept_dims, p.kept_strides);
            for (int64_t s = 0; s < positions; ++s) {
              const T* block = base + summed_offsets[s];
#pragma omp simd
              for (int64_t j = j0; j < j1; ++j) acc[j] += block[j];
            }
          }
        },
        1);
    return;
  }
  std::vector<T> partial(chunks * rows * width, T(0));
  ParallelFor(
      chunks,
      [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          for (int64_t r = 0; r < rows; ++r) {
            accumulate(r, total * c / chunks, total * (c + 1) / chunks, &partial[(c * rows + r) * width]);
          }
        }
      },
      1);
  for (int64_t i = 0; i < rows * width; ++i) {
    T sum = 0;
    for (int64_t c = 0; c < chunks; ++c) sum += partial[c * rows * width + i];
    dst[i] = sum;
  }
}

void CollapseCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  if (in[0].Size() == out[0].Size()) {  // nothing was broadcast
    if (!out[0].Overlaps(in[0])) out[0].CopyFrom(in[0].Reshape(out[0].shape()));
    return;
  }
  IR_NUMERIC_SWITCH(out[0].dtype(), T, CollapseSum<T>(in[0], out[0]));
}

/*! \brief On devices: a copy when nothing was broadcast, else the strided sum over the broadcast dimensions. */
void CollapseDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  if (in[0].Size() == out[0].Size()) return dev.Copy(in[0], out[0]);
  const Shape& data = in[0].shape();
  const Shape& like = out[0].shape();
  int offset = data.ndim() - like.ndim();
  std::vector<bool> reduced(data.ndim());
  for (int d = 0; d < data.ndim(); ++d) reduced[d] = d < offset || (like[d - offset] == 1 && data[d] != 1);
  DeviceStridedReduce(dev, attrs, in, out, "sum", reduced);
}

// ---------------------------------------------------------------- FVectorize

/*!
 * \brief collapse_sum_like: the sum over the axes `like` was broadcast along, per iteration
 * (a sum keeping dims, then a reshape to like's shape); a copy-free pass-through when none was.
 */
std::vector<PforValue> CollapseSumVectorize(PforContext& ctx) {
  const Shape& data = ctx.in_shape(0);
  const Shape& like = ctx.out_shape(0);
  const bool stacked = ctx.stacked(0);
  if (data == like) return {ctx.input(0)};
  const int offset = stacked ? 1 : 0, lead = data.ndim() - like.ndim();
  std::vector<int64_t> axes;
  for (int a = 0; a < data.ndim(); ++a) {
    if (a < lead || (like[a - lead] == 1 && data[a] != 1)) axes.push_back(a + offset);
  }
  NodeEntry sum = ctx.Make("sum", {ctx.input(0).entry}, {{"axis", ShapeAttr(axes)}, {"keepdims", "1"}});
  std::vector<int64_t> dims = stacked ? Leading(ctx.n(), like) : like.dims();
  return {PforValue{ctx.Make("reshape", {sum}, {{"shape", ShapeAttr(dims)}}), stacked}};
}

}  // namespace

IR_REGISTER_OP(collapse_sum_like)
    .describe(
        "data summed over the dimensions along which like's shape broadcasts to data's, "
        "giving like's shape (the gradient of broadcasting; like gives the shape only).")
    .set_num_inputs(2)
    .set_input_names({"data", "like"})
    .set_attr<FInferShape>("FInferShape", CollapseShape)
    .set_attr<FInferType>("FInferType", CollapseType)
    .set_attr<FCompute>("FCompute", CollapseCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", CollapseDevice)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>{
                               GradNode("broadcast_like", n, "broadcast_like", {og[0], In(n, 0)}), NodeEntry()};
                         })
    // Output and data share a buffer only when equally large, i.e. when nothing is summed.
    .set_attr<FInplaceOption>("FInplaceOption",
                              [](const NodeAttrs&) {
                                return std::vector<std::pair<int, int>>{{0, 0}};
                              })
    .set_attr<TOpPattern>("TOpPattern", kCommReduce)
    .set_attr<FVectorize>("FVectorize", CollapseSumVectorize);

}  // namespace op
}  // namespace ir
