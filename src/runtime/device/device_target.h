/*!
 * \file device_target.h
 * \brief What a thin accelerator target implements (build and load programs, launch their
 * kernels) and how it joins the device layer (RegisterDeviceTarget).
 *
 * The layer does the rest for every target: it registers the target's KernelPrinter (one
 * DevicePrinter driven by the Dialect), its KernelCompiler (the target's Compile/Load wrapped
 * with the launch table of generated kernels, so modules from the disk cache know their
 * launches), its TargetDefaults, and the kernel selection of its nodes (FDeviceKernel,
 * kernels derived from FCodeGen, shape-only ops, host fallback).
 */
#ifndef IR_RUNTIME_DEVICE_DEVICE_TARGET_H_
#define IR_RUNTIME_DEVICE_DEVICE_TARGET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/op_kernel.h"
#include "runtime/device/dialect.h"

namespace ir {
namespace device {

/*! \brief A built program (module) of a target, loaded on its device(s). */
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;
  /*!
   * \brief Enqueues kernel `kernel` over `groups` groups of `group_size` work-items on the
   * device and queue of `ctx` (ctx.queue null: the device's own), without waiting. `args`
   * holds each kernel argument's bytes, in order (an array is two: its handle, then its
   * int64 element offset). Throws ir::Error naming the kernel when it cannot launch.
   */
  virtual void Launch(const std::string& kernel, const std::vector<std::string>& args, int64_t groups,
                      int64_t group_size, const OpContext& ctx) = 0;
};

/*! \brief A thin accelerator target: its dialect and its compiler. */
class DeviceTarget {
 public:
  virtual ~DeviceTarget() = default;
  /*! \brief The target's kernel language table. */
  virtual const Dialect& dialect() const = 0;
  /*! \brief Compiler identity and flags (part of every cache key). */
  virtual std::string CompilerId() const = 0;
  /*! \brief Compiles source text to a blob (program binary, PTX). Throws with the source and log. */
  virtual std::string Compile(const std::string& source) const = 0;
  /*! \brief Loads a blob made by Compile, possibly by another process. Throws if invalid. */
  virtual std::shared_ptr<DeviceProgram> Load(const std::string& blob) const = 0;
  /*! \brief Whether kernels may use double (the dialect's fp64_enable line then applies). */
  virtual bool SupportsFloat64() const { return true; }
  /*! \brief About how many work-items the device runs at once (DeviceKernelContext::ConcurrentWorkItems). */
  virtual int64_t ConcurrentWorkItems() const { return 1 << 16; }
};

/*!
 * \brief Makes `target` the implementation of target dialect().target (replacing an earlier
 * one, as test emulators do) and registers its printer, compiler, defaults and kernel selection.
 */
void RegisterDeviceTarget(std::shared_ptr<DeviceTarget> target);

/*! \brief The target registered under `name` ("opencl"); throws naming it when none. */
const DeviceTarget& GetDeviceTarget(const std::string& name);

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_DEVICE_TARGET_H_
