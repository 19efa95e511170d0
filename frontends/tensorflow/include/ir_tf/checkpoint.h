/*!
 * \file checkpoint.h
 * \brief Reading TensorFlow checkpoint V2 bundles: `<prefix>.index` (a LevelDB-format table of
 * BundleEntryProto keyed by tensor name) and `<prefix>.data-NNNNN-of-NNNNN` (the bytes).
 */
#ifndef IR_TF_CHECKPOINT_H_
#define IR_TF_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ndarray.h"

namespace ir {
namespace tf {

/*! \brief Key -> value of every entry of a table file (LevelDB format, uncompressed blocks). */
std::map<std::string, std::string> ReadTable(const std::string& bytes, const std::string& origin = "<memory>");

/*! \brief One tensor of a bundle, as the index describes it. */
struct BundleTensorInfo {
  std::string key;
  /*! \brief TensorFlow DataType number (1 float, 2 double, 3 int32, 9 int64, 10 bool...). */
  int tf_dtype = 0;
  std::vector<int64_t> shape;
  int shard = 0;
  int64_t offset = 0;
  int64_t size = 0;
  /*! \brief Masked CRC32C of the bytes. */
  uint32_t crc32c = 0;
};

/*! \brief A checkpoint bundle opened at `prefix`. */
class CheckpointReader {
 public:
  /*! \brief Reads and checks `<prefix>.index`; throws ir::Error naming the file. */
  explicit CheckpointReader(const std::string& prefix);
  /*! \brief Every tensor the index lists, by key. */
  const std::map<std::string, BundleTensorInfo>& tensors() const { return tensors_; }
  bool Has(const std::string& key) const { return tensors_.count(key) != 0; }
  /*!
   * \brief The value of `key`, read from its data shard and checked against its CRC32C.
   * \throws ir::Error for a missing key, an unsupported dtype (strings...), or bad data.
   */
  NDArray Read(const std::string& key) const;
  /*! \brief True when `key`'s dtype loads as an NDArray (numbers and bools). */
  bool IsNumeric(const std::string& key) const;
  /*! \brief The raw bytes of `key` in its shard (for string tensors such as the object graph). */
  std::string ReadBytes(const std::string& key) const;

 private:
  std::string prefix_;
  int num_shards_ = 1;
  std::map<std::string, BundleTensorInfo> tensors_;
};

/*! \brief One tensor to write: its key, TensorFlow DataType number, shape and little-endian bytes. */
struct BundleTensor {
  std::string key;
  int tf_dtype = 0;
  std::vector<int64_t> shape;
  std::string bytes;
};

/*!
 * \brief A LevelDB-format table of `entries` (sorted by key) as TensorFlow's table builder writes
 * it: uncompressed data blocks of about `block_size` bytes (keys prefix-compressed, a restart
 * point every 16), an empty metaindex block, an index block of shortened separator keys, the footer.
 */
std::string BuildTable(const std::map<std::string, std::string>& entries, size_t block_size = 256 * 1024);

/*!
 * \brief Writes a one-shard checkpoint V2 bundle: `<prefix>.data-00000-of-00001` (the bytes, in
 * key order) and `<prefix>.index` (header and entries with masked CRC32Cs). Each file is written
 * to a temporary name and renamed. \throws ir::Error for an empty or duplicate key, a dtype
 * other than numbers and bools, bytes that do not match the shape, or a file that cannot be written.
 */
void WriteCheckpoint(const std::string& prefix, const std::vector<BundleTensor>& tensors);

/*! \brief CRC32C (Castagnoli) of `n` bytes, and the masked form LevelDB and TF store. */
uint32_t Crc32c(const void* data, size_t n);
uint32_t MaskCrc(uint32_t crc);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_CHECKPOINT_H_
