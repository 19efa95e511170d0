/*!
 * \file device_source.cc
 * \brief The portable prelude generated from a dialect, and portable sources rendered per dtype.
 */
#include "runtime/device/device_source.h"

#include <algorithm>
#include <sstream>

namespace ir {
namespace device {
namespace {

const char* const kUnaryMath[] = {"exp", "log", "sqrt", "fabs", "floor", "tanh"};
const char* const kBinaryMath[] = {"pow", "fmax", "fmin"};

/*! \brief ir_<name> on float and double: the overloaded built-in, or wrappers of name##f / name. */
void PrintMath(const Dialect& d, std::ostringstream& os) {
  for (const char* name : kUnaryMath) {
    if (d.overloaded_math) {
      os << "#define ir_" << name << " " << name << "\n";
      continue;
    }
    os << d.function_qualifier << " float ir_" << name << "(float x) { return " << name << "f(x); }\n"
       << d.function_qualifier << " double ir_" << name << "(double x) { return " << name << "(x); }\n";
  }
  for (const char* name : kBinaryMath) {
    if (d.overloaded_math) {
      os << "#define ir_" << name << " " << name << "\n";
      continue;
    }
    os << d.function_qualifier << " float ir_" << name << "(float x, float y) { return " << name << "f(x, y); }\n"
       << d.function_qualifier << " double ir_" << name << "(double x, double y) { return " << name << "(x, y); }\n";
  }
}

std::string Qualified(const std::string& qualifier) { return qualifier.empty() ? "" : qualifier + " "; }

}  // namespace

std::string PortablePrelude(const Dialect& d) {
  std::ostringstream os;
  std::string global = Qualified(d.global_qualifier);
  os << "#define IR_KERNEL " << d.kernel_qualifier << "\n"
     << "#define IR_GLOBAL " << d.global_qualifier << "\n"
     << "#define IR_FUNC " << d.function_qualifier << "\n"
     << "#define IR_SHARED " << d.shared_qualifier << "\n"
     << "#define IR_BARRIER() " << d.barrier << "\n"
     << "#define IR_GROUP_SIZE " << d.group_size << "\n"
     << "#define IR_LOCAL_ID ((long)" << d.local_id << ")\n"
     << "#define IR_ARRAY(T, x) " << global << "T* x, const long x##_offset\n"
     << "#define IR_CONST_ARRAY(T, x) " << global << "const T* x, const long x##_offset\n"
     << "#define IR_OFFSET(x) x += x##_offset\n"
     << "#define IR_THREAD_LOOP(i, n) for (long i = " << d.global_id << "; i < (n); i += " << d.global_size << ")\n"
     << "#define IR_GROUP_LOOP(g, n) for (long g = " << d.group_id << "; g < (n); g += " << d.num_groups << ")\n"
     << "#define IR_LOCAL_LOOP(i, n) for (long i = " << d.local_id << "; i < (n); i += " << d.local_size << ")\n";
  PrintMath(d, os);
  return os.str();
}

std::string RenderKernelSource(const Dialect& d, const DeviceKernelSource& source, DType dtype) {
  std::vector<std::string> names;
  for (DType t : source.dtypes) names.push_back(DTypeName(t));
  IR_CHECK(std::find(source.dtypes.begin(), source.dtypes.end(), dtype) != source.dtypes.end())
      << "device kernel source '" << source.name << "' has no " << DTypeName(dtype) << " version (it has "
      << Join(names, ", ") << ")";
  std::ostringstream os;
  os << "/* ir device kernels '" << source.name << "' for " << d.target << ", T = " << DTypeName(dtype) << " */\n"
     << d.header;
  bool fp64 = dtype == DType::kFloat64 || source.body.find("double") != std::string::npos;
  if (fp64 && !d.fp64_enable.empty()) os << d.fp64_enable << "\n";
  os << PortablePrelude(d) << "typedef " << d.TypeName(dtype) << " T;\n\n" << source.body;
  return os.str();
}

}  // namespace device
}  // namespace ir
