/*!
 * \file cuda_module.h
 * \brief What the CUDA printer, compiler and op kernels share: the source prelude, the launch
 * contract of printed kernels, and the loaded module (PTX) kernels are launched from.
 *
 * A printed kernel `K` takes, per buffer, its base pointer and the element offset of the
 * view, then the element count `n` it iterates over (work items: elements for a map, outputs
 * for a reduction). Its launch geometry travels with the PTX as two device constants,
 * `K_work` (n) and `K_blocks` (the grid size), so a module loaded from the disk cache by
 * another process knows how to launch every kernel without the Kernel that produced it.
 */
#ifndef IR_RUNTIME_CUDA_CUDA_MODULE_H_
#define IR_RUNTIME_CUDA_CUDA_MODULE_H_

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "runtime/cuda/cuda_driver.h"

namespace ir {
namespace cuda {

/*! \brief Threads per block of every launch (block reductions assume a power of two). */
constexpr int kBlockSize = 256;
/*! \brief Most blocks one launch uses; kernels stride over the rest (grid-stride loops). */
constexpr int64_t kMaxBlocks = 1 << 16;

/*! \brief Definitions every CUDA translation unit starts with (integer types, INFINITY, NAN). */
const char* Prelude();

/*! \brief How to launch one printed kernel: its element count argument and grid size. */
struct LaunchShape {
  int64_t work = 0;
  int64_t blocks = 0;
};

/*! \brief The launch shapes of the printed kernels of a PTX module, by kernel name. */
std::map<std::string, LaunchShape> ReadLaunchShapes(const std::string& ptx);

/*! \brief Kernel arguments by value, kept alive for cuLaunchKernel (which takes their addresses). */
class KernelArgs {
 public:
  template <typename T>
  KernelArgs& Add(const T& value) {
    values_.emplace_back(sizeof(T), '\0');
    std::memcpy(&values_.back()[0], &value, sizeof(T));
    return *this;
  }
  /*! \brief The device address of an array's first element (base pointer plus view offset). */
  KernelArgs& AddArray(const NDArray& array);
  /*! \brief Pointers to every argument, in order. */
  std::vector<void*> Pointers();

 private:
  std::vector<std::string> values_;
};

/*!
 * \brief A compiled module kernels are launched from: by name with explicit arguments
 * (hand-written kernels), or with the printed calling convention (Launch).
 */
class Launcher : public CompiledModule {
 public:
  /*! \brief Launches kernel `name` with `blocks` blocks of kBlockSize threads on ctx's stream. */
  virtual void LaunchRaw(const std::string& name, KernelArgs* args, int64_t blocks, const OpContext& ctx) = 0;
  /*! \brief The launch shape of printed kernel `name`; throws when the module has none. */
  virtual LaunchShape ShapeOf(const std::string& name) const = 0;
  /*! \brief Launches printed kernel `name` on `args`: base pointers, element offsets, then `n`. */
  void Launch(const std::string& name, const std::vector<NDArray>& args, const OpContext& ctx) override;
};

/*! \brief A PTX module, loaded through the driver into every device it is launched on. */
class Module final : public Launcher {
 public:
  /*! \brief Loads `ptx` on cuda:0 (so a bad blob fails here); throws "no CUDA device" without one. */
  explicit Module(std::string ptx);
  void LaunchRaw(const std::string& name, KernelArgs* args, int64_t blocks, const OpContext& ctx) override;
  LaunchShape ShapeOf(const std::string& name) const override;

 private:
  CUfunction Function(int device, const std::string& name);

  std::string ptx_;
  std::map<std::string, LaunchShape> shapes_;
  std::mutex mutex_;
  std::map<int, CUmodule> modules_;
  std::map<std::pair<int, std::string>, CUfunction> functions_;
};

/*! \brief Blocks needed for `work` items, one per thread, capped at kMaxBlocks. */
inline int64_t BlocksFor(int64_t work) {
  int64_t blocks = (work + kBlockSize - 1) / kBlockSize;
  return blocks < kMaxBlocks ? blocks : kMaxBlocks;
}

}  // namespace cuda
}  // namespace ir

#endif  // IR_RUNTIME_CUDA_CUDA_MODULE_H_
