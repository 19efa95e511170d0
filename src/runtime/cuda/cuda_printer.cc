/*!
 * \file cuda_printer.cc
 * \brief Prints kernels as CUDA C for NVRTC: one extern "C" __global__ function per kernel.
 *
 * Maps walk their domain with a grid-stride loop (int64 indices), recovering each loop
 * variable from the flat element index. Reductions give each (outer, inner) output one
 * thread with a serial loop, or, when the reduced extent is large, one block whose threads
 * stride along the reduced axis and combine their partial results in shared memory. The
 * element body (lets, loads, stores) is CFamilyPrinter's, so it is the C printer's.
 */
#include "codegen/c_family_printer.h"
#include "runtime/cuda/cuda_module.h"

namespace ir {
namespace cuda {
namespace {

// A reduced extent from which one block per output beats one thread per output.
constexpr int64_t kBlockReduceExtent = 512;

class CUDAPrinter final : public codegen::CFamilyPrinter {
 public:
  std::string TypeName(DType dtype) const override {
    switch (dtype) {
      case DType::kFloat32:
        return "float";
      case DType::kFloat64:
        return "double";
      case DType::kInt32:
        return "int";
      case DType::kInt64:
        return "long long";
      case DType::kBool:
        return "unsigned char";
      default:
        throw Error(StrCat("CUDA printer: no type for dtype ", DTypeName(dtype)));
    }
  }

  std::string MathCall(const std::string& function, DType dtype, const std::vector<std::string>& args) const override {
    if (function == "rsqrt") return StrCat(dtype == DType::kFloat32 ? "rsqrtf(" : "rsqrt(", args[0], ")");
    return CFamilyPrinter::MathCall(function, dtype, args);
  }

  std::string Print(const std::vector<Kernel>& kernels) const override {
    std::ostringstream os;
    os << Prelude();
    for (const Kernel& kernel : kernels) PrintKernel(kernel, os);
    return os.str();
  }

 private:
  static bool BlockReduce(const Kernel& kernel) {
    return kernel.kind == Kernel::kReduce && kernel.extents[1] >= kBlockReduceExtent;
  }

  void PrintKernel(const Kernel& kernel, std::ostringstream& os) const {
    int64_t work = kernel.kind == Kernel::kMap ? kernel.NumIterations() : kernel.extents[0] * kernel.extents[2];
    int64_t blocks = BlockReduce(kernel) ? std::min(work, kMaxBlocks) : BlocksFor(work);
    os << "\nextern \"C\" __device__ const long long " << kernel.name << "_work = " << work << "LL;\n"
       << "extern \"C\" __device__ const long long " << kernel.name << "_blocks = " << blocks << "LL;\n"
       << "extern \"C\" __global__ void __launch_bounds__(" << kBlockSize << ") " << kernel.name << "(";
    for (const KernelParam& p : kernel.params) {
      os << (p.is_output ? "" : "const ") << TypeName(p.dtype) << "* " << p.name << "_base, long long " << p.name
         << "_offset, ";
    }
    os << "long long n) {\n";
    for (const KernelParam& p : kernel.params) {
      os << "  " << (p.is_output ? "" : "const ") << TypeName(p.dtype) << "* " << p.name << " = " << p.name
         << "_base + " << p.name << "_offset;\n";
    }
    if (kernel.kind == Kernel::kMap) {
      PrintMap(kernel, os);
    } else if (BlockReduce(kernel)) {
      PrintBlockReduce(kernel, os);
    } else {
      PrintThreadReduce(kernel, os);
    }
    os << "}\n";
  }

  static const char* ThreadLoop() {
    return "  for (long long ir_g = (long long)blockIdx.x * blockDim.x + threadIdx.x; ir_g < n;"
           " ir_g += (long long)gridDim.x * blockDim.x) {\n";
  }

  void PrintMap(const Kernel& kernel, std::ostringstream& os) const {
    const auto& e = kernel.extents;
    os << ThreadLoop() << "    long long ir_rest = ir_g;\n";
    for (size_t d = e.size(); d-- > 1;) {
      os << "    const long long i" << d << " = ir_rest % " << e[d] << "LL;\n"
         << "    ir_rest /= " << e[d] << "LL;\n";
    }
    os << "    const long long i0 = ir_rest;\n";
    PrintElement(kernel, FlatIndex(e), "    ", os);
    os << "  }\n";
  }

  /*! \brief (i0, i2) of output `ir_g`, and the statements of one reduced element. */
  void PrintReduceStep(const Kernel& kernel, const std::string& acc, const std::string& indent,
                       std::ostringstream& os) const {
    int64_t red = kernel.extents[1], inner = kernel.extents[2];
    PrintElement(kernel, StrCat("((i0 * ", red, " + i1) * ", inner, " + i2)"), indent, os);
    os << indent << Combine(kernel.reduce_kind, acc, PrintExpr(kernel.reduce_value), kernel.reduce_value->dtype)
       << "\n";
  }

  std::string OutputPosition(const Kernel& kernel) const {
    return StrCat("    const long long i0 = ir_g / ", kernel.extents[2], "LL;\n", "    const long long i2 = ir_g % ",
                  kernel.extents[2], "LL;\n");
  }

  std::string Finish(const Kernel& kernel, const std::string& acc) const {
    if (kernel.reduce_kind != "mean") return acc;
    return StrCat(acc, " / ", Literal(static_cast<double>(kernel.extents[1]), kernel.reduce_value->dtype));
  }

  void PrintThreadReduce(const Kernel& kernel, std::ostringstream& os) const {
    DType acc_type = kernel.reduce_value->dtype;
    os << ThreadLoop() << OutputPosition(kernel) << "    " << TypeName(acc_type)
       << " ir_acc = " << ReduceInit(kernel.reduce_kind, acc_type) << ";\n"
       << "    for (long long i1 = 0; i1 < " << kernel.extents[1] << "LL; ++i1) {\n";
    PrintReduceStep(kernel, "ir_acc", "      ", os);
    os << "    }\n"
       << "    " << kernel.params.at(kernel.reduce_output).name << "[ir_g] = " << Finish(kernel, "ir_acc") << ";\n"
       << "  }\n";
  }

  void PrintBlockReduce(const Kernel& kernel, std::ostringstream& os) const {
    DType acc_type = kernel.reduce_value->dtype;
    std::string type = TypeName(acc_type);
    os << "  __shared__ " << type << " ir_partial[" << kBlockSize << "];\n"
       << "  for (long long ir_g = blockIdx.x; ir_g < n; ir_g += gridDim.x) {\n"
       << OutputPosition(kernel) << "    " << type << " ir_acc = " << ReduceInit(kernel.reduce_kind, acc_type) << ";\n"
       << "    for (long long i1 = threadIdx.x; i1 < " << kernel.extents[1] << "LL; i1 += blockDim.x) {\n";
    PrintReduceStep(kernel, "ir_acc", "      ", os);
    os << "    }\n"
       << "    ir_partial[threadIdx.x] = ir_acc;\n"
       << "    __syncthreads();\n"
       << "    for (unsigned ir_s = blockDim.x / 2; ir_s > 0; ir_s >>= 1) {\n"
       << "      if (threadIdx.x < ir_s) "
       << Combine(kernel.reduce_kind, "ir_partial[threadIdx.x]", "ir_partial[threadIdx.x + ir_s]", acc_type) << "\n"
       << "      __syncthreads();\n"
       << "    }\n"
       << "    if (threadIdx.x == 0) " << kernel.params.at(kernel.reduce_output).name
       << "[ir_g] = " << Finish(kernel, "ir_partial[0]") << ";\n"
       << "    __syncthreads();\n"
       << "  }\n";
  }
};

struct RegisterCUDAPrinter {
  RegisterCUDAPrinter() { KernelPrinter::Register("cuda", std::make_shared<CUDAPrinter>()); }
} register_cuda_printer;

}  // namespace
}  // namespace cuda
}  // namespace ir
