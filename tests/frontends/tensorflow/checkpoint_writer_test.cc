/*!
 * \file checkpoint_writer_test.cc
 * \brief The checkpoint V2 writer (tables byte-identical to TensorFlow's, bundles the reader reads
 * back), summaries and event records, and the C API of libir_tensorflow.so (ir_tf/c_api_tf.h).
 */
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "file_util.h"
#include "ir_tf/c_api_tf.h"
#include "ir_tf/checkpoint.h"
#include "ir_tf/summary.h"
#include "limits_test_util.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

#define ASSERT_OK(call) ASSERT_EQ((call), 0) << IRGetLastError()

uint32_t Fixed32At(const std::string& s, size_t pos) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[pos + i]);
  return v;
}

/*! \brief Protobuf wire fields of `bytes` by number: varints as numbers, fixed64 as doubles, the rest as bytes. */
struct Fields {
  std::multimap<int, double> numbers;
  std::multimap<int, std::string> bytes;
  explicit Fields(const std::string& s) {
    for (size_t pos = 0; pos < s.size();) {
      uint64_t key = Varint(s, &pos);
      int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
      if (wire == 0) {
        numbers.emplace(field, static_cast<double>(Varint(s, &pos)));
      } else if (wire == 1) {
        double d;
        std::memcpy(&d, s.data() + pos, 8);
        numbers.emplace(field, d);
        pos += 8;
      } else if (wire == 5) {
        float f;
        std::memcpy(&f, s.data() + pos, 4);
        numbers.emplace(field, f);
        pos += 4;
      } else {
        if (wire != 2) {
          ADD_FAILURE() << "unexpected wire type " << wire;
          return;
        }
        uint64_t len = Varint(s, &pos);
        bytes.emplace(field, s.substr(pos, len));
        pos += len;
      }
    }
  }
  static uint64_t Varint(const std::string& s, size_t* pos) {
    uint64_t v = 0;
    for (int shift = 0; *pos < s.size(); shift += 7) {
      uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  double Number(int field) const { return numbers.count(field) ? numbers.find(field)->second : 0.0; }
  std::string Bytes(int field) const { return bytes.count(field) ? bytes.find(field)->second : ""; }
};

/*! \brief The packed doubles of a length-delimited field. */
std::vector<double> Doubles(const std::string& packed) {
  std::vector<double> out(packed.size() / 8);
  std::memcpy(out.data(), packed.data(), packed.size());
  return out;
}

TEST(CheckpointWriterTest, RebuildsTensorFlowsIndexFileByteForByte) {
  // Written by TF 1.x's BundleWriter (uncompressed; TF 2's variables.index uses snappy blocks instead).
  IR_TF_REQUIRE(path, "tensorflow-onnx/regression/checkpoint/model.index");
  std::string bytes = ReadFile(path);
  EXPECT_EQ(BuildTable(ReadTable(bytes, path)), bytes) << path;
}

TEST(CheckpointWriterTest, TablesOfManyBlocksReadBack) {
  std::map<std::string, std::string> entries;
  for (int i = 0; i < 500; ++i) entries["layer_" + std::to_string(i) + "/kernel"] = std::string(i % 37, 'v');
  entries[std::string("\xff\xff", 2)] = "last";
  for (size_t block_size : {size_t{64}, size_t{4096}, size_t{1} << 20}) {
    std::string table = BuildTable(entries, block_size);
    EXPECT_EQ(ReadTable(table), entries) << block_size;
  }
  // The empty table still has its footer and reads back empty.
  EXPECT_TRUE(ReadTable(BuildTable({})).empty());
}

template <typename T>
BundleTensor Tensor(const std::string& key, int tf_dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  return BundleTensor{key, tf_dtype, std::move(shape),
                      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T))};
}

TEST(CheckpointWriterTest, BundlesRoundTripThroughTheReader) {
  test::TempDir dir;
  std::string prefix = dir.path() + "/model.ckpt-3";
  std::vector<BundleTensor> tensors = {Tensor<float>("dense/kernel", 1, {2, 3}, {1, 2, 3, 4, 5, -6.5f}),
                                       Tensor<double>("dense/bias", 2, {3}, {0.25, -1e300, 7}),
                                       Tensor<int64_t>("global_step", 9, {}, {int64_t{1} << 40}),
                                       Tensor<int32_t>("counts", 3, {0, 4}, {}),
                                       Tensor<int8_t>("small", 6, {3}, {-128, 0, 127}),
                                       Tensor<int16_t>("medium", 5, {2}, {-32768, 300}),
                                       Tensor<uint8_t>("bytes", 4, {2}, {0, 255}),
                                       Tensor<uint8_t>("mask", 10, {3}, {1, 0, 1})};
  WriteCheckpoint(prefix, tensors);
  EXPECT_TRUE(FileExists(prefix + ".index") && FileExists(prefix + ".data-00000-of-00001"));
  CheckpointReader reader(prefix);
  EXPECT_EQ(reader.tensors().size(), tensors.size());
  EXPECT_EQ(reader.tensors().at("dense/kernel").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reader.tensors().at("small").tf_dtype, 6);
  test::ExpectClose(reader.Read("dense/kernel"), {1, 2, 3, 4, 5, -6.5}, "kernel", 0, 0);
  test::ExpectClose(reader.Read("dense/bias"), {0.25, -1e300, 7}, "bias", 0, 0);
  EXPECT_EQ(reader.Read("global_step").ToVector<int64_t>(), std::vector<int64_t>{int64_t{1} << 40});
  EXPECT_EQ(reader.Read("counts").shape(), Shape({0, 4}));
  EXPECT_EQ(reader.Read("small").ToVector<int32_t>(), (std::vector<int32_t>{-128, 0, 127}));
  EXPECT_EQ(reader.Read("medium").ToVector<int32_t>(), (std::vector<int32_t>{-32768, 300}));
  EXPECT_EQ(reader.Read("bytes").ToVector<int32_t>(), (std::vector<int32_t>{0, 255}));
  EXPECT_EQ(reader.Read("mask").dtype(), DType::kBool);
  // The header is TF's: one shard, little-endian, version 1; the data file holds the bytes in key order.
  EXPECT_EQ(ReadTable(ReadFile(prefix + ".index")).at(""), std::string("\x08\x01\x1a\x02\x08\x01", 6));
  EXPECT_EQ(ReadFile(prefix + ".data-00000-of-00001").size(), 24u + 24 + 8 + 0 + 3 + 4 + 2 + 3);
  // No temporary files are left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) files += entry.is_regular_file();
  EXPECT_EQ(files, 2);
}

TEST(CheckpointWriterTest, RejectsBadTensorsNamingThem) {
  test::TempDir dir;
  std::string prefix = dir.path() + "/bad";
  EXPECT_ERROR(WriteCheckpoint(prefix, {Tensor<float>("w", 1, {3}, {1, 2})}),
               "tensor 'w': the index gives it 8 bytes but shape [3] of DT_FLOAT needs 12");
  EXPECT_ERROR(WriteCheckpoint(prefix, {Tensor<float>("w", 1, {}, {1}), Tensor<float>("w", 1, {}, {2})}),
               "tensor 'w' is given twice");
  EXPECT_ERROR(WriteCheckpoint(prefix, {Tensor<float>("", 1, {}, {1})}), "a tensor has an empty name");
  EXPECT_ERROR(WriteCheckpoint(prefix, {Tensor<char>("s", 7, {1}, {'x'})}), "dtype DT_STRING cannot be written");
  EXPECT_ERROR(WriteCheckpoint(dir.path() + "/no/such/dir/ckpt", {}), "cannot write");
  EXPECT_FALSE(PathExists(prefix + ".index"));
}

/*! \brief The records of a TFRecord file, each frame's CRCs checked. */
std::vector<std::string> Records(const std::string& bytes) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < bytes.size();) {
    uint64_t len = Fixed32At(bytes, pos) | static_cast<uint64_t>(Fixed32At(bytes, pos + 4)) << 32;
    EXPECT_EQ(Fixed32At(bytes, pos + 8), MaskCrc(Crc32c(bytes.data() + pos, 8)));
    std::string data = bytes.substr(pos + 12, len);
    EXPECT_EQ(Fixed32At(bytes, pos + 12 + len), MaskCrc(Crc32c(data.data(), data.size())));
    out.push_back(data);
    pos += 16 + len;
  }
  return out;
}

TEST(SummaryTest, EventFilesHoldFramedEventsWithSummaries) {
  test::TempDir dir;
  std::string path = dir.path() + "/events.out.tfevents.1.host";
  AppendRecord(path, EncodeEvent(10.5, 0, "", "brain.Event:2"));
  AppendRecord(path, EncodeEvent(11.0, 7, ScalarSummary("loss", 0.25), ""));
  std::vector<std::string> records = Records(ReadFile(path));
  ASSERT_EQ(records.size(), 2u);
  Fields first(records[0]), second(records[1]);  // Event: wall_time 1, step 2, file_version 3, summary 5
  EXPECT_EQ(first.Bytes(3), "brain.Event:2");
  EXPECT_EQ(first.Number(1), 10.5);
  EXPECT_EQ(second.Number(2), 7);
  Fields value(Fields(second.Bytes(5)).Bytes(1));  // Summary.value: tag 1, simple_value 2
  EXPECT_EQ(value.Bytes(1), "loss");
  EXPECT_EQ(value.Number(2), 0.25);
  EXPECT_ERROR(EncodeEvent(0, 0, "\xff", ""), "not a serialized Summary");
}

TEST(SummaryTest, HistogramsUseTensorFlowsDefaultBuckets) {
  Fields h(Fields(Fields(HistogramSummary("h", {0.0, 1.0, 1.0, -2.0})).Bytes(1)).Bytes(5));
  EXPECT_EQ(h.Number(1), -2.0);  // min, max, num, sum, sum_squares
  EXPECT_EQ(h.Number(2), 1.0);
  EXPECT_EQ(h.Number(3), 4.0);
  EXPECT_EQ(h.Number(4), 0.0);
  EXPECT_EQ(h.Number(5), 6.0);
  std::vector<double> limits = Doubles(h.Bytes(6)), counts = Doubles(h.Bytes(7));
  ASSERT_EQ(limits.size(), counts.size());
  double total = 0;
  for (double c : counts) total += c;
  EXPECT_EQ(total, 4.0);
  // Each value lies in the bucket whose right edge is the first edge above it.
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    double lo = i == 0 ? -INFINITY : limits[i - 1];
    int inside = 0;
    for (double v : {0.0, 1.0, 1.0, -2.0}) inside += v >= lo && v < limits[i];
    EXPECT_EQ(inside, counts[i]) << i;
  }
  EXPECT_EQ(limits.back(), DBL_MAX);  // the empty run above 1.0 merged into one bucket
  EXPECT_ERROR(HistogramSummary("weights", {1.0, NAN}), "NaN in summary histogram for: weights");
}

TEST(CApiTfTest, WritesListsAndReadsBundles) {
  test::TempDir dir;
  std::string prefix = dir.path() + "/c";
  int64_t shape[] = {2, 2};
  int32_t ints[] = {1, -2, 3, 100};
  float floats[] = {0.5f, 1.5f, 2.5f, 3.5f};
  IRNDArrayHandle a, b, out;
  ASSERT_OK(IRNDArrayCreate(shape, 2, 2, ints, &a));
  ASSERT_OK(IRNDArrayCreate(shape, 2, 0, floats, &b));
  const char* names[] = {"a", "b"};
  IRNDArrayHandle values[] = {a, b};
  int narrow[] = {6, 1};
  ASSERT_OK(IRTFCheckpointWrite(prefix.c_str(), 2, names, values, narrow));
  uint32_t num;
  const char** listed;
  const int *dtypes, *ndims;
  const int64_t* dims;
  ASSERT_OK(IRTFCheckpointList(prefix.c_str(), &num, &listed, &dtypes, &ndims, &dims));
  ASSERT_EQ(num, 2u);
  EXPECT_STREQ(listed[0], "a");
  EXPECT_EQ(dtypes[0], 6);
  EXPECT_EQ(dtypes[1], 1);
  EXPECT_EQ(ndims[1], 2);
  EXPECT_EQ(dims[3], 2);
  ASSERT_OK(IRTFCheckpointRead(prefix.c_str(), "a", &out));
  EXPECT_EQ(static_cast<NDArray*>(out)->ToVector<int32_t>(), (std::vector<int32_t>{1, -2, 3, 100}));
  ASSERT_OK(IRNDArrayFree(out));
  int too_small[] = {6, 6};
  ints[3] = 1000;
  IRNDArrayHandle big;
  ASSERT_OK(IRNDArrayCreate(shape, 2, 2, ints, &big));
  values[0] = big;
  EXPECT_EQ(IRTFCheckpointWrite(prefix.c_str(), 2, names, values, too_small), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("value 1000 does not fit in DT_INT8"), std::string::npos);
  EXPECT_EQ(IRTFCheckpointRead(prefix.c_str(), "zz", &out), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("has no tensor 'zz'"), std::string::npos);
  for (IRNDArrayHandle h : {a, b, big}) ASSERT_OK(IRNDArrayFree(h));
}

TEST(CApiTfTest, NullArgumentsFailNamingTheArgument) {
  auto expect_null = [](int ret, const char* arg) {
    EXPECT_EQ(ret, -1) << arg;
    EXPECT_NE(std::string(IRGetLastError()).find(arg), std::string::npos) << IRGetLastError();
  };
  int64_t shape[] = {1};
  float one = 1;
  IRNDArrayHandle a, out;
  ASSERT_OK(IRNDArrayCreate(shape, 1, 0, &one, &a));
  const char* names[] = {"a"};
  IRNDArrayHandle values[] = {a};
  uint32_t num;
  const char** listed;
  const int *dtypes, *ndims;
  const int64_t* dims;
  const char* bytes;
  size_t len;
  expect_null(IRTFCheckpointWrite(nullptr, 1, names, values, nullptr), "'prefix'");
  expect_null(IRTFCheckpointWrite("p", 1, nullptr, values, nullptr), "'names' or 'values'");
  expect_null(IRTFCheckpointWrite("p", 1, names, nullptr, nullptr), "'names' or 'values'");
  expect_null(IRTFCheckpointList(nullptr, &num, &listed, &dtypes, &ndims, &dims), "'prefix'");
  expect_null(IRTFCheckpointList("p", nullptr, &listed, &dtypes, &ndims, &dims), "'num'");
  expect_null(IRTFCheckpointList("p", &num, nullptr, &dtypes, &ndims, &dims), "'names'");
  expect_null(IRTFCheckpointList("p", &num, &listed, nullptr, &ndims, &dims), "'tf_dtypes'");
  expect_null(IRTFCheckpointList("p", &num, &listed, &dtypes, nullptr, &dims), "'ndims'");
  expect_null(IRTFCheckpointList("p", &num, &listed, &dtypes, &ndims, nullptr), "'dims'");
  expect_null(IRTFCheckpointRead(nullptr, "a", &out), "'prefix'");
  expect_null(IRTFCheckpointRead("p", nullptr, &out), "'name'");
  expect_null(IRTFCheckpointRead("p", "a", nullptr), "'out'");
  expect_null(IRTFSummaryScalar(nullptr, 1, &bytes, &len), "'tag'");
  expect_null(IRTFSummaryScalar("t", 1, nullptr, &len), "'out'");
  expect_null(IRTFSummaryScalar("t", 1, &bytes, nullptr), "'out_len'");
  expect_null(IRTFSummaryHistogram(nullptr, a, &bytes, &len), "'tag'");
  expect_null(IRTFSummaryHistogram("t", nullptr, &bytes, &len), "'values'");
  expect_null(IRTFSummaryHistogram("t", a, nullptr, &len), "'out'");
  expect_null(IRTFSummaryHistogram("t", a, &bytes, nullptr), "'out_len'");
  expect_null(IRTFSummaryImage(nullptr, 1, 1, 1, "x", 1, &bytes, &len), "'tag'");
  expect_null(IRTFSummaryImage("t", 1, 1, 1, nullptr, 1, &bytes, &len), "'png'");
  expect_null(IRTFSummaryImage("t", 1, 1, 1, "x", 1, nullptr, &len), "'out'");
  expect_null(IRTFSummaryImage("t", 1, 1, 1, "x", 1, &bytes, nullptr), "'out_len'");
  int64_t dim = 1;
  const char* strings[] = {"hi"};
  expect_null(IRTFSummaryText(nullptr, 1, &dim, 1, strings, &bytes, &len), "'tag'");
  expect_null(IRTFSummaryText("t", 1, nullptr, 1, strings, &bytes, &len), "'dims'");
  expect_null(IRTFSummaryText("t", 1, &dim, 1, nullptr, &bytes, &len), "'strings'");
  expect_null(IRTFSummaryText("t", 1, &dim, 1, strings, nullptr, &len), "'out'");
  expect_null(IRTFSummaryText("t", 1, &dim, 1, strings, &bytes, nullptr), "'out_len'");
  expect_null(IRTFEventWrite(nullptr, 0, 0, nullptr, 0, "v"), "'path'");
  expect_null(IRTFEventWrite("p", 0, 0, nullptr, 3, nullptr), "'summary'");
  // Where NULL is allowed (tf_dtypes, summary for a file_version record, dims of a scalar) calls succeed.
  test::TempDir dir;
  ASSERT_OK(IRTFCheckpointWrite((dir.path() + "/ok").c_str(), 1, names, values, nullptr));
  ASSERT_OK(IRTFEventWrite((dir.path() + "/ev").c_str(), 0, 0, nullptr, 0, "brain.Event:2"));
  ASSERT_OK(IRTFSummaryText("t", 0, nullptr, 1, strings, &bytes, &len));
  ASSERT_OK(IRTFSummaryScalar("t", 1, &bytes, &len));
  ASSERT_OK(IRNDArrayFree(a));
}

}  // namespace
}  // namespace tf
}  // namespace ir
