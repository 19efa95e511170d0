// An op library whose device kernel source takes a name already registered ("ir_fill", the
// device layer's own): loading it fails with an error naming the source, applies none of its
// registrations, and lists none of its sources (op_library_test.cc).
#include "ir/device_kernel.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace {

const char kBody[] = "IR_KERNEL void dup_fill(IR_ARRAY(T, y), const long n) {\n  IR_OFFSET(y);\n}\n";

[[maybe_unused]] const ir::DeviceKernelSource& kDuplicate =
    ir::RegisterDeviceKernelSource({"ir_fill", kBody, {ir::DType::kFloat32}});
[[maybe_unused]] const ir::DeviceKernelSource& kOrphan =
    ir::RegisterDeviceKernelSource({"test_orphan_source", kBody, {ir::DType::kFloat32}});

}  // namespace

IR_REGISTER_OP(duplicate_source_op)
    .describe("Never registered: its library's source name conflicts.")
    .set_num_inputs(0);
