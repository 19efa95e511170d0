/*!
 * \file file_util.cc
 * \brief Small file helpers shared by the loaders and the tool.
 */
#include "file_util.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "ir/base.h"

namespace ir {
namespace tf {

std::string ReadFile(const std::string& path) {
  IR_CHECK(!IsDirectory(path)) << "'" << path << "' is a directory, not a file";
  std::ifstream in(path, std::ios::binary);
  IR_CHECK(in.good()) << "cannot open '" << path << "'";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  IR_CHECK(!in.bad()) << "cannot read '" << path << "'";
  return bytes.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  IR_CHECK(out.good()) << "cannot write '" << path << "'";
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace tf
}  // namespace ir
