/*!
 * \file npy_test.cc
 * \brief Our .npy reader and writer against bytes NumPy writes.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir_tf/npy.h"
#include "limits_test_util.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

/*! \brief .npy bytes with the header dict `dict` (version `major`), padded like numpy.save does. */
std::string NpyWithHeader(std::string header, const std::string& data, char major = 1) {
  size_t lead = major == 1 ? 10 : 12;
  header.append((64 - (lead + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  if (major != 1) out += std::string(2, '\0');
  return out + header + data;
}

/*! \brief .npy bytes with a header built like numpy.save does. */
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data, char major = 1,
                const char* fortran = "False") {
  return NpyWithHeader("{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }", data,
                       major);
}

/*! \brief The bytes of little-endian float32 `values`. */
std::string Floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
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
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(4,)", std::string(8, '\0'))),
               "truncated .npy data: shape [4] of '<f4' needs 16 bytes");
  EXPECT_ERROR(ParseNpy(Npy("<c8", "(1,)", std::string(8, '\0'))), ".npy dtype 'c8' is not supported");
  std::string truncated = Npy("<f4", "(1,)", "");
  EXPECT_ERROR(ParseNpy(truncated.substr(0, 20)), "truncated .npy header");
  EXPECT_ERROR(ReadNpy("/nonexistent/x.npy"), "cannot open '/nonexistent/x.npy'");
}

TEST(NpyTest, HugeClaimsAreCheckedAgainstTheBytesBeforeAllocating) {
  // 100 bytes claiming 4 TiB: compared with the 4 bytes present, never allocated.
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(1099511627776,)", Floats({1}))),
               "truncated .npy data: shape [1099511627776] of '<f4' needs 4398046511104 bytes but 4 follow the header");
  EXPECT_ERROR(ParseNpy(Npy("<f8", "(999999999999999999, 999999999999999999)", "")), "has too many elements");
  EXPECT_ERROR(ParseNpy(Npy("<f8", "(576460752303423488, 4)", "")), "has too many bytes");
}

TEST(NpyTest, TruncatedOrMissingDataIsAnErrorNamingTheFile) {
  test::TempDir dir;
  std::string empty = dir.File("empty.npy", Npy("<f4", "(3,)", ""));
  EXPECT_ERROR(ReadNpy(empty), "'" + empty + "': truncated .npy data: shape [3] of '<f4' needs 12 bytes but 0 follow");
  EXPECT_ERROR(ParseNpy(Npy("<i8", "(2, 2)", std::string(31, '\1'))), "needs 32 bytes but 31 follow the header");
  std::string two = Floats({1, 2});
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(1,)", two)), "trailing bytes after the .npy data");
}

TEST(NpyTest, RejectsMalformedHeadersClearly) {
  std::string good = Npy("<f4", "(1,)", Floats({1}));
  std::string minor = good;
  minor[7] = 1;
  EXPECT_ERROR(ParseNpy(minor), "unsupported .npy version 1.1");
  std::string data = Floats({1});
  EXPECT_ERROR(ParseNpy(NpyWithHeader("{'descr': '<f4', 'shape': (1,)}", data)), "the header has no 'fortran_order'");
  EXPECT_ERROR(ParseNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", data)),
               "unknown key 'x'");
  EXPECT_ERROR(ParseNpy(NpyWithHeader("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", data)),
               "repeats the key 'descr'");
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(-1,)", data)), "expected a non-negative integer dimension");
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(99999999999999999999,)", data)), "is too large");
  EXPECT_ERROR(ParseNpy(Npy("<f4", "(1,)", data, 1, "Maybe")), "expected True or False");
  EXPECT_ERROR(ParseNpy(Npy("!f4", "(1,)", data)), "bad descr '!f4'");
  EXPECT_ERROR(ParseNpy(NpyWithHeader("{'descr': '<f4, 'fortran_order': False}", data)), "malformed .npy header");
  EXPECT_ERROR(ParseNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", data)),
               "unexpected text after the header dict");
}

TEST(NpyTest, ReadsFortranOrderIntoCOrder) {
  // numpy.asfortranarray(numpy.arange(1, 7, dtype=np.float32).reshape(2, 3)) stores 1 4 2 5 3 6.
  NDArray matrix = ParseNpy(Npy("<f4", "(2, 3)", Floats({1, 4, 2, 5, 3, 6}), 1, "True"));
  EXPECT_EQ(matrix.shape(), (Shape{2, 3}));
  test::ExpectClose(matrix, {1, 2, 3, 4, 5, 6}, "2-D Fortran order", 0, 0);
  // arange(8).reshape(2, 2, 2) in Fortran order: element (i, j, k) at i + 2j + 4k.
  NDArray cube = ParseNpy(Npy("<f4", "(2, 2, 2)", Floats({0, 4, 2, 6, 1, 5, 3, 7}), 1, "True"));
  test::ExpectClose(cube, {0, 1, 2, 3, 4, 5, 6, 7}, "3-D Fortran order", 0, 0);
}

}  // namespace
}  // namespace tf
}  // namespace ir
