/*!
 * \file opencl_library.h
 * \brief The hand-written OpenCL kernels of opaque ops (matmul, convolution, pooling,
 * reductions, softmax...), compiled as one program per element type.
 *
 * Each kernels_*.cc file registers its OpenCL C text (written against an element type `T`)
 * with an OpenCLLibrarySource object, and its ops' "FCompute<opencl>" kernels launch the
 * library's kernels with RunKernel. The program for a dtype is all registered texts with `T`
 * defined, built on first use through the KernelCache (so later processes load its binary),
 * and sizes and strides are kernel arguments: a whole run needs one build per element type.
 */
#ifndef IR_RUNTIME_OPENCL_OPENCL_LIBRARY_H_
#define IR_RUNTIME_OPENCL_OPENCL_LIBRARY_H_

#include <string>
#include <vector>

#include "ir/device_kernel.h"
#include "ir/op_kernel.h"
#include "ops/nn_common.h"
#include "runtime/opencl/opencl_runtime.h"

namespace ir {
namespace opencl {

/*!
 * \brief The key these kernels register under: the device layer ranks it below FDeviceKernel,
 * so an op's portable kernel replaces its kernel here as soon as it exists.
 */
constexpr char kLegacyKey[] = "FComputeLegacy<opencl>";

/*! \brief Launch arguments (an array is its cl_mem, then its element offset). */
using KernelArgs = DeviceArgs;

/*! \brief Element types a library text can be compiled for. */
enum class LibraryTypes { kAll, kNumeric, kFloat };

/*! \brief Registers OpenCL C text for the library (a static object per kernels_*.cc file). */
struct OpenCLLibrarySource {
  OpenCLLibrarySource(const char* name, LibraryTypes types, const char* text);
};

/*! \brief The most dimensions a strided view passed to a library kernel may have. */
constexpr int kMaxDims = 8;

/*!
 * \brief A strided walk over `ndim` dimensions, passed by value to kernels as `ir_strided`:
 * element i (row-major over `extent`) is at sum_d coordinate_d * stride[d].
 */
struct StridedWalk {
  cl_long ndim = 0;
  cl_long extent[kMaxDims] = {0};
  cl_long stride[kMaxDims] = {0};
};

/*!
 * \brief A walk over `extents` with `strides`, dimensions of extent 1 dropped and neighbours
 * merged where contiguous; throws naming `what` when more than kMaxDims remain.
 */
StridedWalk MakeWalk(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides, const std::string& what);

/*!
 * \brief The geometry of a convolution or pooling window, passed by value to kernels as
 * `ir_window`: input (n, c, h, w), output channels and extents, kernel, strides, dilations,
 * leading padding, and the (batch, channel, row, column) element strides of input and output.
 */
struct WindowArg {
  cl_long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  cl_long xs[4];
  cl_long ys[4];
};

/*! \brief The kernel argument describing `geometry`. */
WindowArg MakeWindowArg(const op::nn::Geometry& geometry);

/*!
 * \brief Enqueues library kernel `name` of the `dtype` program over `global` work-items in
 * groups of `local` (0: the module's default size) on the run's queue.
 */
void RunKernel(const OpContext& ctx, DType dtype, const std::string& name, const KernelArgs& args, int64_t global,
               int64_t local = 0);

/*! \brief Sets every element of `array` to `value` (converted to its dtype), queued on the run's queue. */
void Fill(const OpContext& ctx, const NDArray& array, double value);

/*! \brief Copies `src` into `dst` (same size) on the device, unless they are the same memory. */
void CopyUnlessAliased(const NDArray& src, const NDArray& dst);

/*! \brief Checks that every array is on the device library kernels run on (errors name `what`). */
void CheckArrays(const std::vector<NDArray>& arrays, const NodeAttrs& attrs);

/*! \brief The OpenCL C text of the library for `dtype` (for tests and dumps). */
std::string LibrarySourceFor(DType dtype);

}  // namespace opencl
}  // namespace ir

#endif  // IR_RUNTIME_OPENCL_OPENCL_LIBRARY_H_
