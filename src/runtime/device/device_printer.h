/*!
 * \file device_printer.h
 * \brief The KernelPrinter of every accelerator target: one C-family printer driven by the
 * target's Dialect.
 */
#ifndef IR_RUNTIME_DEVICE_DEVICE_PRINTER_H_
#define IR_RUNTIME_DEVICE_DEVICE_PRINTER_H_

#include <memory>

#include "ir/codegen.h"
#include "runtime/device/dialect.h"

namespace ir {
namespace device {

/*!
 * \brief A printer of generated kernels in `dialect`. Every buffer parameter is followed by its
 * element offset (`const long in0_offset`). Maps walk their domain with a grid-stride loop;
 * reductions give each output one work-item with a serial loop, or, over a long reduced axis,
 * one group whose work-items stride along it and combine partial results in shared memory.
 * Each kernel is preceded by its launch line (launch_table.h).
 */
std::shared_ptr<KernelPrinter> MakeDevicePrinter(const Dialect& dialect);

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_DEVICE_PRINTER_H_
