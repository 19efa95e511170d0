/*!
 * \file file_util.cc
 * \brief Small file helpers shared by the loaders and the tool.
 */
#include "file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "ir/base.h"

namespace ir {
namespace tf {
namespace {

/*! \brief What a file of mode `mode` is, for errors ("a FIFO"). */
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

RegularFile::RegularFile(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  IR_CHECK(fd_ >= 0) << "cannot open '" << path << "': " << std::strerror(errno);
  struct stat st;
  int status = fstat(fd_, &st), error = errno;
  if (status != 0 || !S_ISREG(st.st_mode)) {
    close(fd_);
    IR_CHECK(status == 0) << "cannot stat '" << path << "': " << std::strerror(error);
    throw Error(StrCat("cannot read '", path, "': it is ", FileKind(st.st_mode), ", not a regular file"));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() { close(fd_); }

std::string RegularFile::ReadAt(uint64_t offset, uint64_t n, const std::string& what) const {
  IR_CHECK(offset <= size_ && n <= size_ - offset)
      << "'" << path_ << "' is too short for " << what << ": " << n << " bytes at offset " << offset
      << " but the file holds " << size_ << " bytes";
  std::string bytes(static_cast<size_t>(n), '\0');
  size_t done = 0;
  while (done < n) {
    ssize_t got = pread(fd_, &bytes[done], n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    IR_CHECK(got >= 0) << "cannot read '" << path_ << "': " << std::strerror(errno);
    IR_CHECK(got > 0) << "'" << path_ << "' shrank while it was read (" << what << ": " << n << " bytes at offset "
                      << offset << ")";
    done += static_cast<size_t>(got);
  }
  return bytes;
}

std::string ReadFile(const std::string& path, uint64_t max_bytes) {
  RegularFile file(path);
  IR_CHECK(file.size() <= max_bytes) << "'" << path << "' is " << file.size() << " bytes, more than the limit of "
                                     << max_bytes << " bytes";
  return file.ReadAt(0, file.size(), "its contents");
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  IR_CHECK(out.good()) << "cannot write '" << path << "'";
}

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
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
