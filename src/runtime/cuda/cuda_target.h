/*!
 * \file cuda_target.h
 * \brief The "cuda" device target: the CUDA C dialect table, NVRTC compilation to PTX, and PTX
 * programs launched through the driver. Everything else (printing generated kernels, portable
 * kernels, kernel selection, the launch table) is the device layer's (runtime/device/).
 */
#ifndef IR_RUNTIME_CUDA_CUDA_TARGET_H_
#define IR_RUNTIME_CUDA_CUDA_TARGET_H_

#include <memory>
#include <string>

#include "runtime/device/device_target.h"

namespace ir {
namespace cuda {

/*! \brief The CUDA C (NVRTC) dialect: also the emulator's (tests/cuda/emulated), which runs the same text. */
const device::Dialect& CUDADialect();

/*! \brief NVRTC's version and options (the compiler id, part of every cache key). */
std::string NVRTCId();

/*! \brief The PTX of `source` from NVRTC; throws with NVRTC's log and the source. */
std::string CompileToPTX(const std::string& source);

/*!
 * \brief `ptx` as a launchable program, loaded on cuda:0 now (so a missing driver or a bad blob
 * fails here, with "no CUDA device" when there is none) and on other devices on first launch.
 */
std::shared_ptr<device::DeviceProgram> LoadPTX(const std::string& ptx);

}  // namespace cuda
}  // namespace ir

#endif  // IR_RUNTIME_CUDA_CUDA_TARGET_H_
