/*!
 * \file launch_table.h
 * \brief How generated kernels are launched, carried from the printer to loaded modules: the
 * DevicePrinter writes `// ir-launch <name> <groups> <group size>` before each kernel, the
 * layer's KernelCompiler stores those lines in front of the target's blob, and Load reads
 * them back (so a module from the disk cache, built by another process, knows its launches).
 */
#ifndef IR_RUNTIME_DEVICE_LAUNCH_TABLE_H_
#define IR_RUNTIME_DEVICE_LAUNCH_TABLE_H_

#include <cstdint>
#include <map>
#include <string>

namespace ir {
namespace device {

/*! \brief A kernel's launch: `groups` groups of `group_size` work-items. */
struct KernelLaunch {
  int64_t groups = 0;
  int64_t group_size = 0;
};

using LaunchTable = std::map<std::string, KernelLaunch>;

/*! \brief "// ir-launch <name> <groups> <group size>". */
std::string FormatLaunchLine(const std::string& name, const KernelLaunch& launch);

/*! \brief Every ir-launch line of a source, by kernel name. */
LaunchTable ParseLaunchLines(const std::string& source);

/*! \brief A module blob: "IRDEV1 <kernels> <binary bytes>\n", a "<name> <groups> <size>\n" line per kernel, the binary.
 */
std::string PackBlob(const LaunchTable& launches, const std::string& binary);

/*! \brief Reads a blob written by PackBlob; throws ir::Error when it is malformed. */
void UnpackBlob(const std::string& blob, LaunchTable* launches, std::string* binary);

}  // namespace device
}  // namespace ir

#endif  // IR_RUNTIME_DEVICE_LAUNCH_TABLE_H_
