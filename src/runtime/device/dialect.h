/*!
 * \file dialect.h
 * \brief The per-target table of an accelerator's kernel language: everything the device
 * layer needs to print generated kernels and the portable prelude for that target.
 *
 * A new accelerator target writes one Dialect (OpenCL C and CUDA C are two instances), a
 * DeviceTarget (device_target.h) and a DeviceAPI; nothing else of the layer changes.
 */
#ifndef IR_RUNTIME_DEVICE_DIALECT_H_
#define IR_RUNTIME_DEVICE_DIALECT_H_

#include <cstdint>
#include <string>

#include "ir/ndarray.h"

namespace ir {
namespace device {

/*! \brief How one target spells kernels; see the exact portable prelude in docs/BACKENDS.md. */
struct Dialect {
  /*! \brief Target name: the KernelPrinter / KernelCompiler / TargetDefaults key ("opencl", "cuda"). */
  std::string target;
  /*! \brief Device type whose nodes the target runs. */
  DeviceType device_type = DeviceType::kCPU;
  /*! \brief First lines of every translation unit (pragmas, typedefs, INFINITY/NAN), each ending in '\n'. */
  std::string header;
  /*! \brief Line enabling double precision where the kernel uses it ("" when always available). */
  std::string fp64_enable;
  /*! \brief Qualifiers: kernel entry point, pointers into arrays, group-shared arrays, helper functions. */
  std::string kernel_qualifier;
  std::string global_qualifier;
  std::string shared_qualifier;
  std::string function_qualifier;
  /*! \brief A barrier of the group with shared memory visible to all its work-items. */
  std::string barrier;
  /*! \brief Index expressions (integers): global id and size, local id and size, group id and count. */
  std::string global_id, global_size, local_id, local_size, group_id, num_groups;
  /*! \brief Element type names: float32, float64, int32, int64 (a 64-bit `long`), bool (a byte). */
  std::string float32_type = "float", float64_type = "double", int32_type = "int", int64_type = "long",
              bool_type = "uchar";
  /*! \brief Math built-ins are overloaded by type (OpenCL); else float spellings take an "f" suffix (C, CUDA). */
  bool overloaded_math = false;
  /*! \brief rsqrt is a built-in accurate enough to use; else 1 / sqrt(x). */
  bool native_rsqrt = false;
  /*! \brief Work-items per group of every launch (a power of two; IR_GROUP_SIZE). */
  int64_t group_size = 128;
  /*! \brief Most groups one launch uses: grid-stride loops cover the rest. */
  int64_t max_groups = 1024;
  /*! \brief F_max the target registers with TargetDefaults. */
  int fmax = 8;

  /*! \brief The element type name of `dtype`; throws naming the target for others. */
  std::string TypeName(DType dtype) const;
};

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_DIALECT_H_
