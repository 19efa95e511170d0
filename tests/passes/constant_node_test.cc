/*!
 * \file constant_node_test.cc
 * \brief Constant nodes hold their elements as an array: no base64 text in memory, base64 only
 * in saved graph JSON, and the elements produced on demand for attribute queries.
 */
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ir/fold_constants.h"
#include "ir/graph_io.h"
#include "ir/symbol.h"
#include "test_util.h"

namespace ir {
namespace {

using test::ProcStatusBytes;
using test::ResetPeakRss;

NDArray Floats(const std::vector<float>& values, const Shape& shape) {
  NDArray a(shape, DType::kFloat32);
  std::copy(values.begin(), values.end(), a.data<float>());
  return a;
}

TEST(ConstantNodeTest, LargeConstantKeepsNoBase64StringAndLittleMemory) {
  if (!ResetPeakRss() || ProcStatusBytes("VmHWM") < 0) GTEST_SKIP() << "peak RSS cannot be reset here";
  const int64_t n = 16 << 20;  // 64 MiB of float32
  long long before = ProcStatusBytes("VmHWM");
  NodeEntry c;
  {
    NDArray value(Shape{n}, DType::kFloat32);
    for (int64_t i = 0; i < n; ++i) value.data<float>()[i] = static_cast<float>(i % 1000);
    c = MakeConstantNode("big", value);
  }
  long long growth = ProcStatusBytes("VmHWM") - before;
  // The old node held the elements three more times: base64 text, decoded bytes, parsed array.
  EXPECT_LT(growth, static_cast<long long>(2.2 * n * 4)) << "peak RSS grew by " << growth << " bytes";
  EXPECT_EQ(c.node->attrs.dict.count("data_base64"), 0u);
  for (const auto& kv : c.node->attrs.dict) EXPECT_LT(kv.second.size(), 64u) << kv.first;
  NDArray held = ConstantNodeValue(*c.node);
  ASSERT_EQ(held.shape(), Shape{n});
  EXPECT_EQ(held.data<float>()[n - 1], static_cast<float>((n - 1) % 1000));
}

TEST(ConstantNodeTest, SaveLoadRoundTripGivesIdenticalValues) {
  NDArray f = Floats({1, -2.5f, 3, 0.1f, 7, -0.f}, Shape{2, 3});
  NDArray l(Shape{3}, DType::kInt64);
  l.data<int64_t>()[0] = -3;
  l.data<int64_t>()[1] = int64_t{1} << 62;
  l.data<int64_t>()[2] = 7;
  Graph graph({MakeConstantNode("f", f), MakeConstantNode("l", l), MakeConstantNode("s", NDArray::Scalar<float>(2))});
  std::string json = SaveJSON(graph);
  EXPECT_NE(json.find("data_base64"), std::string::npos);  // the saved format is unchanged
  Graph loaded = LoadJSON(json);
  EXPECT_EQ(SaveJSON(loaded), json);
  ASSERT_EQ(loaded.outputs.size(), 3u);
  EXPECT_EQ(ConstantNodeValue(*loaded.outputs[0].node).ToVector<float>(), f.ToVector<float>());
  EXPECT_EQ(ConstantNodeValue(*loaded.outputs[0].node).shape(), (Shape{2, 3}));
  EXPECT_EQ(ConstantNodeValue(*loaded.outputs[1].node).ToVector<int64_t>(), l.ToVector<int64_t>());
  EXPECT_EQ(ConstantNodeValue(*loaded.outputs[2].node).ToVector<float>(), std::vector<float>{2});
  // Once decoded, the elements are not kept a second time as text.
  EXPECT_EQ(loaded.outputs[0].node->attrs.dict.count("data_base64"), 0u);
}

TEST(ConstantNodeTest, AttributeQueryEncodesElementsOnDemand) {
  Symbol sym;
  sym.outputs = {MakeConstantNode("w", Floats({1, -2.5f, 3}, Shape{3}))};
  std::string text;
  ASSERT_TRUE(sym.GetAttr("data_base64", &text));
  EXPECT_EQ(text, "AACAPwAAIMAAAEBA");
  ASSERT_TRUE(sym.GetAttr("dtype", &text));
  EXPECT_EQ(text, "float32");
  EXPECT_FALSE(sym.GetAttr("no_such_attr", &text));
}

TEST(ConstantNodeTest, EditingOtherAttributesKeepsTheElements) {
  Symbol sym;
  sym.outputs = {MakeConstantNode("w", Floats({1, 2, 3, 4, 5, 6}, Shape{6}))};
  sym.SetAttrs({{"shape", "(2, 3)"}});
  NDArray reshaped = ConstantNodeValue(*sym.outputs[0].node);
  EXPECT_EQ(reshaped.shape(), (Shape{2, 3}));
  EXPECT_EQ(reshaped.ToVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_ERROR(sym.SetAttrs({{"shape", "(4)"}}), "holds 24 bytes but shape [4] of float32 needs 16");
  // A failed edit leaves the node as it was.
  EXPECT_EQ(ConstantNodeValue(*sym.outputs[0].node).shape(), (Shape{2, 3}));
  sym.SetAttrs({{"value", "[9, 8]"}, {"shape", ""}});
  EXPECT_EQ(ConstantNodeValue(*sym.outputs[0].node).ToVector<float>(), (std::vector<float>{9, 8}));
}

TEST(ConstantNodeTest, OneElementConstantsKeepTheirTextForKernelKeys) {
  // Kernels generated for one node are cached by its string attributes: a one-element constant
  // (a literal in the kernel) must keep its value there, or two of them would share a kernel.
  NodeEntry a = MakeNode("constant", "a", {}, {{"data_base64", "AACAPw=="}});
  NodeEntry b = MakeNode("constant", "b", {}, {{"data_base64", "AAAAQA=="}});
  EXPECT_NE(a.node->attrs.dict, b.node->attrs.dict);
  Symbol sym;
  sym.outputs = {MakeConstantNode("w", Floats({1, 2}, Shape{2}))};
  sym.SetAttrs({{"dtype", "int64"}, {"shape", "(1)"}});  // the 8 held bytes as one int64
  EXPECT_EQ(sym.outputs[0].node->attrs.dict.count("data_base64"), 1u);
  EXPECT_EQ(ConstantNodeValue(*sym.outputs[0].node).Size(), 1);
}

}  // namespace
}  // namespace ir
