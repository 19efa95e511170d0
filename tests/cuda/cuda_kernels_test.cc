#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codegen/kernel_builder.h"
#include "cuda_test_util.h"
#include "ir/device_kernel.h"
#include "ir/fusion.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "runtime/cuda/cuda_target.h"
#include "runtime/device/device_source.h"
#include "runtime/device/kernel_selection.h"
#include "test_util.h"

namespace ir {
namespace {

// The portable vocabulary in CUDA C, exactly as kernel authors are promised it (docs/BACKENDS.md).
TEST(CUDAKernelsTest, PortablePreludeSpellsTheVocabularyInCUDAC) {
  const device::Dialect& d = cuda::CUDADialect();
  std::string text = d.header + device::PortablePrelude(d);
  for (const char* line :
       {"typedef unsigned char uchar;", "typedef unsigned int uint;", "typedef unsigned long ulong;",
        "#define IR_KERNEL extern \"C\" __global__ __launch_bounds__(256)\n", "#define IR_GLOBAL \n",
        "#define IR_FUNC __device__ inline\n", "#define IR_SHARED __shared__\n",
        "#define IR_BARRIER() __syncthreads()\n", "#define IR_GROUP_SIZE 256\n",
        "#define IR_LOCAL_ID ((long)threadIdx.x)\n", "#define IR_ARRAY(T, x) T* x, const long x##_offset\n",
        "#define IR_CONST_ARRAY(T, x) const T* x, const long x##_offset\n", "#define IR_OFFSET(x) x += x##_offset\n",
        "#define IR_THREAD_LOOP(i, n) for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); "
        "i += (long)gridDim.x * blockDim.x)\n",
        "#define IR_GROUP_LOOP(g, n) for (long g = blockIdx.x; g < (n); g += gridDim.x)\n",
        "#define IR_LOCAL_LOOP(i, n) for (long i = threadIdx.x; i < (n); i += blockDim.x)\n",
        "__device__ inline float ir_exp(float x) { return expf(x); }",
        "__device__ inline double ir_exp(double x) { return exp(x); }"}) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\nin:\n" << text;
  }
  EXPECT_EQ(d.group_size, 256);
}

// Every portable kernel library, for each of its element types, rendered as CUDA C.
TEST(CUDAKernelsTest, EveryDeviceKernelSourceCompilesAndAssembles) {
  std::vector<const DeviceKernelSource*> sources = DeviceKernelSources();
  ASSERT_FALSE(sources.empty()) << "no op registers a DeviceKernelSource";
  for (const DeviceKernelSource* source : sources) {
    EXPECT_FALSE(source->dtypes.empty()) << source->name;
    for (DType dtype : source->dtypes) {
      test::ExpectCompilesAndAssembles(device::RenderKernelSource(cuda::CUDADialect(), *source, dtype),
                                       StrCat("device kernel source ", source->name, " for ", DTypeName(dtype)));
    }
  }
}

TEST(CUDAKernelsTest, DeviceKernelSourcesRejectDTypesTheyLack) {
  int checked = 0;
  for (const DeviceKernelSource* source : DeviceKernelSources()) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}) {
      if (std::find(source->dtypes.begin(), source->dtypes.end(), dtype) != source->dtypes.end()) continue;
      EXPECT_ERROR(device::RenderKernelSource(cuda::CUDADialect(), *source, dtype),
                   StrCat("has no ", DTypeName(dtype), " version"));
      ++checked;
      break;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(CUDAKernelsTest, OpsOfATrainingStepHaveCUDAKernels) {
  const device::DeviceTarget& target = device::GetDeviceTarget("cuda");
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
    runtime::NodeKernel kernel = device::SelectKernel(target, Op::Get(name));
    EXPECT_TRUE(kernel.kernel && !kernel.on_host) << name << " has no CUDA kernel (it would run on the host)";
  }
}

/*! \brief The node as a one-member fused group (variables in0, in1, ... feed a copy of it; mutated inputs). */
FusedGroup SingleNodeGroup(const NodeAttrs& attrs, size_t num_inputs, bool reduce) {
  FusedGroup group;
  group.kind = reduce ? "reduce" : "map";
  NodePtr node = Node::Create();
  node->attrs = attrs;
  for (size_t k = 0; k < num_inputs; ++k) node->inputs.push_back(NodeEntry{Node::CreateVariable(StrCat("in", k)), 0});
  for (uint32_t i = 0; i < node->num_outputs(); ++i) group.subgraph.outputs.push_back(NodeEntry{node, i});
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  if (mutate != nullptr && mutate->count(attrs.op)) {
    for (uint32_t k : (*mutate)[attrs.op](attrs)) group.mutated_inputs.push_back(static_cast<int>(k));
  }
  return group;
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
      Kernel kernel = codegen::BuildKernel(SingleNodeGroup(node->attrs, inputs.size(), reduce), shapes, types);
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

}  // namespace
}  // namespace ir
