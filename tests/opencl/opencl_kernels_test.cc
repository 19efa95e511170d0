// Every hand-written OpenCL kernel against the op's CPU kernel, on random float32 inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/op.h"
#include "ir/op_kernel.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::Attrs;
using opencl_test::ExpectSameOnDevice;
using opencl_test::OpenCLDevice;
using opencl_test::RunOpOn;
using test::RandomArray;

NDArray Rand(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  return RandomArray(shape, DType::kFloat32, seed, lo, hi);
}

TEST(OpenCLKernelsTest, MatmulWithTransposesAndBroadcastBatches) {
  IR_REQUIRE_OPENCL();
  ExpectSameOnDevice("matmul", {}, {Rand({17, 9}, 1), Rand({9, 21}, 2)});
  ExpectSameOnDevice("matmul", {{"transpose_a", "true"}}, {Rand({9, 17}, 3), Rand({9, 5}, 4)});
  ExpectSameOnDevice("matmul", {{"transpose_b", "1"}}, {Rand({4, 33}, 5), Rand({6, 33}, 6)});
  ExpectSameOnDevice("matmul", {{"transpose_a", "1"}, {"transpose_b", "1"}}, {Rand({3, 4}, 7), Rand({5, 3}, 8)});
  ExpectSameOnDevice("matmul", {}, {Rand({2, 1, 3, 4}, 9), Rand({3, 4, 2}, 10)});
  ExpectSameOnDevice("matmul", {}, {Rand({5, 0}, 11), Rand({0, 3}, 12)});
}

TEST(OpenCLKernelsTest, MatmulOfIntegers) {
  IR_REQUIRE_OPENCL();
  ExpectSameOnDevice("matmul", {},
                     {RandomArray({5, 7}, DType::kInt32, 1, -5, 5), RandomArray({7, 3}, DType::kInt32, 2, -5, 5)});
}

TEST(OpenCLKernelsTest, BiasAddAndItsGradientInBothLayouts) {
  IR_REQUIRE_OPENCL();
  ExpectSameOnDevice("bias_add", {}, {Rand({2, 3, 4, 5}, 1), Rand({5}, 2)});
  ExpectSameOnDevice("bias_add", {{"data_format", "NCHW"}}, {Rand({2, 3, 4, 5}, 3), Rand({3}, 4)});
  ExpectSameOnDevice("bias_add_grad", {}, {Rand({2, 3, 4, 5}, 5)});
  ExpectSameOnDevice("bias_add_grad", {{"data_format", "NCHW"}}, {Rand({2, 3, 40, 50}, 6)}, 1e-4, 1e-4);
}

TEST(OpenCLKernelsTest, Conv2DAndItsGradients) {
  IR_REQUIRE_OPENCL();
  std::vector<Attrs> windows = {
      {},
      {{"padding", "SAME"}, {"strides", "(2,2)"}},
      {{"data_format", "NCHW"}, {"padding", "SAME"}, {"dilations", "2"}},
      {{"pads", "(1,0,2,1)"}, {"strides", "(1,2)"}},
  };
  for (const Attrs& attrs : windows) {
    bool nchw = attrs.count("data_format") != 0;
    Shape x_shape = nchw ? Shape{2, 3, 9, 8} : Shape{2, 9, 8, 3};
    NDArray x = Rand(x_shape, 1), w = Rand({3, 3, 3, 4}, 2);
    std::vector<NDArray> y = test::RunOp("conv2d", attrs, {x, w});
    NDArray dy = Rand(y[0].shape(), 3);
    SCOPED_TRACE(attrs.empty() ? std::string("defaults") : attrs.begin()->second);
    ExpectSameOnDevice("conv2d", attrs, {x, w}, 1e-4, 1e-4);
    ExpectSameOnDevice("conv2d_backprop_input", attrs, {dy, w, x}, 1e-4, 1e-4);
    ExpectSameOnDevice("conv2d_backprop_filter", attrs, {x, dy, w}, 1e-4, 1e-4);
  }
}

TEST(OpenCLKernelsTest, ImagePatchesAndTheirGradient) {
  IR_REQUIRE_OPENCL();
  for (const Attrs& attrs : std::vector<Attrs>{{{"ksizes", "(3,2)"}, {"strides", "2"}, {"padding", "SAME"}},
                                               {{"ksizes", "2"}, {"rates", "(2,1)"}, {"pads", "(1,0,2,1)"}}}) {
    NDArray x = Rand({2, 9, 8, 3}, 1);
    NDArray dy = Rand(test::RunOp("extract_image_patches", attrs, {x})[0].shape(), 2);
    ExpectSameOnDevice("extract_image_patches", attrs, {x});
    ExpectSameOnDevice("extract_image_patches_grad", attrs, {dy, x}, 1e-4, 1e-4);
  }
}

TEST(OpenCLKernelsTest, PoolingAndItsGradients) {
  IR_REQUIRE_OPENCL();
  std::vector<Attrs> windows = {
      {{"ksize", "2"}, {"strides", "2"}},
      {{"ksize", "(3,2)"}, {"strides", "(2,1)"}, {"padding", "SAME"}},
      {{"ksize", "3"}, {"data_format", "NCHW"}, {"pads", "(1,1,2,0)"}},
  };
  for (const Attrs& attrs : windows) {
    bool nchw = attrs.count("data_format") != 0;
    NDArray x = Rand(nchw ? Shape{2, 3, 7, 8} : Shape{2, 7, 8, 3}, 4);
    for (const char* op : {"max_pool2d", "avg_pool2d"}) {
      SCOPED_TRACE(StrCat(op, " ", attrs.at("ksize")));
      ExpectSameOnDevice(op, attrs, {x});
      NDArray y = test::RunOp(op, attrs, {x})[0];
      NDArray dy = Rand(y.shape(), 5);
      if (std::string(op) == "max_pool2d") {
        ExpectSameOnDevice("max_pool2d_grad", attrs, {x, y, dy});
      } else {
        ExpectSameOnDevice("avg_pool2d_grad", attrs, {dy, x});
      }
    }
  }
}

TEST(OpenCLKernelsTest, ReductionsOverAnyAxes) {
  IR_REQUIRE_OPENCL();
  NDArray x = Rand({3, 4, 5, 6}, 1, 0.5, 1.5);
  std::vector<Attrs> cases = {
      {}, {{"axis", "1"}}, {{"axis", "(0,2)"}, {"keepdims", "true"}}, {{"axis", "-1"}}, {{"axis", "(1,2,3)"}}};
  for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
    for (const Attrs& attrs : cases) {
      SCOPED_TRACE(StrCat(op, " axis ", attrs.count("axis") ? attrs.at("axis") : "all"));
      ExpectSameOnDevice(op, attrs, {x}, 1e-5, 1e-4);
    }
  }
  // Few outputs over many elements take the work-group kernel.
  ExpectSameOnDevice("sum", {{"axis", "0"}}, {Rand({5000, 3}, 2)}, 1e-4, 1e-4);
  ExpectSameOnDevice("max", {}, {Rand({70, 50}, 3)});
  ExpectSameOnDevice("mean", {{"axis", "1"}}, {RandomArray({4, 9}, DType::kInt64, 4, -50, 50)});
}

TEST(OpenCLKernelsTest, ArgReductionsAndGradientHelpers) {
  IR_REQUIRE_OPENCL();
  NDArray x = Rand({4, 5, 6}, 1);
  for (const char* op : {"argmax", "argmin"}) {
    ExpectSameOnDevice(op, {}, {x});
    ExpectSameOnDevice(op, {{"axis", "-1"}, {"keepdims", "1"}}, {x});
  }
  ExpectSameOnDevice("collapse_sum_like", {}, {Rand({4, 5, 6}, 2), Rand({5, 1}, 3)});
  ExpectSameOnDevice("collapse_sum_like", {}, {Rand({4, 5, 6}, 2), Rand({4, 5, 6}, 3)});
  ExpectSameOnDevice("_reduce_grad_broadcast", {{"axis", "(0,2)"}}, {Rand({5}, 4), x});
  ExpectSameOnDevice("_reduce_grad_broadcast", {{"axis", "1"}, {"keepdims", "1"}, {"normalize", "true"}},
                     {Rand({4, 1, 6}, 5), x});
}

TEST(OpenCLKernelsTest, SoftmaxAndCrossEntropy) {
  IR_REQUIRE_OPENCL();
  NDArray logits = Rand({6, 10}, 1, -4, 4);
  ExpectSameOnDevice("softmax", {}, {logits});
  ExpectSameOnDevice("log_softmax", {}, {logits});
  ExpectSameOnDevice("softmax", {{"axis", "1"}}, {Rand({2, 5, 3}, 2)});
  ExpectSameOnDevice("log_softmax", {{"axis", "0"}}, {Rand({4, 3}, 3)});
  NDArray probs = test::RunOp("softmax", {}, {Rand({6, 10}, 4)})[0];
  ExpectSameOnDevice("softmax_cross_entropy_with_logits", {}, {logits, probs});
  ExpectSameOnDevice("sparse_softmax_cross_entropy_with_logits", {},
                     {logits, NDArray::FromVector<int32_t>({6}, {0, 9, 3, 3, 5, 1})});
  ExpectSameOnDevice("sparse_softmax_cross_entropy_with_logits", {},
                     {logits, NDArray::FromVector<int64_t>({6}, {2, 2, 7, 8, 0, 4})});
  // The CPU rejects a label outside [0, classes); the device marks its row's loss NaN.
  opencl_test::OpResult bad = RunOpOn(OpenCLDevice(), "sparse_softmax_cross_entropy_with_logits", {},
                                      {logits, NDArray::FromVector<int32_t>({6}, {0, 10, 3, -1, 5, 1})});
  std::vector<float> loss = bad.outputs[0].ToVector<float>();
  EXPECT_TRUE(std::isnan(loss[1]) && std::isnan(loss[3]));
  EXPECT_FALSE(std::isnan(loss[0]) || std::isnan(loss[2]));
}

TEST(OpenCLKernelsTest, ShapeOpsAndTranspose) {
  IR_REQUIRE_OPENCL();
  NDArray x = Rand({2, 3, 4}, 1);
  ExpectSameOnDevice("reshape", {{"shape", "(4,-1)"}}, {x});
  ExpectSameOnDevice("expand_dims", {{"axis", "1"}}, {x});
  ExpectSameOnDevice("squeeze", {}, {Rand({2, 1, 3}, 2)});
  ExpectSameOnDevice("identity", {}, {x});
  ExpectSameOnDevice("transpose", {}, {x});
  ExpectSameOnDevice("transpose", {{"axes", "(1,2,0)"}}, {x});
  ExpectSameOnDevice("transpose", {{"axes", "(0,2,1)"}}, {RandomArray({2, 3, 4}, DType::kBool, 3)});
  // Shape-only ops compute on the host from the shapes alone and upload their result.
  for (const char* op : {"shape", "size", "rank"}) ExpectSameOnDevice(op, {}, {x});
}

TEST(OpenCLKernelsTest, OneHotAndCast) {
  IR_REQUIRE_OPENCL();
  NDArray indices = NDArray::FromVector<int32_t>({2, 3}, {0, 2, -1, 4, 1, 3});
  ExpectSameOnDevice("one_hot", {{"depth", "4"}}, {indices});
  ExpectSameOnDevice("one_hot", {{"depth", "3"}, {"axis", "0"}, {"on_value", "5"}, {"off_value", "-1"}},
                     {NDArray::FromVector<int64_t>({3}, {2, 0, 7})});
  ExpectSameOnDevice("cast", {{"dtype", "int32"}}, {Rand({7}, 2, -9, 9)});
  ExpectSameOnDevice("cast", {{"dtype", "bool"}}, {RandomArray({7}, DType::kInt64, 3, -2, 2)});
}

TEST(OpenCLKernelsTest, StateOpsWriteTheVariable) {
  IR_REQUIRE_OPENCL();
  for (const char* op : {"assign", "assign_add", "assign_sub"}) {
    SCOPED_TRACE(op);
    ExpectSameOnDevice(op, {}, {Rand({3, 4}, 1), Rand({3, 4}, 2)});
  }
  opencl_test::OpResult token = RunOpOn(OpenCLDevice(), "no_op", {}, {});
  EXPECT_EQ(token.outputs[0].ToVector<int32_t>(), std::vector<int32_t>({0}));
}

TEST(OpenCLKernelsTest, SourcesFillTheirValues) {
  IR_REQUIRE_OPENCL();
  ExpectSameOnDevice("zeros", {{"shape", "(2,3)"}}, {});
  ExpectSameOnDevice("ones", {{"shape", "(4)"}, {"dtype", "int64"}}, {});
  ExpectSameOnDevice("fill", {{"shape", "(3)"}, {"value", "2.5"}, {"dtype", "float64"}}, {});
  ExpectSameOnDevice("zeros_like", {}, {Rand({5}, 1)});
  ExpectSameOnDevice("ones_like", {}, {RandomArray({5}, DType::kBool, 2)});
  ExpectSameOnDevice("constant", {{"value", "[[1, 2], [3, 4.5]]"}}, {});
}

TEST(OpenCLKernelsTest, RandomOpsDrawTheCpuNumbers) {
  IR_REQUIRE_OPENCL();
  Attrs uniform = {{"shape", "(5,7)"}, {"seed", "3"}, {"minval", "-2"}, {"maxval", "5"}};
  ExpectSameOnDevice("random_uniform", uniform, {}, 0, 0);
  ExpectSameOnDevice("random_uniform", {{"shape", "(9)"}, {"dtype", "float64"}}, {}, 0, 0);
  ExpectSameOnDevice("random_normal", {{"shape", "(5,7)"}, {"mean", "1"}, {"stddev", "2"}}, {}, 1e-6, 1e-6);
  ExpectSameOnDevice("truncated_normal", {{"shape", "(101)"}, {"seed", "11"}}, {}, 1e-6, 1e-6);
  ExpectSameOnDevice("dropout", {{"keep_prob", "0.7"}}, {Rand({6, 9}, 1)}, 0, 0);
  NDArray x = Rand({10}, 2);
  opencl_test::OpResult inference = RunOpOn(OpenCLDevice(), "dropout", {}, {x}, 7, /*is_train=*/false);
  test::ExpectNear(inference.outputs[0], x, 0, 0);
}

TEST(OpenCLKernelsTest, KernelsReadAndWriteViewsAtOffsets) {
  IR_REQUIRE_OPENCL();
  NDArray a = Rand({5, 6}, 1), b = Rand({6, 4}, 2);
  NDArray expected = test::RunOp("matmul", {}, {a, b})[0];
  NDArray out = opencl_test::OffsetCopyOnDevice(NDArray(Shape{5, 4}, DType::kFloat32));
  OpContext ctx;
  ctx.device = OpenCLDevice();
  NodePtr node = Node::Create(Op::Get("matmul"), "mm", {},
                              {NodeEntry{Node::CreateVariable("a"), 0}, NodeEntry{Node::CreateVariable("b"), 0}});
  opencl_test::DeviceKernelOf("matmul")(
      ctx, node->attrs, {opencl_test::OffsetCopyOnDevice(a), opencl_test::OffsetCopyOnDevice(b)}, {out});
  test::ExpectNear(out.CopyTo(Device::CPU()), expected, 1e-5, 1e-5);
  EXPECT_GT(out.byte_offset(), 0u);
}

}  // namespace
}  // namespace ir
