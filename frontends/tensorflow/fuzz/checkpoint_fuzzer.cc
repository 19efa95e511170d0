/*!
 * \file checkpoint_fuzzer.cc
 * \brief libFuzzer target: each input is a checkpoint V2 bundle, `.index` and data shard
 * (layout: fuzz_checkpoint.h; see ../README.md, "Fuzzing").
 */
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::tf::FuzzCheckpoint(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
