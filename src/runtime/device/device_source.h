/*!
 * \file device_source.h
 * \brief Rendering portable kernel C (ir/device_kernel.h) for a target: the dialect's portable
 * prelude (the IR_* vocabulary) and complete translation units per element type.
 */
#ifndef IR_RUNTIME_DEVICE_DEVICE_SOURCE_H_
#define IR_RUNTIME_DEVICE_DEVICE_SOURCE_H_

#include <string>

#include "ir/device_kernel.h"
#include "runtime/device/dialect.h"

namespace ir {
namespace device {

/*! \brief The IR_* macros and ir_* math helpers of `dialect` (docs/BACKENDS.md lists them). */
std::string PortablePrelude(const Dialect& dialect);

/*!
 * \brief The translation unit of `source` for element type `dtype`: the dialect header, fp64
 * enabled when used, the portable prelude, `typedef <type> T;`, then the body. Throws naming
 * the source when `dtype` is not one of its dtypes.
 */
std::string RenderKernelSource(const Dialect& dialect, const DeviceKernelSource& source, DType dtype);

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_DEVICE_SOURCE_H_
