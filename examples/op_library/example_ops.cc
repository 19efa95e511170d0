/*!
 * \file example_ops.cc
 * \brief An op library built outside the core: `axpby(x, y) = alpha * x + beta * y`.
 *
 * It includes only <ir/...> headers and links the installed core library. Loading it
 * (ir::LoadOpLibrary, IRLoadOpLibrary, tf.load_op_library) registers the op with its
 * whole story, so every pass treats it like a built-in op.
 */
#include <ir/ast.h>
#include <ir/ndarray.h>
#include <ir/op.h>
#include <ir/op_attr_types.h>
#include <ir/op_kernel.h>
#include <ir/rewrite.h>

#include <sstream>

namespace example {

struct AxpbyParam : public dmlc::Parameter<AxpbyParam> {
  double alpha;
  double beta;
  DMLC_DECLARE_PARAMETER(AxpbyParam) {
    DMLC_DECLARE_FIELD(alpha).set_default(1.0).describe("Scale of x.");
    DMLC_DECLARE_FIELD(beta).set_default(1.0).describe("Scale of y.");
  }
};
DMLC_REGISTER_PARAMETER(AxpbyParam);

bool AxpbyShape(const ir::NodeAttrs& attrs, std::vector<ir::Shape>* in, std::vector<ir::Shape>* out) {
  ir::Shape merged;
  IR_CHECK(ir::Shape::Merge((*in)[0], (*in)[1], &merged) && ir::Shape::Merge(merged, (*out)[0], &merged))
      << "axpby (node '" << attrs.name << "'): x " << (*in)[0] << " and y " << (*in)[1] << " must have the same shape";
  (*in)[0] = (*in)[1] = (*out)[0] = merged;
  return merged.is_known();
}

bool AxpbyType(const ir::NodeAttrs& attrs, std::vector<ir::DType>* in, std::vector<ir::DType>* out) {
  ir::DType t = (*in)[0] != ir::DType::kUnknown ? (*in)[0] : (*in)[1];
  if (t == ir::DType::kUnknown) t = (*out)[0];
  for (ir::DType* slot : {&(*in)[0], &(*in)[1], &(*out)[0]}) {
    IR_CHECK(*slot == ir::DType::kUnknown || *slot == t)
        << "axpby (node '" << attrs.name << "'): inputs must have one dtype";
    *slot = t;
  }
  return t != ir::DType::kUnknown;
}

// d/dx = alpha * g and d/dy = beta * g, each built from axpby itself.
std::vector<ir::NodeEntry> AxpbyGradient(const ir::NodePtr& node, const std::vector<ir::NodeEntry>& ograds) {
  const auto& param = dmlc::get<AxpbyParam>(node->attrs.parsed);
  auto scaled = [&](double scale, const char* suffix) {
    std::ostringstream text;
    text.precision(17);
    text << scale;
    return ir::MakeNode("axpby", node->attrs.name + suffix, {ograds[0], ograds[0]},
                        {{"alpha", text.str()}, {"beta", "0"}});
  };
  return {scaled(param.alpha, "_grad_x"), scaled(param.beta, "_grad_y")};
}

// The CPU kernel: what runs when the op is not fused.
template <typename T>
void AxpbyLoop(const AxpbyParam& p, const ir::NDArray& x, const ir::NDArray& y, const ir::NDArray& out) {
  const T* px = x.data<T>();
  const T* py = y.data<T>();
  T* po = out.data<T>();
  const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
  for (int64_t i = 0; i < out.Size(); ++i) po[i] = alpha * px[i] + beta * py[i];
}

void AxpbyCompute(const ir::OpContext&, const ir::NodeAttrs& attrs, const std::vector<ir::NDArray>& in,
                  const std::vector<ir::NDArray>& out) {
  const auto& param = dmlc::get<AxpbyParam>(attrs.parsed);
  switch (out[0].dtype()) {
    case ir::DType::kFloat32:
      AxpbyLoop<float>(param, in[0], in[1], out[0]);
      break;
    case ir::DType::kFloat64:
      AxpbyLoop<double>(param, in[0], in[1], out[0]);
      break;
    default:
      throw ir::Error("axpby (node '" + attrs.name + "'): float32 or float64 only");
  }
}

// The element expression: lets Fusion put axpby into generated kernels on every target.
std::vector<ir::ast::Expr> AxpbyCodeGen(const ir::NodeAttrs& attrs, const std::vector<ir::ast::Expr>& in) {
  const auto& param = dmlc::get<AxpbyParam>(attrs.parsed);
  if (in[0]->dtype != ir::DType::kFloat32 && in[0]->dtype != ir::DType::kFloat64) return {};
  return {ir::ast::ConstLike(param.alpha, in[0]) * in[0] + ir::ast::ConstLike(param.beta, in[1]) * in[1]};
}

IR_REGISTER_OP(axpby)
    .describe("alpha * x + beta * y for x and y of the same shape (example op library).")
    .set_num_inputs(2)
    .set_input_names({"x", "y"})
    .set_param<AxpbyParam>()
    .set_attr<ir::FInferShape>("FInferShape", AxpbyShape)
    .set_attr<ir::FInferType>("FInferType", AxpbyType)
    .set_attr<ir::FGradient>("FGradient", AxpbyGradient)
    .set_attr<ir::FCompute>("FCompute", AxpbyCompute)
    .set_attr<ir::FCodeGen>("FCodeGen", AxpbyCodeGen)
    .set_attr<ir::TOpPattern>("TOpPattern", ir::kElemWise);

// A rewrite rule that teaches Simplify to use the op: a * x + b * y written with scalar
// multiplies becomes one axpby (rule set "example_ops", active once the library is loaded).
// Exact: axpby computes a * x + b * y with the same two roundings of the products and one of
// the sum (generated kernels are compiled without contracting them into a fused multiply-add).
IR_REGISTER_RULES(example_ops, R"(
commutative: add
rule example_axpby exact {
  match:   add(multiply_scalar{scalar=?a}(x), multiply_scalar{scalar=?b}(y))
  where:   same_shape(x, y)
  rewrite: axpby{alpha=?a, beta=?b}(x, y)
  test:    x f32[2,3], y f32[2,3], ?a = 2, ?b = -0.5
}
)");

}  // namespace example
