/*!
 * \file saved_model_fuzzer.cc
 * \brief libFuzzer target: each input is a binary SavedModel (saved_model.pb; see ../README.md,
 * "Fuzzing"): loaded, its graph and function library imported (fuzz_saved_model.h).
 */
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_saved_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::tf::FuzzSavedModel(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
