/*!
 * \file checkpoint.cc
 * \brief TensorFlow checkpoint V2 bundles: the `.index` table (LevelDB's table format: data
 * blocks of prefix-compressed keys with restart points, an index block, a footer) and tensor
 * bytes read from the data shards; and the writer of one-shard bundles, byte-compatible with
 * TensorFlow's table_builder and BundleWriter.
 */
#include "ir_tf/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "file_util.h"
#include "ir_tf_tensor.pb.h"
#include "ir_tf_tensor_bundle.pb.h"
#include "proto_parse.h"
#include "snappy.h"
#include "tensor_decode.h"
#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;
constexpr size_t kBlockTrailerSize = 5;
constexpr uint8_t kSnappy = 1;
/*! \brief Largest tensor read from a bundle. */
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

/*!
 * \brief Whether `n` bytes have the masked CRC32C `stored`. A fuzzing build (IR_BUILD_FUZZERS
 * defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, as OSS-Fuzz does) accepts any: a mutated
 * input would otherwise almost never get past the check to the parsing behind it.
 */
bool CrcMatches(const char* data, size_t n, uint32_t stored) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  (void)data, (void)n, (void)stored;
  return true;
#else
  return MaskCrc(Crc32c(data, n)) == stored;
#endif
}

/*! \brief A bounds-checked reader over bytes; every failure names the file. */
class Cursor {
 public:
  Cursor(const std::string& bytes, size_t begin, size_t end, const std::string& origin)
      : bytes_(bytes), pos_(begin), end_(end), origin_(origin) {}
  bool done() const { return pos_ >= end_; }
  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      IR_CHECK(pos_ < end_) << "'" << origin_ << "': truncated varint";
      uint8_t byte = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    throw Error(StrCat("'", origin_, "': malformed varint"));
  }
  std::string Bytes(uint64_t n) {
    IR_CHECK(n <= end_ - pos_) << "'" << origin_ << "': an entry runs past the end of its block";
    std::string out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  const std::string& bytes_;
  size_t pos_, end_;
  const std::string& origin_;
};

uint32_t Fixed32(const std::string& bytes, size_t pos) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[pos + i]);
  return v;
}

struct BlockHandle {
  uint64_t offset = 0, size = 0;
};

BlockHandle ReadHandle(Cursor* cursor) {
  BlockHandle h;
  h.offset = cursor->Varint();
  h.size = cursor->Varint();
  return h;
}

/*! \brief The contents of the block at `handle`: CRC-checked, and uncompressed when it is snappy. */
std::string ReadBlock(const std::string& file, const BlockHandle& handle, const std::string& origin) {
  // Each bound on its own: handle.size + kBlockTrailerSize could wrap around.
  IR_CHECK(handle.offset <= file.size() && handle.size <= file.size() - handle.offset &&
           kBlockTrailerSize <= file.size() - handle.offset - handle.size)
      << "'" << origin << "': a block handle points past the end of the file";
  size_t begin = handle.offset, size = handle.size;
  uint8_t compression = static_cast<uint8_t>(file[begin + size]);
  uint32_t stored = Fixed32(file, begin + size + 1);
  IR_CHECK(CrcMatches(file.data() + begin, size + 1, stored))
      << "'" << origin << "': block at offset " << begin << " fails its CRC check (corrupt file)";
  std::string contents = file.substr(begin, size);
  if (compression == kSnappy) return SnappyUncompress(contents, origin);
  IR_CHECK(compression == 0) << "'" << origin << "': block at offset " << begin << " is compressed with type "
                             << int{compression} << ", which is not supported (only none and snappy are)";
  return contents;
}

/*! \brief Calls visit(key, value) for each entry of the block at `handle`. */
template <typename F>
void ForEachEntry(const std::string& file, const BlockHandle& handle, const std::string& origin, const F& visit) {
  std::string block = ReadBlock(file, handle, origin);
  size_t size = block.size();
  IR_CHECK(size >= 4) << "'" << origin << "': block at offset " << handle.offset << " is too short";
  uint64_t restarts = Fixed32(block, size - 4);
  IR_CHECK(restarts <= (size - 4) / 4) << "'" << origin << "': block at offset " << handle.offset
                                       << " has a bad restart count";
  Cursor cursor(block, 0, size - 4 * (restarts + 1), origin);
  std::string key;
  while (!cursor.done()) {
    uint64_t shared = cursor.Varint(), unshared = cursor.Varint(), value_size = cursor.Varint();
    IR_CHECK(shared <= key.size()) << "'" << origin << "': an entry shares more of the previous key than it has";
    key = key.substr(0, shared) + cursor.Bytes(unshared);
    visit(key, cursor.Bytes(value_size));
  }
}

const uint32_t* CrcTable() {
  static uint32_t table[256];
  static bool ready = [] {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      table[i] = c;
    }
    return true;
  }();
  (void)ready;
  return table;
}

/*! \brief Checks that the entry's byte count is what its shape and dtype need (an empty entry is not zeros). */
void CheckEntrySize(const BundleTensorInfo& info) {
  uint64_t need = TFTypeSize(info.tf_dtype);
  for (int64_t d : info.shape) {
    IR_CHECK(d >= 0 && !__builtin_mul_overflow(need, static_cast<uint64_t>(d), &need))
        << "shape " << Shape(info.shape) << " is invalid or too large";
  }
  IR_CHECK(need == static_cast<uint64_t>(info.size))
      << "the index gives it " << info.size << " bytes but shape " << Shape(info.shape) << " of "
      << TFTypeName(info.tf_dtype) << " needs " << need;
}

/*! \brief TensorFlow's CheckVersions for bundles: this reader is consumer version 1 (kTensorBundleVersion). */
void CheckVersion(const tfproto::VersionDef& version, const std::string& path) {
  constexpr int kConsumer = 1;
  IR_CHECK(version.producer() >= 0) << "'" << path << "': checkpoint producer version " << version.producer()
                                    << " below min producer 0";
  IR_CHECK(version.min_consumer() <= kConsumer) << "'" << path << "': checkpoint min consumer version "
                                                << version.min_consumer() << " above current version " << kConsumer;
  for (int bad : version.bad_consumers()) {
    IR_CHECK(bad != kConsumer) << "'" << path << "': checkpoint disallows consumer version " << bad;
  }
}

}  // namespace

uint32_t Crc32c(const void* data, size_t n) {
  const uint32_t* table = CrcTable();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::map<std::string, std::string> ReadTable(const std::string& bytes, const std::string& origin) {
  IR_CHECK(bytes.size() >= kFooterSize) << "'" << origin << "' is too short to be a table (" << bytes.size()
                                        << " bytes)";
  size_t footer = bytes.size() - kFooterSize;
  uint64_t magic =
      static_cast<uint64_t>(Fixed32(bytes, footer + 40)) | static_cast<uint64_t>(Fixed32(bytes, footer + 44)) << 32;
  IR_CHECK(magic == kTableMagic) << "'" << origin << "' is not a table file (bad magic number)";
  Cursor cursor(bytes, footer, footer + 40, origin);
  ReadHandle(&cursor);  // the metaindex block: TensorFlow writes no meta blocks
  BlockHandle index = ReadHandle(&cursor);
  std::map<std::string, std::string> table;
  uint64_t data_end = 0;  // where the previous data block (with its trailer) ends
  ForEachEntry(bytes, index, origin, [&](const std::string&, const std::string& handle_bytes) {
    Cursor handle_cursor(handle_bytes, 0, handle_bytes.size(), origin);
    BlockHandle block = ReadHandle(&handle_cursor);
    // A table's data blocks follow each other; an index naming one twice (or out of order) is
    // corrupt, and would make the reader do the work of a block once per mention.
    IR_CHECK(block.offset >= data_end) << "'" << origin << "': data block at offset " << block.offset
                                       << " overlaps or precedes the one before it (corrupt index block)";
    ForEachEntry(bytes, block, origin, [&](const std::string& key, const std::string& value) {
      // Keys are strictly increasing through the whole table: a repeated key has no one value.
      IR_CHECK(table.empty() || key > table.rbegin()->first)
          << "'" << origin << "': key '" << key << "' is out of order or repeated (corrupt table)";
      table.emplace_hint(table.end(), key, value);
    });
    data_end = block.offset + block.size + kBlockTrailerSize;
  });
  return table;
}

CheckpointReader::CheckpointReader(const std::string& prefix) : prefix_(prefix) {
  std::string path = prefix + ".index";
  std::map<std::string, std::string> table = ReadTable(ReadFile(path), path);
  auto header_it = table.find("");
  IR_CHECK(header_it != table.end()) << "'" << path << "' has no bundle header: not a checkpoint V2 index";
  tfproto::BundleHeaderProto header;
  IR_CHECK(ParseBinary(header_it->second, &header)) << "'" << path << "': malformed bundle header";
  IR_CHECK(header.endianness() == tfproto::BundleHeaderProto::LITTLE)
      << "'" << path << "': big-endian bundles are not supported";
  CheckVersion(header.version(), path);
  num_shards_ = header.num_shards();
  IR_CHECK(num_shards_ >= 1) << "'" << path << "': the header declares " << num_shards_ << " shards";
  for (const auto& kv : table) {
    if (kv.first.empty()) continue;
    tfproto::BundleEntryProto entry;
    IR_CHECK(ParseBinary(kv.second, &entry)) << "'" << path << "': malformed entry for '" << kv.first << "'";
    BundleTensorInfo info;
    info.key = kv.first;
    info.tf_dtype = entry.dtype();
    IR_CHECK(!entry.shape().unknown_rank())
        << "'" << path << "': '" << kv.first << "' has a shape of unknown rank (corrupt entry)";
    for (const auto& dim : entry.shape().dim()) info.shape.push_back(dim.size());
    info.shard = entry.shard_id();
    info.offset = entry.offset();
    info.size = entry.size();
    info.crc32c = entry.crc32c();
    IR_CHECK(info.offset >= 0 && info.size >= 0)
        << "'" << path << "': '" << kv.first << "' has offset " << info.offset << " and size " << info.size;
    IR_CHECK(entry.slices().empty()) << "'" << path << "': '" << kv.first << "' is partitioned, which is not supported";
    IR_CHECK(info.shard >= 0 && info.shard < num_shards_)
        << "'" << path << "': '" << kv.first << "' is in shard " << info.shard << " of " << num_shards_;
    tensors_[kv.first] = info;
  }
}

std::string CheckpointReader::ReadBytes(const std::string& key) const {
  auto it = tensors_.find(key);
  IR_CHECK(it != tensors_.end()) << "checkpoint '" << prefix_ << "' has no tensor '" << key << "'";
  const BundleTensorInfo& info = it->second;
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", info.shard, num_shards_);
  std::string path = prefix_ + suffix;
  std::string bytes = RegularFile(path).ReadAt(static_cast<uint64_t>(info.offset), static_cast<uint64_t>(info.size),
                                               StrCat("tensor '", key, "'"));
  IR_CHECK(CrcMatches(bytes.data(), bytes.size(), info.crc32c))
      << "'" << path << "': the bytes of '" << key << "' fail their CRC check (corrupt file)";
  return bytes;
}

bool CheckpointReader::IsNumeric(const std::string& key) const {
  auto it = tensors_.find(key);
  return it != tensors_.end() && TFTypeSize(it->second.tf_dtype) != 0;
}

NDArray CheckpointReader::Read(const std::string& key) const {
  IR_CHECK(Has(key)) << "checkpoint '" << prefix_ << "' has no tensor '" << key << "'";
  const BundleTensorInfo& info = tensors_.at(key);
  IR_CHECK(IsNumeric(key)) << "checkpoint tensor '" << key << "' has dtype " << TFTypeName(info.tf_dtype)
                           << ", which does not load as an array";
  tfproto::TensorProto proto;
  proto.set_dtype(static_cast<tfproto::DataType>(info.tf_dtype));
  for (int64_t d : info.shape) proto.mutable_tensor_shape()->add_dim()->set_size(d);
  try {
    CheckEntrySize(info);
    proto.set_tensor_content(ReadBytes(key));
    return DecodeTensor(proto, kMaxTensorBytes);
  } catch (const Error& err) {
    throw Error(StrCat("checkpoint tensor '", key, "': ", err.what()));
  }
}

namespace {

void PutVarint(std::string* out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out->push_back(static_cast<char>((v & 0x7F) | 0x80));
  out->push_back(static_cast<char>(v));
}

void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/*! \brief LevelDB's BlockBuilder: prefix-compressed entries and a restart point every `interval`. */
class BlockBuilder {
 public:
  explicit BlockBuilder(int interval) : interval_(interval) {}
  void Add(const std::string& key, const std::string& value) {
    size_t shared = 0;
    if (counter_ < interval_) {
      while (shared < key.size() && shared < last_key_.size() && key[shared] == last_key_[shared]) ++shared;
    } else {
      restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
      counter_ = 0;
    }
    PutVarint(&buffer_, shared);
    PutVarint(&buffer_, key.size() - shared);
    PutVarint(&buffer_, value.size());
    buffer_.append(key, shared, std::string::npos);
    buffer_ += value;
    last_key_ = key;
    ++counter_;
  }
  size_t SizeEstimate() const { return buffer_.size() + 4 * restarts_.size() + 4; }
  bool empty() const { return buffer_.empty(); }
  /*! \brief The finished block; the builder starts over. */
  std::string Finish() {
    std::string out = std::move(buffer_);
    for (uint32_t r : restarts_) PutFixed32(&out, r);
    PutFixed32(&out, static_cast<uint32_t>(restarts_.size()));
    buffer_.clear();
    restarts_.assign(1, 0);
    counter_ = 0;
    last_key_.clear();
    return out;
  }

 private:
  int interval_, counter_ = 0;
  std::string buffer_, last_key_;
  std::vector<uint32_t> restarts_{0};
};

/*! \brief BytewiseComparator::FindShortestSeparator: a short key in [start, limit). */
std::string ShortestSeparator(std::string start, const std::string& limit) {
  size_t n = std::min(start.size(), limit.size()), i = 0;
  while (i < n && start[i] == limit[i]) ++i;
  if (i < n) {
    auto byte = static_cast<uint8_t>(start[i]);
    if (byte < 0xFF && byte + 1 < static_cast<uint8_t>(limit[i])) {
      start[i] = static_cast<char>(byte + 1);
      start.resize(i + 1);
    }
  }
  return start;
}

/*! \brief BytewiseComparator::FindShortSuccessor: a short key >= `key`. */
std::string ShortSuccessor(std::string key) {
  for (size_t i = 0; i < key.size(); ++i) {
    if (static_cast<uint8_t>(key[i]) != 0xFF) {
      key[i] = static_cast<char>(static_cast<uint8_t>(key[i]) + 1);
      key.resize(i + 1);
      return key;
    }
  }
  return key;
}

/*! \brief Appends `block` with its trailer (no compression, masked CRC32C); returns its handle's encoding. */
std::string AppendBlock(std::string* file, const std::string& block) {
  std::string handle;
  PutVarint(&handle, file->size());
  PutVarint(&handle, block.size());
  *file += block;
  file->push_back('\0');
  PutFixed32(file, MaskCrc(Crc32c(file->data() + file->size() - block.size() - 1, block.size() + 1)));
  return handle;
}

/*! \brief Writes `bytes` to a temporary file next to `path` and renames it over `path`. */
void WriteFileAtomically(const std::string& path, const std::string& bytes) {
  std::string tmp = StrCat(path, ".tempstate", static_cast<long>(getpid()));
  try {
    WriteFile(tmp, bytes);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(StrCat("cannot rename '", tmp, "' to '", path, "'"));
  }
}

}  // namespace

std::string BuildTable(const std::map<std::string, std::string>& entries, size_t block_size) {
  std::string file, last_key, pending_handle;
  BlockBuilder data(16), index(1);
  for (const auto& kv : entries) {
    if (!pending_handle.empty()) {  // the index entry of the block just finished: a key between the two blocks
      index.Add(ShortestSeparator(last_key, kv.first), pending_handle);
      pending_handle.clear();
    }
    data.Add(kv.first, kv.second);
    last_key = kv.first;
    if (data.SizeEstimate() >= block_size) pending_handle = AppendBlock(&file, data.Finish());
  }
  if (!data.empty()) pending_handle = AppendBlock(&file, data.Finish());
  if (!pending_handle.empty()) index.Add(ShortSuccessor(last_key), pending_handle);
  std::string footer = AppendBlock(&file, BlockBuilder(16).Finish());  // the (empty) metaindex block
  footer += AppendBlock(&file, index.Finish());
  footer.resize(kFooterSize - 8, '\0');
  PutFixed32(&footer, static_cast<uint32_t>(kTableMagic & 0xFFFFFFFFu));
  PutFixed32(&footer, static_cast<uint32_t>(kTableMagic >> 32));
  return file + footer;
}

void WriteCheckpoint(const std::string& prefix, const std::vector<BundleTensor>& tensors) {
  std::map<std::string, const BundleTensor*> sorted;
  for (const BundleTensor& t : tensors) {
    IR_CHECK(!t.key.empty()) << "checkpoint '" << prefix << "': a tensor has an empty name";
    IR_CHECK(sorted.emplace(t.key, &t).second)
        << "checkpoint '" << prefix << "': tensor '" << t.key << "' is given twice";
  }
  std::map<std::string, std::string> table;
  tfproto::BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  table[""] = header.SerializeAsString();
  std::string data;
  for (const auto& kv : sorted) {
    const BundleTensor& t = *kv.second;
    BundleTensorInfo info{
        t.key, t.tf_dtype, t.shape, 0, static_cast<int64_t>(data.size()), static_cast<int64_t>(t.bytes.size()), 0};
    try {
      IR_CHECK(TFTypeSize(t.tf_dtype) != 0) << "dtype " << TFTypeName(t.tf_dtype) << " cannot be written";
      CheckEntrySize(info);
    } catch (const Error& err) {
      throw Error(StrCat("checkpoint '", prefix, "': tensor '", t.key, "': ", err.what()));
    }
    tfproto::BundleEntryProto entry;
    entry.set_dtype(static_cast<tfproto::DataType>(t.tf_dtype));
    tfproto::TensorShapeProto* shape = entry.mutable_shape();  // present even for scalars, as TF writes it
    for (int64_t d : t.shape) shape->add_dim()->set_size(d);
    entry.set_offset(info.offset);
    entry.set_size(info.size);
    entry.set_crc32c(MaskCrc(Crc32c(t.bytes.data(), t.bytes.size())));
    table[t.key] = entry.SerializeAsString();
    data += t.bytes;
  }
  WriteFileAtomically(prefix + ".data-00000-of-00001", data);
  WriteFileAtomically(prefix + ".index", BuildTable(table));
}

}  // namespace tf
}  // namespace ir
