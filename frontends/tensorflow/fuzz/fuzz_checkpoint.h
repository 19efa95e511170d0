/*!
 * \file fuzz_checkpoint.h
 * \brief What the checkpoint fuzz target (and the test replaying its corpus) does with one input:
 * split it into a bundle's `.index` and its one data shard, open the bundle and read every
 * tensor it lists. ir::Error is the expected outcome for bad input; anything else (a crash,
 * another exception, a hang, an allocation the input did not pay for) is a bug.
 *
 * Input layout: a 4-byte little-endian length n, n bytes of `.index`, then the
 * `.data-00000-of-00001` bytes (shorter inputs: all `.index`, no data).
 */
#ifndef IR_TF_FUZZ_CHECKPOINT_H_
#define IR_TF_FUZZ_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "fuzz_files.h"
#include "ir_tf/checkpoint.h"

namespace ir {
namespace tf {

/*! \brief The index and data parts of a fuzz input (layout above). */
inline void SplitCheckpointInput(const std::string& data, std::string* index, std::string* shard) {
  uint32_t n = 0;
  for (int i = 0; i < 4 && i < static_cast<int>(data.size()); ++i)
    n |= uint32_t{static_cast<uint8_t>(data[i])} << (8 * i);
  if (data.size() < 4 || n > data.size() - 4) {
    *index = data;
    shard->clear();
    return;
  }
  *index = data.substr(4, n);
  *shard = data.substr(4 + n);
}

/*! \brief The inverse of SplitCheckpointInput: a corpus input from a bundle's two files. */
inline std::string JoinCheckpointInput(const std::string& index, const std::string& shard) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((index.size() >> (8 * i)) & 0xFF));
  return out + index + shard;
}

/*! \brief Opens and reads the bundle in `data`; "" when every tensor read, else the first error. */
inline std::string FuzzCheckpoint(const std::string& data) {
  std::string index, shard, error;
  SplitCheckpointInput(data, &index, &shard);
  try {
    ReadTable(index, "fuzz.index");
  } catch (const Error& err) {
    error = err.what();
  }
  FuzzScratch::Write("ckpt.index", index);
  FuzzScratch::Write("ckpt.data-00000-of-00001", shard);
  try {
    CheckpointReader reader(FuzzScratch::Dir() + "/ckpt");
    for (const auto& kv : reader.tensors()) {
      try {
        if (reader.IsNumeric(kv.first)) {
          reader.Read(kv.first);
        } else {
          reader.ReadBytes(kv.first);
        }
      } catch (const Error& err) {  // one bad tensor does not hide the others
        if (error.empty()) error = err.what();
      }
    }
  } catch (const Error& err) {
    if (error.empty()) error = err.what();
  }
  return error;
}

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUZZ_CHECKPOINT_H_
