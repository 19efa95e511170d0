/*!
 * \file opencl_kernel_info.cc
 * \brief Launch lines of generated kernels and the module blob format.
 */
#include "runtime/opencl/opencl_kernel_info.h"

#include <sstream>

#include "ir/base.h"

namespace ir {
namespace opencl {
namespace {

const char kLaunchTag[] = "// ir-launch ";
const char kBlobMagic[] = "IRCL1";

}  // namespace

std::string FormatLaunchLine(const std::string& name, const LaunchInfo& launch) {
  return StrCat(kLaunchTag, name, " ", launch.global, " ", launch.local);
}

std::map<std::string, LaunchInfo> ParseLaunchLines(const std::string& source) {
  std::map<std::string, LaunchInfo> launches;
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kLaunchTag, 0) != 0) continue;
    std::istringstream fields(line.substr(sizeof(kLaunchTag) - 1));
    std::string name;
    LaunchInfo launch;
    IR_CHECK(fields >> name >> launch.global >> launch.local) << "malformed launch line '" << line << "'";
    launches[name] = launch;
  }
  return launches;
}

std::string PackBlob(const std::map<std::string, LaunchInfo>& launches, const std::string& binary) {
  std::ostringstream os;
  os << kBlobMagic << " " << launches.size() << " " << binary.size() << "\n";
  for (const auto& kv : launches) os << kv.first << " " << kv.second.global << " " << kv.second.local << "\n";
  os.write(binary.data(), static_cast<std::streamsize>(binary.size()));
  return os.str();
}

void UnpackBlob(const std::string& blob, std::map<std::string, LaunchInfo>* launches, std::string* binary) {
  std::istringstream in(blob);
  std::string magic;
  size_t count = 0, size = 0;
  in >> magic >> count >> size;
  IR_CHECK(in && magic == kBlobMagic) << "not an OpenCL module blob (bad header)";
  for (size_t i = 0; i < count; ++i) {
    std::string name;
    LaunchInfo launch;
    IR_CHECK(in >> name >> launch.global >> launch.local) << "OpenCL module blob: truncated kernel table";
    (*launches)[name] = launch;
  }
  in.get();
  auto start = static_cast<size_t>(in.tellg());
  IR_CHECK(in && start + size == blob.size())
      << "OpenCL module blob: binary of " << size << " bytes expected, " << (in ? blob.size() - start : 0) << " found";
  binary->assign(blob, start, size);
}

}  // namespace opencl
}  // namespace ir
