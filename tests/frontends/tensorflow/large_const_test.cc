/*!
 * \file large_const_test.cc
 * \brief A large TensorFlow Const is imported as one array: no base64 text of it in the graph
 * and no extra copies at the peak.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ir/fold_constants.h"
#include "ir/graph.h"
#include "ir_tf/import.h"
#include "test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ProcStatusBytes;
using test::ResetPeakRss;

/*! \brief `v` as a protobuf varint. */
std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7F) | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}

/*! \brief Field `number` of wire type 2 (length-delimited) holding `bytes`. */
std::string Bytes(int number, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(number) << 3 | 2) + Varint(bytes.size()) + bytes;
}

/*! \brief Field `number` of wire type 0 (varint). */
std::string Int(int number, uint64_t v) { return Varint(static_cast<uint64_t>(number) << 3) + Varint(v); }

/*!
 * \brief A binary GraphDef with one float Const "c" of `n` elements given as tensor_content,
 * written in the wire format by hand (the generated proto headers are private to the frontend).
 */
std::string ConstGraphDef(int64_t n) {
  const int kFloat = 1;  // DT_FLOAT
  std::string content(static_cast<size_t>(n) * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(i % 977);
    std::memcpy(&content[static_cast<size_t>(i) * 4], &v, 4);
  }
  // TensorProto: dtype = 1, tensor_shape = 2 (dim = 2 { size = 1 }), tensor_content = 4.
  std::string tensor = Int(1, kFloat) + Bytes(2, Bytes(2, Int(1, static_cast<uint64_t>(n)))) + Bytes(4, content);
  // NodeDef: name = 1, op = 2, attr = 5 (map entry: key = 1, AttrValue = 2 with type = 6 or tensor = 8).
  std::string node = Bytes(1, "c") + Bytes(2, "Const") + Bytes(5, Bytes(1, "dtype") + Bytes(2, Int(6, kFloat))) +
                     Bytes(5, Bytes(1, "value") + Bytes(2, Bytes(8, tensor)));
  return Bytes(1, node);  // GraphDef: node = 1
}

TEST(LargeConstTest, ImportKeepsTheConstAsAnArrayWithoutBase64Text) {
  if (!ResetPeakRss() || ProcStatusBytes("VmHWM") < 0) GTEST_SKIP() << "peak RSS cannot be reset here";
  const int64_t n = 16 << 20;  // 64 MiB of float32
  std::string bytes = ConstGraphDef(n);
  ASSERT_TRUE(ResetPeakRss());
  long long before = ProcStatusBytes("VmHWM");
  Graph graph = ImportGraphDef(bytes);
  long long growth = ProcStatusBytes("VmHWM") - before;
  // The importer's own copies: the GraphDef bytes in the tf.graph_def attribute, the parsed proto,
  // the inlined NodeDef and the decoded tensor (4x). Base64 text of the tensor, its decoded bytes
  // and a second array in the constant node took 3.3x more.
  EXPECT_LT(growth, static_cast<long long>(4.6 * n * 4)) << "peak RSS grew by " << growth << " bytes";
  ASSERT_EQ(graph.outputs.size(), 1u);
  const Node& c = *graph.outputs[0].node;
  for (const auto& kv : c.attrs.dict) EXPECT_LT(kv.second.size(), 64u) << kv.first;
  NDArray value = ConstantNodeValue(c);
  ASSERT_EQ(value.Size(), n);
  EXPECT_EQ(value.data<float>()[n - 1], static_cast<float>((n - 1) % 977));
}

}  // namespace
}  // namespace tf
}  // namespace ir
