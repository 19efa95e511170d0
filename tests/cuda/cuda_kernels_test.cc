#include <gtest/gtest.h>

#include <set>

#include "codegen/kernel_builder.h"
#include "cuda_test_util.h"
#include "ir/op.h"
#include "runtime/cuda/cuda_ops.h"
#include "test_util.h"

namespace ir {
namespace {

const std::string kCUDAKey = FComputeKey(DeviceType::kCUDA);

TEST(CUDAKernelsTest, EveryHandWrittenKernelCompilesAndAssembles) {
  std::vector<const cuda::KernelFamily*> families = cuda::Families();
  std::set<std::string> names;
  for (const cuda::KernelFamily* family : families) {
    names.insert(family->name);
    for (DType dtype : family->dtypes) {
      test::ExpectCompilesAndAssembles(cuda::FamilySource(*family, dtype),
                                       StrCat("family ", family->name, " for ", DTypeName(dtype)));
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"array", "matmul", "nn", "reduce", "softmax"}));
}

TEST(CUDAKernelsTest, FamiliesRejectDTypesTheyLack) {
  for (const cuda::KernelFamily* family : cuda::Families()) {
    if (family->name == "nn") EXPECT_ERROR(cuda::FamilySource(*family, DType::kInt32), "has no int32 version");
  }
}

TEST(CUDAKernelsTest, OpsOfATrainingStepHaveCUDAKernels) {
  cuda::RegisterGeneratedKernels();
  cuda::RegisterGeneratedKernels();  // a second call must not register anything twice
  const auto* kernels = Op::FindAttr<FCompute>(kCUDAKey);
  ASSERT_NE(kernels, nullptr);
  for (const char* name : {"exp",
                           "add",
                           "multiply_scalar",
                           "where",
                           "cast",
                           "zeros_like",
                           "fill",
                           "bias_add",
                           "sum",
                           "mean",
                           "max",
                           "bias_add_grad",
                           "collapse_sum_like",
                           "_reduce_grad_broadcast",
                           "matmul",
                           "conv2d",
                           "conv2d_backprop_input",
                           "conv2d_backprop_filter",
                           "max_pool2d",
                           "avg_pool2d",
                           "max_pool2d_grad",
                           "avg_pool2d_grad",
                           "softmax",
                           "log_softmax",
                           "softmax_cross_entropy_with_logits",
                           "sparse_softmax_cross_entropy_with_logits",
                           "assign",
                           "assign_add",
                           "assign_sub",
                           "one_hot",
                           "transpose",
                           "reshape",
                           "expand_dims",
                           "argmax",
                           "group",
                           "no_op"}) {
    EXPECT_TRUE(kernels->count(Op::Get(name))) << name << " has no " << kCUDAKey;
  }
}

/*! \brief Inputs and attributes that make a one-node kernel of `op` (f32 [4,5] inputs unless listed). */
struct NodeCase {
  std::vector<std::pair<Shape, DType>> inputs;
  std::map<std::string, std::string> attrs;
};

NodeCase CaseFor(const Op* op) {
  const std::pair<Shape, DType> f32{Shape{4, 5}, DType::kFloat32}, boolean{Shape{4, 5}, DType::kBool};
  static const std::map<std::string, NodeCase> special = {
      {"where", {{boolean, f32, f32}, {}}},
      {"logical_not", {{boolean}, {}}},
      {"logical_and", {{boolean, boolean}, {}}},
      {"logical_or", {{boolean, boolean}, {}}},
      {"cast", {{f32}, {{"dtype", "int64"}}}},
      {"clip", {{f32}, {{"a_min", "-0.5"}, {"a_max", "0.5"}}}},
      {"fill", {{}, {{"shape", "(4,5)"}, {"value", "3"}}}},
      {"zeros", {{}, {{"shape", "(4,5)"}}}},
      {"ones", {{}, {{"shape", "(4,5)"}, {"dtype", "float64"}}}},
      {"constant", {{}, {{"shape", "(1)"}, {"value", "[2.5]"}}}},  // one element: a literal
      {"broadcast_to", {{{Shape{1, 5}, DType::kFloat32}}, {{"shape", "(4,5)"}}}},
      {"broadcast_like", {{{Shape{1, 5}, DType::kFloat32}, f32}, {}}},
      {"bias_add", {{f32, {Shape{5}, DType::kFloat32}}, {}}},
      {"add_n", {{f32, f32, f32}, {}}},
      {"sum", {{f32}, {{"axis", "1"}}}},
      {"max", {{f32}, {{"axis", "0"}}}},
  };
  auto it = special.find(op->name);
  if (it != special.end()) return it->second;
  NodeCase c;
  uint32_t n = op->get_num_inputs || op->num_inputs == kVariadic ? 2 : op->num_inputs;
  c.inputs.assign(n, f32);
  for (const ArgumentInfo& arg : op->arguments) {
    if (arg.name == "scalar") c.attrs["scalar"] = "2";
  }
  return c;
}

// Every op the generated path serves prints a kernel that NVRTC and ptxas accept.
TEST(CUDAKernelsTest, GeneratedOpKernelsCompileAndAssemble) {
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  const auto* kinds = Op::FindAttr<TReduceKind>("TReduceKind");
  ASSERT_NE(codegen, nullptr);
  std::vector<Kernel> kernels;
  std::set<std::string> built, names;
  std::vector<std::string> skipped;
  for (const std::string& name : Op::ListNames()) {
    const Op* op = Op::Get(name);
    bool reduce = kinds != nullptr && kinds->count(op) && Op::HasAttr("FReduceAxes", op);
    if (!codegen->count(op) && !reduce) continue;
    NodeCase c = CaseFor(op);
    try {
      std::vector<NodeEntry> inputs;
      std::vector<Shape> shapes;
      std::vector<DType> types;
      for (size_t k = 0; k < c.inputs.size(); ++k) {
        inputs.push_back(test::Var(StrCat("x", k)));
        shapes.push_back(c.inputs[k].first);
        types.push_back(c.inputs[k].second);
      }
      NodePtr node = Node::Create(op, name, c.attrs, inputs);
      Kernel kernel = codegen::BuildKernel(cuda::SingleNodeGroup(node->attrs, inputs.size(), reduce), shapes, types);
      if (names.insert(kernel.name).second) kernels.push_back(kernel);
      built.insert(name);
    } catch (const Error& err) {
      skipped.push_back(StrCat(name, ": ", err.what()));
    }
  }
  for (const char* required : {"exp",
                               "log1p",
                               "add",
                               "subtract",
                               "divide",
                               "power",
                               "maximum",
                               "greater",
                               "where",
                               "cast",
                               "clip",
                               "relu_grad",
                               "sigmoid_grad",
                               "add_n",
                               "zeros_like",
                               "ones_like",
                               "fill",
                               "constant",
                               "broadcast_to",
                               "bias_add",
                               "multiply_scalar",
                               "rsubtract_scalar",
                               "logical_not",
                               "sqrt",
                               "rsqrt",
                               "sum",
                               "mean",
                               "max",
                               "min",
                               "prod",
                               "bias_add_grad"}) {
    EXPECT_TRUE(built.count(required)) << required << " built no kernel; skipped:\n" << Join(skipped, "\n");
  }
  ASSERT_FALSE(kernels.empty());
  test::ExpectCompilesAndAssembles(KernelPrinter::Get("cuda").Print(kernels),
                                   StrCat(kernels.size(), " one-node kernels of ", built.size(), " ops"));
}

TEST(CUDAKernelsTest, ParametersFallBackToTheOpsDocumentedDefaults) {
  NodeEntry x = test::Var("x"), w = test::Var("w");
  NodePtr conv = Node::Create(Op::Get("conv2d"), "conv", {{"strides", "(2,2)"}}, {x, w});
  EXPECT_EQ(cuda::ParamText(conv->attrs, "padding"), "VALID");
  EXPECT_EQ(cuda::ParamText(conv->attrs, "data_format"), "NHWC");
  EXPECT_EQ(cuda::ParamList(conv->attrs, "strides").values, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(cuda::ParamList(conv->attrs, "dilations").values, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(cuda::ParamList(conv->attrs, "pads").empty());
  NodePtr mm = Node::Create(Op::Get("matmul"), "mm", {{"transpose_b", "true"}}, {x, w});
  EXPECT_FALSE(cuda::ParamBool(mm->attrs, "transpose_a"));
  EXPECT_TRUE(cuda::ParamBool(mm->attrs, "transpose_b"));
  NodePtr hot = Node::Create(Op::Get("one_hot"), "hot", {{"depth", "10"}}, {x});
  EXPECT_EQ(cuda::ParamDouble(hot->attrs, "on_value"), 1.0);
  EXPECT_EQ(cuda::ParamInt(hot->attrs, "axis"), -1);
  NodePtr pool = Node::Create(Op::Get("max_pool2d"), "pool", {{"ksize", "2"}}, {x});
  EXPECT_ERROR(cuda::ParamText(pool->attrs, "nonexistent"), "parameter 'nonexistent' is not set and has no default");
}

}  // namespace
}  // namespace ir
