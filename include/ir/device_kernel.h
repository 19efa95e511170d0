/*!
 * \file device_kernel.h
 * \brief Device kernels of opaque ops, written once in portable kernel C beside their op and
 * rendered for every accelerator target (OpenCL C, CUDA C, ...) by the target's dialect.
 *
 * An op whose math is not elementwise (convolution, pooling, softmax, matmul, a strided
 * reduction...) registers "FDeviceKernel": a host function that reads the op's typed
 * parameters from attrs.parsed, computes the launch geometry and launches kernels of a
 * DeviceKernelSource through the DeviceKernelContext it is given. Elementwise and broadcast
 * ops need nothing: their device kernels are derived from FCodeGen.
 *
 * Portable kernel C is C99 with a small vocabulary every dialect defines (the dialect's
 * prelude and `typedef <element type> T;` come first):
 *   IR_KERNEL void name(...)      a kernel entry point
 *   IR_ARRAY(T, x)                a parameter: array x (T*, writable) and its element offset
 *   IR_CONST_ARRAY(T, x)          the same, read-only (const T*)
 *   IR_OFFSET(x);                 applies the offset: x then points at the view's first element
 *   IR_GLOBAL                     qualifier of pointers into arrays (in helper signatures)
 *   IR_FUNC                       qualifier of helper functions
 *   IR_SHARED                     qualifier of a group-shared array, e.g. IR_SHARED T s[IR_GROUP_SIZE]
 *   IR_BARRIER()                  a barrier of the group (shared memory visible to all)
 *   IR_GROUP_SIZE                 work-items per group of a group launch (a power of two)
 *   IR_THREAD_LOOP(i, n)          grid-stride loop: every i in [0, n) once, over all work-items
 *   IR_GROUP_LOOP(g, n)           every g in [0, n) once per group (for group launches)
 *   IR_LOCAL_LOOP(i, n)           every i in [0, n) once within the group
 *   IR_LOCAL_ID                   this work-item's index in its group (a long)
 *   ir_exp ir_log ir_sqrt ir_fabs ir_floor ir_pow ir_fmax ir_fmin ir_tanh   math on T
 *   long, ulong, uint, uchar      64-bit / 32-bit / 8-bit integers in every dialect
 * Structs passed by value hold only long, double and float members (same layout everywhere).
 */
#ifndef IR_DEVICE_KERNEL_H_
#define IR_DEVICE_KERNEL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ir/ndarray.h"
#include "ir/op_kernel.h"

namespace ir {

/*! \brief Kernels written once in portable kernel C, compiled per element type T and target. */
struct DeviceKernelSource {
  /*! \brief Unique name of the library (e.g. "conv2d"): part of its cache key and dumps. */
  std::string name;
  /*! \brief Portable kernel C (the vocabulary in the file comment). */
  std::string body;
  /*! \brief The element types T it is compiled for. */
  std::vector<DType> dtypes;
};

/*!
 * \brief Registers a library (from a static initializer of an op file) so that tests and dumps
 * can render every library for every target; returns the stored library.
 */
const DeviceKernelSource& RegisterDeviceKernelSource(DeviceKernelSource source);
/*! \brief Every registered library, in registration order. */
std::vector<const DeviceKernelSource*> DeviceKernelSources();

/*! \brief The arguments of one kernel launch, in the order of the kernel's parameters. */
class DeviceArgs {
 public:
  /*! \brief An IR_ARRAY / IR_CONST_ARRAY parameter: the array's buffer and its element offset. */
  DeviceArgs& Array(const NDArray& array);
  /*! \brief A null array (a parameter the kernel does not read for these arguments). */
  DeviceArgs& NullArray();
  /*! \brief A scalar or plain struct by value (long/double/float members only; int32 scalars). */
  template <typename V>
  DeviceArgs& Value(const V& value) {
    std::string bytes(sizeof(V), '\0');
    std::memcpy(&bytes[0], &value, sizeof(V));
    values_.push_back(std::move(bytes));
    return *this;
  }
  /*! \brief `value` converted to the element type of `dtype` (a T parameter). */
  DeviceArgs& Scalar(DType dtype, double value);
  /*! \brief Each argument's bytes (an array is its handle, then a 64-bit element offset). */
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::vector<std::string> values_;
};

/*! \brief How many work-items a launch runs. */
struct DeviceLaunch {
  /*! \brief Threads: enough work-items for `work` iterations of IR_THREAD_LOOP. */
  static DeviceLaunch Threads(int64_t work) { return DeviceLaunch{work, false}; }
  /*! \brief Groups: enough groups of IR_GROUP_SIZE for `work` iterations of IR_GROUP_LOOP. */
  static DeviceLaunch Groups(int64_t work) { return DeviceLaunch{work, true}; }
  int64_t work = 0;
  bool groups = false;
};

/*!
 * \brief What a device kernel may do on the device it runs on (implemented by the device
 * layer for each target; kernels never see the target).
 */
class DeviceKernelContext {
 public:
  virtual ~DeviceKernelContext() = default;
  /*! \brief The run's context (device, queue, seed, training flag). */
  virtual const OpContext& op_context() const = 0;
  /*!
   * \brief Whether the device computes in double precision (some OpenCL devices do not): a
   * kernel whose source needs double falls back to dev.RunOnHost where it is false.
   */
  virtual bool SupportsFloat64() const = 0;
  /*!
   * \brief About how many work-items the device runs at once (compute units times the work-items
   * each keeps in flight): a kernel can pick one work-item per output when it has at least this
   * many outputs (each summing serially), and a group per output (summing in shared memory) below.
   */
  virtual int64_t ConcurrentWorkItems() const = 0;
  /*!
   * \brief Enqueues kernel `kernel` of `source` compiled for element type `dtype` (compiled once
   * per target and dtype, through the kernel cache). Nothing runs when launch.work is 0.
   */
  virtual void Launch(const DeviceKernelSource& source, DType dtype, const std::string& kernel, const DeviceArgs& args,
                      DeviceLaunch launch) = 0;
  /*! \brief Runs the kernel derived from the node's FCodeGen or reduction (as with no FDeviceKernel). */
  virtual void RunDerived(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                          const std::vector<NDArray>& outputs) = 0;
  /*! \brief Runs any node on this device the way the executor would (its device kernel, else on the host). */
  virtual void RunNode(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                       const std::vector<NDArray>& outputs) = 0;
  /*! \brief Runs the op's CPU kernel on host copies (for the rare cases no device kernel covers). */
  virtual void RunOnHost(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                         const std::vector<NDArray>& outputs) = 0;
  /*! \brief Sets every element of `array` to `value` converted to its dtype. */
  virtual void Fill(const NDArray& array, double value) = 0;
  /*! \brief Copies `src` into `dst` (same size), unless they are the same memory. */
  virtual void Copy(const NDArray& src, const NDArray& dst) = 0;
};

/*!
 * \brief "FDeviceKernel": an opaque op's kernel on every accelerator target. `inputs` and
 * `outputs` live on the context's device; outputs are allocated with the inferred shapes.
 */
using FDeviceKernel = std::function<void(DeviceKernelContext& device, const NodeAttrs& attrs,
                                         const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs)>;

}  // namespace ir

#endif  // IR_DEVICE_KERNEL_H_
