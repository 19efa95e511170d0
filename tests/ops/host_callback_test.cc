/*!
 * \file host_callback_test.cc
 * \brief host_callback: runs a registered host function on its inputs, checks what it returns
 * against the declared dtypes and shapes, turns its failures into errors naming the node, and is
 * never folded, merged or fused.
 */
#include <gtest/gtest.h>

#include <atomic>

#include "ir/host_callback.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief Runs one host_callback node on `inputs` in a session (its output shapes are known only when it runs). */
std::vector<NDArray> RunCallback(const Attrs& attrs, const std::vector<NDArray>& inputs) {
  std::vector<NodeEntry> entries;
  std::unordered_map<std::string, NDArray> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries.push_back(NodeEntry{Node::CreateVariable("in" + std::to_string(i)), 0});
    feeds["in" + std::to_string(i)] = inputs[i];
  }
  NodePtr node = Node::Create(Op::Get("host_callback"), "host_callback", attrs, entries);
  std::vector<NodeEntry> outs;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) outs.push_back(NodeEntry{node, i});
  return Session().Run(outs, feeds);
}

/*! \brief A callback returning each input doubled (as float32) and the number of inputs (int64). */
int64_t DoubleAndCount(std::atomic<int>* calls) {
  return RegisterHostCallback([calls](const std::vector<NDArray>& in, uint32_t num_outputs) {
    ++*calls;
    std::vector<NDArray> out;
    NDArray doubled(in[0].shape(), DType::kFloat32);
    for (int64_t i = 0; i < in[0].Size(); ++i) doubled.data<float>()[i] = 2 * in[0].data<float>()[i];
    out.push_back(doubled);
    if (num_outputs > 1)
      out.push_back(NDArray::FromVector<int64_t>(Shape::Scalar(), {static_cast<int64_t>(in.size())}));
    return out;
  });
}

TEST(HostCallbackTest, RunsTheHostFunctionOnItsInputs) {
  std::atomic<int> calls{0};
  Attrs attrs = {{"callback", std::to_string(DoubleAndCount(&calls))}, {"dtypes", "float32,int64"}};
  NDArray x = NDArray::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4});
  std::vector<NDArray> out = RunCallback(attrs, {x, x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  ExpectNear(out[0], {2, 4, 6, 8});
  EXPECT_EQ(out[1].dtype(), DType::kInt64);
  ExpectNear(out[1], {2});
  EXPECT_EQ(calls.load(), 1);
}

TEST(HostCallbackTest, ChecksWhatTheFunctionReturns) {
  std::atomic<int> calls{0};
  std::string id = std::to_string(DoubleAndCount(&calls));
  NDArray x = NDArray::FromVector<float>(Shape{3}, {1, 2, 3});
  EXPECT_ERROR(RunCallback({{"callback", id}, {"dtypes", "float64"}}, {x}),
               "value 0 returned by the host function is float32, but expects float64");
  EXPECT_ERROR(RunCallback({{"callback", id}, {"dtypes", "float32"}, {"shapes", "[4]"}}, {x}),
               "has shape [3], but expects [4]");
  EXPECT_ERROR(RunCallback({{"callback", id}, {"dtypes", "float32,int64,int32"}}, {x}),
               "the host function returned 2 values, expected 3");
  EXPECT_ERROR(RunCallback({{"callback", id}, {"dtypes", "float32"}, {"shapes", "[3];[]"}}, {x}),
               "2 shapes for 1 outputs");
  EXPECT_ERROR(RunCallback({{"callback", "999999"}, {"dtypes", "float32"}}, {x}),
               "(op host_callback): no host callback is registered as 999999");
}

TEST(HostCallbackTest, ItsFailuresNameTheNode) {
  int64_t id = RegisterHostCallback(
      [](const std::vector<NDArray>&, uint32_t) -> std::vector<NDArray> { throw Error("ValueError: boom"); });
  NDArray x = NDArray::FromVector<float>(Shape{1}, {1});
  EXPECT_ERROR(RunCallback({{"callback", std::to_string(id)}, {"dtypes", "float32"}}, {x}),
               "(op host_callback): ValueError: boom");
}

TEST(HostCallbackTest, IsStatefulOpaqueAndHasNoGradient) {
  const Op* op = Op::Get("host_callback");
  EXPECT_TRUE(Op::GetAttr<TIsStateful>("TIsStateful").get(op, false)) << "two calls must not be merged or folded";
  EXPECT_EQ(Op::GetAttr<TOpPattern>("TOpPattern")[op], kOpaque);
  EXPECT_EQ(Op::GetAttr<FCodeGen>("FCodeGen").count(op), 0u);
}

}  // namespace
}  // namespace test
}  // namespace ir
