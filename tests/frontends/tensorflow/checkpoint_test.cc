/*!
 * \file checkpoint_test.cc
 * \brief The checkpoint V2 reader: the LevelDB-format table (built here byte by byte) and the
 * real bundles TensorFlow wrote.
 */
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ir_tf/checkpoint.h"
#include "limits_test_util.h"
#include "snappy.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/*! \brief `raw` as a valid Snappy stream of literals only (what matters is the framing). */
std::string SnappyLiterals(const std::string& raw) {
  std::string out;
  PutVarint(&out, raw.size());
  for (size_t at = 0; at < raw.size(); at += 60) {
    std::string chunk = raw.substr(at, 60);
    out.push_back(static_cast<char>((chunk.size() - 1) << 2));
    out += chunk;
  }
  return out;
}

/*! \brief A block as LevelDB writes it: prefix-compressed keys, a restart every `interval` entries. */
std::string Block(const std::vector<std::pair<std::string, std::string>>& entries, int interval, char compression = 0) {
  std::string out, prev;
  std::vector<uint32_t> restarts;
  for (size_t i = 0; i < entries.size(); ++i) {
    size_t shared = 0;
    if (i % interval == 0) {
      restarts.push_back(static_cast<uint32_t>(out.size()));
    } else {
      while (shared < prev.size() && shared < entries[i].first.size() && prev[shared] == entries[i].first[shared])
        ++shared;
    }
    PutVarint(&out, shared);
    PutVarint(&out, entries[i].first.size() - shared);
    PutVarint(&out, entries[i].second.size());
    out += entries[i].first.substr(shared) + entries[i].second;
    prev = entries[i].first;
  }
  if (restarts.empty()) restarts.push_back(0);
  for (uint32_t r : restarts) PutFixed32(&out, r);
  PutFixed32(&out, static_cast<uint32_t>(restarts.size()));
  if (compression == 1) out = SnappyLiterals(out);
  out.push_back(compression);
  PutFixed32(&out, MaskCrc(Crc32c(out.data(), out.size())));
  return out;
}

/*!
 * \brief A table of the data blocks `blocks` (Block()s, concatenated), an empty meta-index block,
 * an index block of `handles` (offset, size of each data block) and the footer.
 */
std::string TableOf(const std::string& blocks, const std::vector<std::pair<uint64_t, uint64_t>>& handles) {
  std::string file = blocks;
  std::vector<std::pair<std::string, std::string>> index;
  for (size_t i = 0; i < handles.size(); ++i) {
    std::string handle;
    PutVarint(&handle, handles[i].first);
    PutVarint(&handle, handles[i].second);
    index.emplace_back(StrCat("k", i), handle);
  }
  uint64_t meta_offset = file.size();
  file += Block({}, 16);
  uint64_t index_offset = file.size();
  file += Block(index, 16);
  std::string footer;
  PutVarint(&footer, meta_offset);
  PutVarint(&footer, index_offset - meta_offset - 5);
  PutVarint(&footer, index_offset);
  PutVarint(&footer, file.size() - index_offset - 5);
  footer.resize(40, '\0');
  PutFixed32(&footer, 0x8b80fb57u);
  PutFixed32(&footer, 0xdb477524u);
  return file + footer;
}

/*! \brief A table of one data block holding `entries`. */
std::string Table(const std::vector<std::pair<std::string, std::string>>& entries, char compression = 0) {
  std::string block = Block(entries, 2, compression);
  return TableOf(block, {{0, block.size() - 5}});
}

TEST(CheckpointTest, ComputesCrc32c) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);  // the standard check value of CRC-32C
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(CheckpointTest, ReadsTablesWithSharedKeyPrefixes) {
  std::vector<std::pair<std::string, std::string>> entries = {
      {"", "header"}, {"layer/bias", "b"}, {"layer/kernel", "k"}, {"layer/kernel/Adam", "m"}, {"z", ""}};
  std::map<std::string, std::string> table = ReadTable(Table(entries));
  ASSERT_EQ(table.size(), entries.size());
  for (const auto& kv : entries) EXPECT_EQ(table.at(kv.first), kv.second) << kv.first;
}

TEST(CheckpointTest, RejectsCorruptOrCompressedTables) {
  std::string good = Table({{"a", "1"}});
  EXPECT_ERROR(ReadTable(good.substr(0, 20), "x.index"), "'x.index' is too short to be a table");
  std::string bad_magic = good;
  bad_magic[bad_magic.size() - 1] ^= 1;
  EXPECT_ERROR(ReadTable(bad_magic, "x.index"), "bad magic number");
  std::string flipped = good;
  flipped[3] ^= 0x40;
  EXPECT_ERROR(ReadTable(flipped, "x.index"), "fails its CRC check");
  EXPECT_ERROR(ReadTable(Table({{"a", "1"}}, 2), "x.index"), "is compressed with type 2, which is not supported");
}

TEST(CheckpointTest, RejectsBlockHandlesWhoseSizeWrapsAround) {
  // offset 0, size 2^64 - 3: size + the 5-byte trailer wraps to 2, which once passed the bounds check.
  std::string block = Block({{"a", "1"}}, 2);
  EXPECT_ERROR(ReadTable(TableOf(block, {{0, ~uint64_t{0} - 2}}), "x.index"),
               "'x.index': a block handle points past the end of the file");
}

TEST(CheckpointTest, RejectsTablesWhoseKeysAreOutOfOrderOrRepeated) {
  // Before, the last of two values of a key was taken without a word.
  EXPECT_ERROR(ReadTable(Table({{"w", "1"}, {"w", "2"}}), "x.index"), "key 'w' is out of order or repeated");
  EXPECT_ERROR(ReadTable(Table({{"b", "1"}, {"a", "2"}}), "x.index"), "key 'a' is out of order or repeated");
  std::string first = Block({{"a", "1"}}, 2), second = Block({{"b", "2"}}, 2);
  uint64_t size1 = first.size() - 5, size2 = second.size() - 5;
  EXPECT_EQ(ReadTable(TableOf(first + second, {{0, size1}, {first.size(), size2}})).size(), 2u);
  EXPECT_ERROR(ReadTable(TableOf(first + second, {{first.size(), size2}, {0, size1}}), "x.index"),
               "data block at offset 0 overlaps or precedes the one before it");
}

TEST(CheckpointTest, AnIndexNamingOneBlockManyTimesIsRejectedAtOnce) {
  // 20,000 mentions of one 100 KB block (no entries, all restart points) would be 2 GB of CRC work.
  std::string block = Block({}, 16);
  std::string big(100000, '\0');
  PutFixed32(&big, 100000 / 4);
  big.push_back('\0');
  PutFixed32(&big, MaskCrc(Crc32c(big.data(), big.size())));
  std::vector<std::pair<uint64_t, uint64_t>> handles(20000, {0, big.size() - 5});
  EXPECT_ERROR(ReadTable(TableOf(big, handles), "x.index"), "data block at offset 0 overlaps or precedes");
}

TEST(CheckpointTest, ReadsSnappyCompressedBlocks) {
  std::vector<std::pair<std::string, std::string>> entries = {{"", "header"}, {"w", std::string(100, 'x')}};
  EXPECT_EQ(ReadTable(Table(entries, 1)).at("w"), std::string(100, 'x'));
  // Literal "abc", a copy of 6 bytes from 3 back (overlapping), literal "X".
  std::string stream(
      "\x0a\x08"
      "abc"
      "\x09\x03"
      "\x00"
      "X",
      9);
  EXPECT_EQ(SnappyUncompress(stream, "s"), "abcabcabcX");
  EXPECT_ERROR(SnappyUncompress("\x0a\x08"
                                "abc\x09\x07",
                                "s"),
               "'s': snappy copy out of bounds");
  EXPECT_ERROR(SnappyUncompress("\x05\x10"
                                "ab",
                                "s"),
               "'s': snappy literal out of bounds");
  EXPECT_ERROR(SnappyUncompress(std::string("\x05\x00"
                                            "a",
                                            3),
                                "s"),
               "'s': snappy block holds 1 bytes, expected 5");
}

TEST(CheckpointTest, ReadsTheSavedModelVariables) {
  IR_TF_REQUIRE(dir, "tensorflow-serving/saved_model_half_plus_two_tf2_cpu/variables");
  CheckpointReader reader(dir + "/variables");
  const double expected[] = {0.5, 2, 3};
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    std::string key = std::string(names[i]) + "/.ATTRIBUTES/VARIABLE_VALUE";
    ASSERT_TRUE(reader.Has(key)) << key;
    NDArray value = reader.Read(key);
    EXPECT_EQ(value.shape(), Shape::Scalar());
    test::ExpectClose(value, {expected[i]}, key, 0, 0);
  }
  EXPECT_FALSE(reader.IsNumeric("_CHECKPOINTABLE_OBJECT_GRAPH"));
  EXPECT_ERROR(reader.Read("_CHECKPOINTABLE_OBJECT_GRAPH"), "has dtype DT_STRING, which does not load as an array");
  EXPECT_ERROR(reader.Read("nope"), "has no tensor 'nope'");
}

TEST(CheckpointTest, ReadsTheRegressionCheckpoint) {
  IR_TF_REQUIRE(index, "tensorflow-onnx/regression/checkpoint/model.index");
  CheckpointReader reader(index.substr(0, index.size() - 6));
  ASSERT_TRUE(reader.Has("W") && reader.Has("b"));
  // The frozen graph of the same model computes pred = 0.21396178 * X + 1.0495254.
  test::ExpectClose(reader.Read("W"), {0.21396178}, "W", 1e-7, 0);
  test::ExpectClose(reader.Read("b"), {1.0495254}, "b", 1e-7, 0);
}

/*! \brief A BundleEntryProto (wire format) of a float tensor of `dims` at `offset`, `size` bytes. */
std::string FloatEntry(const std::vector<uint64_t>& dims, uint64_t offset, uint64_t size, uint32_t crc) {
  std::string shape, entry = "\x08\x01";  // dtype: DT_FLOAT
  for (uint64_t d : dims) {
    std::string dim = "\x08";
    PutVarint(&dim, d);
    shape += "\x12" + std::string(1, static_cast<char>(dim.size())) + dim;
  }
  entry += "\x12" + std::string(1, static_cast<char>(shape.size())) + shape + "\x20";
  PutVarint(&entry, offset);
  entry += "\x28";
  PutVarint(&entry, size);
  entry += "\x35";
  PutFixed32(&entry, crc);
  return entry;
}

/*! \brief A one-shard bundle `dir`/ckpt holding the entry of `w` and the data bytes; returns the prefix. */
std::string Bundle(const test::TempDir& dir, const std::string& entry, const std::string& data) {
  dir.File("ckpt.index", Table({{"", "\x08\x01"}, {"w", entry}}));  // header: num_shards 1
  dir.File("ckpt.data-00000-of-00001", data);
  return dir.path() + "/ckpt";
}

TEST(CheckpointTest, EntriesClaimingMoreBytesThanTheDataFileHoldAreRejectedBeforeAllocating) {
  test::TempDir dir;
  std::string data("\0\0\x80\x3f\0\0\0\x40", 8);  // 1.0f, 2.0f
  uint32_t crc = MaskCrc(Crc32c(data.data(), data.size()));
  test::ExpectClose(CheckpointReader(Bundle(dir, FloatEntry({2}, 0, 8, crc), data)).Read("w"), {1, 2}, "w", 0, 0);
  // A tiny index claiming 3.1 GB of float data: checked against the 8-byte data file first.
  CheckpointReader huge(Bundle(dir, FloatEntry({775000000}, 0, 3100000000, crc), data));
  long before = test::PeakRssMiB();
  EXPECT_ERROR(huge.Read("w"), "is too short for tensor 'w': 3100000000 bytes at offset 0 but the file holds 8 bytes");
  EXPECT_LT(test::PeakRssMiB() - before, 256);
  CheckpointReader past_the_end(Bundle(dir, FloatEntry({1}, 6, 4, crc), data));
  EXPECT_ERROR(past_the_end.Read("w"), "4 bytes at offset 6 but the file holds 8 bytes");
}

TEST(CheckpointTest, EntrySizeMustMatchItsShapeAndDtype) {
  test::TempDir dir;
  std::string data(8, '\0');
  CheckpointReader empty(Bundle(dir, FloatEntry({2}, 0, 0, MaskCrc(Crc32c("", 0))), data));
  EXPECT_ERROR(empty.Read("w"), "checkpoint tensor 'w': the index gives it 0 bytes but shape [2] of DT_FLOAT needs 8");
  CheckpointReader overflowing(Bundle(dir, FloatEntry({1ull << 62, 8}, 0, 8, 0), data));
  EXPECT_ERROR(overflowing.Read("w"), "is invalid or too large");
}

TEST(CheckpointTest, ChecksTheBundleVersionAndEntryShapes) {
  test::TempDir dir;
  std::string data("\0\0\x80\x3f", 4);
  std::string entry = FloatEntry({1}, 0, 4, MaskCrc(Crc32c(data.data(), data.size())));
  dir.File("ckpt.data-00000-of-00001", data);
  std::string prefix = dir.path() + "/ckpt";
  // header { num_shards: 1 version { producer: 1 min_consumer: 2 } }: written for a newer reader.
  dir.File("ckpt.index", Table({{"", std::string("\x08\x01\x1a\x04\x08\x01\x10\x02", 8)}, {"w", entry}}));
  EXPECT_ERROR(CheckpointReader{prefix}, "checkpoint min consumer version 2 above current version 1");
  // version { bad_consumers: 1 }
  dir.File("ckpt.index", Table({{"", std::string("\x08\x01\x1a\x02\x18\x01", 6)}, {"w", entry}}));
  EXPECT_ERROR(CheckpointReader{prefix}, "checkpoint disallows consumer version 1");
  // shape { unknown_rank: true }: once read as a scalar.
  std::string unknown_rank = "\x08\x01\x12\x02\x18\x01" + entry.substr(entry.find('\x20'));
  dir.File("ckpt.index", Table({{"", "\x08\x01"}, {"w", unknown_rank}}));
  EXPECT_ERROR(CheckpointReader{prefix}, "'w' has a shape of unknown rank");
  dir.File("ckpt.index", Table({{"", "\x08\x01"}, {"w", entry}}));
  test::ExpectClose(CheckpointReader(prefix).Read("w"), {1}, "w", 0, 0);
}

TEST(CheckpointTest, NamesTheMissingIndexFile) {
  EXPECT_ERROR(CheckpointReader("/nonexistent/model"), "cannot open '/nonexistent/model.index'");
}

}  // namespace
}  // namespace tf
}  // namespace ir
