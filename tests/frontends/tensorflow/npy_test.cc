/*!
 * \file npy_test.cc
 * \brief Our .npy reader and writer against bytes NumPy writes.
 */
#include <gtest/gtest.h>

#include <string>

#include "ir_tf/npy.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

/*! \brief .npy bytes with a version-1 header built like numpy.save does. */
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data, char major = 1) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t lead = major == 1 ? 10 : 12;
  header.append((64 - (lead + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  if (major != 1) out += std::string(2, '\0');
  return out + header + data;
}

TEST(NpyTest, RoundTripsEveryDType) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}) {
    NDArray a = test::MakeArray(Shape{2, 3}, dtype, {1, 0, 1, 0, 0, 1});
    NDArray b = ParseNpy(FormatNpy(a));
    EXPECT_EQ(b.dtype(), dtype);
    EXPECT_EQ(b.shape(), (Shape{2, 3}));
    test::ExpectClose(b, {1, 0, 1, 0, 0, 1}, DTypeName(dtype), 0, 0);
  }
  NDArray scalar = ParseNpy(FormatNpy(NDArray::Scalar<float>(2.5f)));
  EXPECT_EQ(scalar.shape(), Shape::Scalar());
  EXPECT_EQ(ParseNpy(FormatNpy(NDArray::FromVector<int32_t>(Shape{3}, {1, 2, 3}))).shape(), Shape{3});
}

TEST(NpyTest, WritesHeadersNumPyReads) {
  std::string bytes = FormatNpy(NDArray::FromVector<float>(Shape{2}, {1, 2}));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"), std::string::npos);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
}

TEST(NpyTest, ReadsNarrowBigEndianAndVersion2Files) {
  // numpy.array([1, 200], dtype=np.uint8); np.array([-2, 3], dtype='>i2'); np.float16([1.5, -2]).
  NDArray u8 = ParseNpy(Npy("|u1", "(2,)", std::string("\x01\xc8", 2)));
  EXPECT_EQ(u8.dtype(), DType::kInt32);
  test::ExpectClose(u8, {1, 200}, "uint8", 0, 0);
  NDArray be = ParseNpy(Npy(">i2", "(2,)", std::string("\xff\xfe\x00\x03", 4)));
  test::ExpectClose(be, {-2, 3}, "big-endian int16", 0, 0);
  NDArray half = ParseNpy(Npy("<f2", "(2,)", std::string("\x00\x3e\x00\xc0", 4), 2));
  EXPECT_EQ(half.dtype(), DType::kFloat32);
  test::ExpectClose(half, {1.5, -2}, "float16", 0, 0);
}

TEST(NpyTest, RejectsMalformedFiles) {
  EXPECT_ERROR(ParseNpy("not numpy"), "is not a .npy file");
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(4,)", std::string(8, '\0'))), "tensor_content holds 8 bytes but shape [4]");
  EXPECT_ERROR(ParseNpy(Npy("<c8", "(1,)", std::string(8, '\0'))), ".npy dtype 'c8' is not supported");
  std::string fortran = Npy("<f4", "(1,)", std::string(4, '\0'));
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_ERROR(ParseNpy(fortran), "Fortran-order");
  std::string truncated = Npy("<f4", "(1,)", "");
  EXPECT_ERROR(ParseNpy(truncated.substr(0, 20)), "truncated .npy header");
  EXPECT_ERROR(ReadNpy("/nonexistent/x.npy"), "cannot open '/nonexistent/x.npy'");
}

}  // namespace
}  // namespace tf
}  // namespace ir
