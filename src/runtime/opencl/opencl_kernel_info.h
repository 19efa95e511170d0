/*!
 * \file opencl_kernel_info.h
 * \brief How generated OpenCL kernels are launched, carried from the printer to the loaded
 * module: the printer writes `// ir-launch <name> <global> <local>` before each kernel, the
 * compiler stores those lines in front of the program binary, and Load reads them back.
 */
#ifndef IR_RUNTIME_OPENCL_OPENCL_KERNEL_INFO_H_
#define IR_RUNTIME_OPENCL_OPENCL_KERNEL_INFO_H_

#include <cstdint>
#include <map>
#include <string>

namespace ir {
namespace opencl {

/*! \brief Largest global size a generated kernel is launched with (grid-stride loops cover the rest). */
constexpr int64_t kMaxGlobalSize = int64_t{1} << 24;

/*! \brief A kernel's NDRange: `global` work-items in groups of `local` (0: the module's default size). */
struct LaunchInfo {
  int64_t global = 0;
  int64_t local = 0;
};

/*! \brief "// ir-launch <name> <global> <local>". */
std::string FormatLaunchLine(const std::string& name, const LaunchInfo& launch);

/*! \brief Every ir-launch line of a source, by kernel name. */
std::map<std::string, LaunchInfo> ParseLaunchLines(const std::string& source);

/*!
 * \brief A module blob: "IRCL1 <kernels> <binary bytes>\n", one "<name> <global> <local>\n" line
 * per kernel, then the program binary.
 */
std::string PackBlob(const std::map<std::string, LaunchInfo>& launches, const std::string& binary);

/*! \brief Reads a blob written by PackBlob; throws ir::Error when it is malformed. */
void UnpackBlob(const std::string& blob, std::map<std::string, LaunchInfo>* launches, std::string* binary);

}  // namespace opencl
}  // namespace ir

#endif  // IR_RUNTIME_OPENCL_OPENCL_KERNEL_INFO_H_
