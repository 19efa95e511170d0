/*!
 * \file cuda_emulator.h
 * \brief Runs the CUDA backend's kernels on the CPU, to check what they compute where no GPU
 * exists: "cuda" device memory becomes host memory, and the "cuda" device target (the same
 * CUDA dialect, so the device layer prints the same CUDA C) compiles with g++ behind a small
 * shim (threadIdx/blockIdx as statics, __shared__ as function statics, __syncthreads as a
 * switch between the block's 256 threads run as fibers).
 *
 * Kernels use grid-stride loops, so a launch runs at most two blocks, one after the other;
 * the kernels of a source that synchronizes anywhere run their threads as fibers, the others
 * run them in turn. Only the driver calls stay unexercised.
 */
#ifndef IR_TESTS_CUDA_EMULATED_CUDA_EMULATOR_H_
#define IR_TESTS_CUDA_EMULATED_CUDA_EMULATOR_H_

namespace ir {
namespace test {

/*! \brief Replaces the CUDA DeviceAPI and the "cuda" device target with the emulator (for the process). */
void InstallCUDAEmulator();

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_CUDA_EMULATED_CUDA_EMULATOR_H_
