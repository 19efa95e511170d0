/*!
 * \file npy_fuzzer.cc
 * \brief libFuzzer target: each input is a .npy file (see ../README.md). ir::Error is the
 * expected outcome for bad input; an array that parses must survive a write/read round trip.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ir_tf/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::NDArray array;
  try {
    array = ir::tf::ParseNpy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  } catch (const ir::Error&) {
    return 0;
  }
  ir::NDArray again = ir::tf::ParseNpy(ir::tf::FormatNpy(array), "round trip");
  if (again.shape() != array.shape() || again.dtype() != array.dtype() ||
      std::memcmp(again.data(), array.data(), array.nbytes()) != 0) {
    __builtin_trap();
  }
  return 0;
}
