/*!
 * \file reduce_device.cc
 * \brief The strided reduction kernels (portable kernel C) and their launch geometry.
 */
#include "ops/reduce/reduce_device.h"

#include <limits>
#include <utility>

#include "ops/device_walk.h"
#include "ops/reduce/reduce_kernels.h"

namespace ir {
namespace op {
namespace {

const DeviceKernelSource& kReduceSource = RegisterDeviceKernelSource({"reduce_strided", std::string(kDeviceWalkC) + R"(
/* kind: 0 sum, 1 prod, 2 max, 3 min (a mean is a sum with divide set). */
IR_FUNC T reduce_combine(const long kind, const T a, const T b) {
  if (kind == 1) return a * b;
  if (kind == 2) return b > a ? b : a;
  if (kind == 3) return b < a ? b : a;
  return a + b;
}

/* One work-item per output o: the innermost reduced run in blocks of 256, each block's total
 * combined into the result. */
IR_KERNEL void reduce_strided(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const walk_t kept, const walk_t red,
                              const long num_kept, const long num_red, const long kind, const long divide,
                              const T init) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  const long e = red.ndim > 0 ? red.extent[red.ndim - 1] : 1;
  const long s = red.ndim > 0 ? red.stride[red.ndim - 1] : 0;
  const long rows = e > 0 ? num_red / e : 0;
  walk_t outer = red;
  outer.ndim = red.ndim > 0 ? red.ndim - 1 : 0;
  IR_THREAD_LOOP(o, num_kept) {
    const long base = walk_offset(kept, o);
    T acc = init;
    for (long r = 0; r < rows; ++r) {
      const long row = base + walk_offset(outer, r);
      for (long j0 = 0; j0 < e; j0 += 256) {
        const long j1 = j0 + 256 < e ? j0 + 256 : e;
        T block = init;
        for (long j = j0; j < j1; ++j) block = reduce_combine(kind, block, x[row + j * s]);
        acc = reduce_combine(kind, acc, block);
      }
    }
    y[o] = divide ? (T)(acc / (T)num_red) : acc;
  }
}

/* One group per output o: each work-item combines every IR_GROUP_SIZE-th element, then a tree. */
IR_KERNEL void reduce_strided_group(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const walk_t kept, const walk_t red,
                                    const long num_kept, const long num_red, const long kind, const long divide,
                                    const T init) {
  IR_SHARED T partial[IR_GROUP_SIZE];
  IR_OFFSET(x);
  IR_OFFSET(y);
  const long lid = IR_LOCAL_ID;
  IR_GROUP_LOOP(o, num_kept) {
    const long base = walk_offset(kept, o);
    T acc = init;
    IR_LOCAL_LOOP(r, num_red) acc = reduce_combine(kind, acc, x[base + walk_offset(red, r)]);
    partial[lid] = acc;
    IR_BARRIER();
    for (long step = IR_GROUP_SIZE / 2; step > 0; step >>= 1) {
      if (lid < step) partial[lid] = reduce_combine(kind, partial[lid], partial[lid + step]);
      IR_BARRIER();
    }
    if (lid == 0) y[o] = divide ? (T)(partial[0] / (T)num_red) : partial[0];
    IR_BARRIER();
  }
}
)",
                                                                      NumericTypes()});

/*! \brief The kernel's code of `kind`; throws naming the node for an unknown kind. */
int64_t KindCode(const NodeAttrs& attrs, const std::string& kind) {
  if (kind == "sum" || kind == "mean") return 0;
  if (kind == "prod") return 1;
  if (kind == "max") return 2;
  if (kind == "min") return 3;
  throw Error(StrCat(NodeDesc(attrs), ": no device reduction of kind '", kind, "'"));
}

/*! \brief The value of an empty reduction `kind` as a T argument (the CPU reducers' identities, exactly). */
void AddIdentity(DeviceArgs* args, const std::string& kind, DType dtype) {
  IR_NUMERIC_SWITCH(dtype, DT, {
    DT init = kind == "max"    ? reduce::MaxReducer::Identity<DT>()
              : kind == "min"  ? reduce::MinReducer::Identity<DT>()
              : kind == "prod" ? reduce::ProdReducer::Identity<DT>()
                               : reduce::SumReducer::Identity<DT>();
    args->Value(init);
  });
}

/*! \brief The kept and the reduced dims of a contiguous `shape` as walks (extent-1 dims dropped, neighbours of one
 * kind merged). */
struct ReduceWalks {
  std::vector<int64_t> kept_extent, kept_stride, red_extent, red_stride;
  int64_t num_kept = 1, num_red = 1;
};

ReduceWalks MakeWalks(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<std::pair<int64_t, bool>> dims = reduce::MergeReducedDims(shape, reduced);
  ReduceWalks w;
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i].first;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    bool red = dims[i].second;
    (red ? w.red_extent : w.kept_extent).push_back(dims[i].first);
    (red ? w.red_stride : w.kept_stride).push_back(strides[i]);
    (red ? w.num_red : w.num_kept) *= dims[i].first;
  }
  return w;
}

}  // namespace

void DeviceStridedReduce(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out, const std::string& kind, const std::vector<bool>& reduced) {
  const NDArray& x = in[0];
  const NDArray& y = out[0];
  int64_t code = KindCode(attrs, kind);
  ReduceWalks w = MakeWalks(x.shape(), reduced);
  DeviceWalk kept, red;
  if (!MakeDeviceWalk(w.kept_extent, w.kept_stride, &kept) || !MakeDeviceWalk(w.red_extent, w.red_stride, &red)) {
    return dev.RunOnHost(attrs, in, out);
  }
  bool mean = kind == "mean";
  if (mean && w.num_red == 0) {  // as the CPU's mean: 0 / 0 is NaN in floats, 0 in integers
    bool integer = y.dtype() == DType::kInt32 || y.dtype() == DType::kInt64;
    return dev.Fill(y, integer ? 0.0 : std::numeric_limits<double>::quiet_NaN());
  }
  DeviceArgs args;
  args.Array(x).Array(y).Value(kept).Value(red).Value(w.num_kept).Value(w.num_red).Value(code);
  args.Value(int64_t{mean});
  AddIdentity(&args, kind, x.dtype());
  bool group = w.num_red >= 256 && w.num_kept <= 1024;
  dev.Launch(kReduceSource, x.dtype(), group ? "reduce_strided_group" : "reduce_strided", args,
             group ? DeviceLaunch::Groups(w.num_kept) : DeviceLaunch::Threads(w.num_kept));
}

void DeviceReduce(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out, const std::string& kind, const std::vector<int>& axes) {
  if (!axes.empty() && axes.back() - axes.front() + 1 == static_cast<int>(axes.size())) {
    return dev.RunDerived(attrs, in, out);
  }
  std::vector<bool> reduced(in[0].shape().ndim(), false);
  for (int axis : axes) reduced.at(axis) = true;
  DeviceStridedReduce(dev, attrs, in, out, kind, reduced);
}

}  // namespace op
}  // namespace ir
