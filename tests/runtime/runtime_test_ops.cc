#include "runtime/runtime_test_ops.h"

#include <random>

#include "ir/node.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_common.h"

namespace ir {
namespace runtime_test {

NodeEntry Op(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
             const std::map<std::string, std::string>& attrs) {
  return MakeNode(op, name, std::move(inputs), attrs);
}

NodeEntry Var(const std::string& name, const std::map<std::string, std::string>& attrs) {
  return NodeEntry{Node::CreateVariable(name, attrs), 0};
}

NodeEntry Variable(const std::string& name) { return Var(name, {{"__kind__", "variable"}}); }

NDArray Filled(const Shape& shape, float value) {
  return NDArray::FromVector<float>(shape, std::vector<float>(shape.Size(), value));
}

SessionOptions UnfusedOptions() {
  SessionOptions options;
  options.fusion = false;
  return options;
}

namespace {

using op::ElemwiseShape;
using op::ElemwiseType;

/*! \brief Accepts only the listed parameter keys (and hidden ones), kept as strings. */
std::function<void(NodeAttrs*)> KeysParser(std::vector<std::string> keys) {
  return [keys](NodeAttrs* attrs) {
    for (const auto& kv : attrs->dict) {
      bool hidden = kv.first.size() > 4 && kv.first.rfind("__", 0) == 0;
      IR_CHECK(hidden || std::find(keys.begin(), keys.end(), kv.first) != keys.end())
          << op::NodeDesc(*attrs) << ": unknown parameter '" << kv.first << "'";
    }
  };
}

template <typename F>
FCompute Map1(F f) {
  return [f](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
    IR_NUMERIC_SWITCH(out[0].dtype(), DT, {
      const DT* a = in[0].data<DT>();
      DT* o = out[0].data<DT>();
      for (int64_t i = 0; i < out[0].Size(); ++i) o[i] = f(a[i]);
    });
  };
}

void AddCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  IR_NUMERIC_SWITCH(out[0].dtype(), DT, {
    const DT* a = in[0].data<DT>();
    const DT* b = in[1].data<DT>();
    DT* o = out[0].data<DT>();
    for (int64_t i = 0; i < out[0].Size(); ++i) o[i] = a[i] + b[i];
  });
}

bool MatmulShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape &a = (*in)[0], &b = (*in)[1];
  if (a.ndim() != 2 || b.ndim() != 2) return false;
  IR_CHECK(a[1] < 0 || b[0] < 0 || a[1] == b[0]) << op::NodeDesc(attrs) << ": cannot multiply " << a << " by " << b;
  op::AssignShape(attrs, "output 0", &(*out)[0], Shape({a[0], b[1]}));
  return op::AllKnown(*in, *out);
}

void MatmulCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  int64_t m = in[0].shape()[0], k = in[0].shape()[1], n = in[1].shape()[1];
  const float *a = in[0].data<float>(), *b = in[1].data<float>();
  float* c = out[0].data<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += a[i * k + t] * b[t * n + j];
      c[i * n + j] = acc;
    }
  }
}

void CastCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  IR_ALL_TYPES_SWITCH(in[0].dtype(), SRC, {
    const SRC* a = in[0].data<SRC>();
    IR_ALL_TYPES_SWITCH(out[0].dtype(), DST, {
      DST* o = out[0].data<DST>();
      for (int64_t i = 0; i < out[0].Size(); ++i) o[i] = static_cast<DST>(a[i]);
    });
  });
}

void RandomCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<NDArray>&,
                   const std::vector<NDArray>& out) {
  std::mt19937_64 gen(ctx.seed);
  float* o = out[0].data<float>();
  for (int64_t i = 0; i < out[0].Size(); ++i) o[i] = static_cast<float>(gen() >> 40) / static_cast<float>(1 << 24);
}

std::vector<std::pair<int, int>> InplaceBoth(const NodeAttrs&) { return {{0, 0}, {1, 0}}; }
std::vector<std::pair<int, int>> InplaceFirst(const NodeAttrs&) { return {{0, 0}}; }

IR_REGISTER_OP(runtime_test_add)
    .set_num_inputs(2)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FInplaceOption>("FInplaceOption", InplaceBoth)
    .set_attr<FCompute>("FCompute", AddCompute)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(runtime_test_scale)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FInplaceOption>("FInplaceOption", InplaceFirst)
    .set_attr<FCompute>("FCompute", Map1([](auto x) { return x + x; }))
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(runtime_test_matmul)
    .set_num_inputs(2)
    .set_attr<FInferShape>("FInferShape", MatmulShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", MatmulCompute)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(runtime_test_cast)
    .set_num_inputs(1)
    .set_attr_parser(KeysParser({"dtype"}))
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            return op::OutputsAre(DTypeFromName(attrs.dict.at("dtype")), in, out);
                          })
    .set_attr<FCompute>("FCompute", CastCompute)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(runtime_test_random)
    .set_num_inputs(1)
    .set_attr_parser(KeysParser({"seed"}))
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out) {
                            return op::OutputsAre(DType::kFloat32, in, out);
                          })
    .set_attr<FCompute>("FCompute", RandomCompute)
    .set_attr<TIsStateful>("TIsStateful", true)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(runtime_test_no_kernel)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(runtime_test_unknown)
    .set_num_inputs(1)
    .set_attr<FInferShape>("FInferShape",
                           [](const NodeAttrs&, std::vector<Shape>*, std::vector<Shape>* out) {
                             (*out)[0] = Shape::UnknownDims(2);
                             return false;
                           })
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", Map1([](auto x) { return x; }))
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace
}  // namespace runtime_test
}  // namespace ir
