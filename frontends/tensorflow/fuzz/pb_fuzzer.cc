/*!
 * \file pb_fuzzer.cc
 * \brief libFuzzer target: each input is a binary GraphDef (see ../README.md).
 */
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::tf::FuzzModel(std::string(reinterpret_cast<const char*>(data), size), /*text=*/false);
  return 0;
}
