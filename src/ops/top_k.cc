/*!
 * \file top_k.cc
 * \brief top_k (TensorFlow TopKV2), its gradient top_k_grad, and in_top_k (InTopK, InTopKV2):
 * CPU kernels and device kernels (in the library of nn_device_library.h).
 */
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ops/nn_device_library.h"

namespace ir {
namespace op {
namespace {

// ---------------------------------------------------------------- top_k, in_top_k

struct TopKParam : public dmlc::Parameter<TopKParam> {
  int k;
  bool sorted;
  DMLC_DECLARE_PARAMETER(TopKParam) {
    DMLC_DECLARE_FIELD(k).set_default(1).set_lower_bound(0).describe("How many of the largest to take.");
    DMLC_DECLARE_FIELD(sorted).set_default(true).describe("Largest first (always so here, as TensorFlow's CPU).");
  }
};
DMLC_REGISTER_PARAMETER(TopKParam);

bool TopKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  int k = dmlc::get<TopKParam>(attrs.parsed).k;
  if (!x.rank_known()) return false;
  IR_CHECK(x.ndim() >= 1) << NodeDesc(attrs) << ": input must have rank at least 1, got shape " << x;
  int64_t last = x[x.ndim() - 1];
  IR_CHECK(last < 0 || last >= k) << NodeDesc(attrs) << ": input " << x << " must have at least k = " << k
                                  << " columns in its last dimension";
  Shape y = x;
  y[y.ndim() - 1] = k;
  AssignShape(attrs, "output 0 (values)", &(*out)[0], y);
  AssignShape(attrs, "output 1 (indices)", &(*out)[1], y);
  return AllKnown(*in, *out);
}

/*! \brief Row by row: the k largest, largest first, equal values by lower index first. */
template <typename T>
void TopKKernel(int64_t k, const NDArray& x, const NDArray& values, const NDArray& indices) {
  int64_t n = x.shape()[x.shape().ndim() - 1], rows = n == 0 ? 0 : x.Size() / n;
  const T* px = x.data<T>();
  T* pv = values.data<T>();
  int32_t* pi = indices.data<int32_t>();
  ParallelFor(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<int32_t> order(n);
        for (int64_t r = begin; r < end; ++r) {
          const T* row = px + r * n;
          std::iota(order.begin(), order.end(), 0);
          auto before = [row](int32_t a, int32_t b) { return row[a] > row[b] || (!(row[b] > row[a]) && a < b); };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            pi[r * k + j] = order[j];
            pv[r * k + j] = row[order[j]];
          }
        }
      },
      16);
}

/*! \brief top_k_grad(dy, indices, like): dx of like's shape, dy scattered to the indices of each row. */
bool TopKGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 1 (indices)", &(*in)[1], (*in)[0]);
  AssignShape(attrs, "input 0 (dy)", &(*in)[0], (*in)[1]);
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[2]);
  (*in)[2] = (*out)[0];
  return AllKnown(*in, *out);
}

template <typename T>
void TopKGradKernel(const NDArray& dy, const NDArray& indices, const NDArray& dx) {
  const Shape& s = dx.shape();
  int64_t n = s[s.ndim() - 1], k = dy.shape()[s.ndim() - 1], rows = n == 0 ? 0 : dx.Size() / n;
  const T* pd = dy.data<T>();
  const int32_t* pi = indices.data<int32_t>();
  T* po = dx.data<T>();
  std::fill(po, po + dx.Size(), T(0));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      int32_t i = pi[r * k + j];
      IR_CHECK(i >= 0 && i < n) << "top_k_grad: index " << i << " out of range [0, " << n << ")";
      po[r * n + i] += pd[r * k + j];
    }
  }
}

bool InTopKShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 0 (predictions)", &(*in)[0], Shape::UnknownDims(2));
  AssignShape(attrs, "input 1 (targets)", &(*in)[1], Shape::UnknownDims(1));
  Shape& p = (*in)[0];
  Shape& t = (*in)[1];
  IR_CHECK(p[0] < 0 || t[0] < 0 || p[0] == t[0])
      << NodeDesc(attrs) << ": predictions " << p << " and targets " << t << " must have the same batch size";
  p[0] = t[0] = std::max(p[0], t[0]);
  AssignShape(attrs, "output 0", &(*out)[0], Shape{p[0]});
  return AllKnown(*in, *out);
}

bool InTopKType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "input 0 (predictions)", &(*in)[0], DType::kFloat32);
  if ((*in)[1] != DType::kUnknown) CheckDType(attrs, "input 1 (targets)", (*in)[1], {DType::kInt32, DType::kInt64});
  AssignType(attrs, "output 0", &(*out)[0], DType::kBool);
  return AllKnown(*in, *out);
}

/*!
 * \brief TensorFlow's InTopK: true when fewer than k predictions exceed the target's; false
 * when the target is out of range or its prediction is not finite.
 */
template <typename I>
void InTopKKernel(int64_t k, const NDArray& pred, const NDArray& targets, const NDArray& out) {
  int64_t rows = pred.shape()[0], classes = pred.shape()[1];
  const float* p = pred.data<float>();
  const I* t = targets.data<I>();
  bool* o = out.data<bool>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = p + r * classes;
    I target = t[r];
    if (target < 0 || target >= classes || !std::isfinite(row[target])) {
      o[r] = false;
      continue;
    }
    int64_t more = 0;
    for (int64_t c = 0; c < classes && more < k; ++c) more += row[c] > row[target];
    o[r] = more < k;
  }
}

}  // namespace

const char nn::kTopKDeviceC[] = R"(
/* top_k: element i of a row goes to slot (its rank) when that is below k. */
IR_KERNEL void top_k(IR_CONST_ARRAY(T, x), IR_ARRAY(T, values), IR_ARRAY(int, indices), const long n, const long cols,
                     const long k) {
  IR_OFFSET(x);
  IR_OFFSET(values);
  IR_OFFSET(indices);
  IR_THREAD_LOOP(e, n) {
    const long i = e % cols, row = e / cols;
    IR_GLOBAL const T* p = x + row * cols;
    long rank = 0;
    for (long j = 0; j < cols && rank < k; ++j) rank += p[j] > p[i] || (!(p[i] > p[j]) && j < i);
    if (rank < k) {
      values[row * k + rank] = p[i];
      indices[row * k + rank] = (int)i;
    }
  }
}

/* top_k_grad: dx[row, i] = the dy entries of the row whose index is i. */
IR_KERNEL void top_k_grad(IR_CONST_ARRAY(T, dy), IR_CONST_ARRAY(int, indices), IR_ARRAY(T, dx), const long n,
                          const long cols, const long k) {
  IR_OFFSET(dy);
  IR_OFFSET(indices);
  IR_OFFSET(dx);
  IR_THREAD_LOOP(e, n) {
    const long i = e % cols, row = e / cols;
    T acc = (T)0;
    for (long j = 0; j < k; ++j) acc += indices[row * k + j] == i ? dy[row * k + j] : (T)0;
    dx[e] = acc;
  }
}

/* in_top_k: fewer than k predictions of the row exceed the target's (false out of range or not finite). */
IR_KERNEL void in_top_k(IR_CONST_ARRAY(T, p), IR_CONST_ARRAY(int, t32), IR_CONST_ARRAY(long, t64), IR_ARRAY(uchar, out),
                        const long rows, const long cols, const long k, const long wide) {
  IR_OFFSET(p);
  IR_OFFSET(t32);
  IR_OFFSET(t64);
  IR_OFFSET(out);
  IR_THREAD_LOOP(r, rows) {
    const long target = wide ? t64[r] : (long)t32[r];
    IR_GLOBAL const T* row = p + r * cols;
    long more = 0;
    const int ok = target >= 0 && target < cols && row[target] - row[target] == (T)0;
    for (long c = 0; ok && c < cols && more < k; ++c) more += row[c] > row[target];
    out[r] = (uchar)(ok && more < k);
  }
}
)";

namespace {

/*! \brief top_k (kGrad false: x -> values, indices) or top_k_grad ((dy, indices, like) -> dx). */
template <bool kGrad>
void TopKDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  const NDArray& wide = kGrad ? out[0] : in[0];
  if (!nn::DeviceOrHost(dev, attrs, in, out, wide.dtype(), wide.shape().ndim())) return;
  int64_t cols = wide.shape()[wide.shape().ndim() - 1];
  int64_t k = (kGrad ? in[0] : out[0]).shape()[wide.shape().ndim() - 1];
  DeviceArgs args;
  args.Array(in[0]).Array(kGrad ? in[1] : out[0]).Array(kGrad ? out[0] : out[1]);
  args.Value(wide.Size()).Value(cols).Value(k);
  dev.Launch(nn::DeviceLibrary(), wide.dtype(), kGrad ? "top_k_grad" : "top_k", args,
             DeviceLaunch::Threads(wide.Size()));
}

void InTopKDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  bool wide = in[1].dtype() == DType::kInt64;
  DeviceArgs args;
  args.Array(in[0]);
  if (wide) {
    args.NullArray().Array(in[1]);
  } else {
    args.Array(in[1]).NullArray();
  }
  args.Array(out[0]).Value(in[0].shape()[0]).Value(in[0].shape()[1]);
  args.Value(int64_t{dmlc::get<TopKParam>(attrs.parsed).k}).Value(int64_t{wide});
  dev.Launch(nn::DeviceLibrary(), DType::kFloat32, "in_top_k", args, DeviceLaunch::Threads(out[0].Size()));
}

}  // namespace

IR_REGISTER_OP(top_k)
    .describe(
        "The k largest along the last axis, largest first, ties by lower index, and their int32 indices (TopKV2).")
    .set_num_inputs(1)
    .set_num_outputs(2)
    .set_input_names({"data"})
    .set_param<TopKParam>()
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"values", "indices"};
                                })
    .set_attr<FInferShape>("FInferShape", TopKShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            AssignType(attrs, "output 0 (values)", &(*out)[0], (*in)[0]);
                            AssignType(attrs, "input 0", &(*in)[0], (*out)[0]);
                            if ((*in)[0] != DType::kUnknown) CheckDType(attrs, "input", (*in)[0], NumericTypes());
                            AssignType(attrs, "output 1 (indices)", &(*out)[1], DType::kInt32);
                            return AllKnown(*in, *out);
                          })
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          int64_t k = dmlc::get<TopKParam>(attrs.parsed).k;
                          IR_NUMERIC_SWITCH(in[0].dtype(), T, TopKKernel<T>(k, in[0], out[0], out[1]));
                        })
    .set_attr<FGradient>(
        "FGradient",
        [](const NodePtr& n, const std::vector<NodeEntry>& og) {
          return std::vector<NodeEntry>{GradNode("top_k_grad", n, "top_k_grad", {og[0], Out(n, 1), In(n, 0)})};
        })
    .set_attr<FDeviceKernel>("FDeviceKernel", TopKDevice<false>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(top_k_grad)
    .describe("Gradient of top_k: dy added at the indices of each last-axis row of a zero tensor shaped like `like`.")
    .set_num_inputs(3)
    .set_input_names({"dy", "indices", "like"})
    .set_attr<FInferShape>("FInferShape", TopKGradShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            AssignType(attrs, "output 0", &(*out)[0], (*in)[0]);
                            AssignType(attrs, "input 0 (dy)", &(*in)[0], (*out)[0]);
                            AssignType(attrs, "input 1 (indices)", &(*in)[1], DType::kInt32);
                            return (*in)[0] != DType::kUnknown && (*in)[2] != DType::kUnknown;
                          })
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          IR_NUMERIC_SWITCH(in[0].dtype(), T, TopKGradKernel<T>(in[0], in[1], out[0]));
                        })
    .set_attr<FDeviceKernel>("FDeviceKernel", TopKDevice<true>)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(in_top_k)
    .describe("Whether each target's prediction is among the k largest of its row (TensorFlow InTopK/InTopKV2).")
    .set_num_inputs(2)
    .set_input_names({"predictions", "targets"})
    .set_param<TopKParam>()
    .set_attr<FInferShape>("FInferShape", InTopKShape)
    .set_attr<FInferType>("FInferType", InTopKType)
    .set_attr<FCompute>("FCompute",
                        [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
                          int64_t k = dmlc::get<TopKParam>(attrs.parsed).k;
                          if (in[1].dtype() == DType::kInt32) return InTopKKernel<int32_t>(k, in[0], in[1], out[0]);
                          InTopKKernel<int64_t>(k, in[0], in[1], out[0]);
                        })
    .set_attr<FGradient>("FGradient", ZeroGradient)
    .set_attr<FDeviceKernel>("FDeviceKernel", InTopKDevice)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
