/*!
 * \file launch_table.cc
 * \brief Launch lines of generated kernels and the module blob format.
 */
#include "runtime/device/launch_table.h"

#include <sstream>

#include "ir/base.h"

namespace ir {
namespace device {
namespace {

const char kLaunchTag[] = "// ir-launch ";
const char kBlobMagic[] = "IRDEV1";

}  // namespace

std::string FormatLaunchLine(const std::string& name, const KernelLaunch& launch) {
  return StrCat(kLaunchTag, name, " ", launch.groups, " ", launch.group_size);
}

LaunchTable ParseLaunchLines(const std::string& source) {
  LaunchTable launches;
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kLaunchTag, 0) != 0) continue;
    std::istringstream fields(line.substr(sizeof(kLaunchTag) - 1));
    std::string name;
    KernelLaunch launch;
    IR_CHECK(fields >> name >> launch.groups >> launch.group_size) << "malformed launch line '" << line << "'";
    launches[name] = launch;
  }
  return launches;
}

std::string PackBlob(const LaunchTable& launches, const std::string& binary) {
  std::ostringstream os;
  os << kBlobMagic << " " << launches.size() << " " << binary.size() << "\n";
  for (const auto& kv : launches) os << kv.first << " " << kv.second.groups << " " << kv.second.group_size << "\n";
  os.write(binary.data(), static_cast<std::streamsize>(binary.size()));
  return os.str();
}

void UnpackBlob(const std::string& blob, LaunchTable* launches, std::string* binary) {
  std::istringstream in(blob);
  std::string magic;
  size_t count = 0, size = 0;
  in >> magic >> count >> size;
  IR_CHECK(in && magic == kBlobMagic) << "not a device module blob (bad header)";
  for (size_t i = 0; i < count; ++i) {
    std::string name;
    KernelLaunch launch;
    IR_CHECK(in >> name >> launch.groups >> launch.group_size) << "device module blob: truncated kernel table";
    (*launches)[name] = launch;
  }
  in.get();
  auto start = static_cast<size_t>(in.tellg());
  IR_CHECK(in && start + size == blob.size())
      << "device module blob: binary of " << size << " bytes expected, " << (in ? blob.size() - start : 0) << " found";
  binary->assign(blob, start, size);
}

}  // namespace device
}  // namespace ir
