/*!
 * \file private_dir.cc
 * \brief PrivateDir: ownership and mode checks on the directory and on each file, through
 * file descriptors so that no check can be raced by renaming or re-linking a path.
 */
#include "codegen/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "ir/base.h"

namespace ir {
namespace {

constexpr mode_t kWritableByOthers = S_IWGRP | S_IWOTH;

// Creates the missing parents of `path` (mode 0700, as the XDG spec asks for cache dirs).
void MakeParents(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    mkdir(path.substr(0, pos).c_str(), 0700);
  }
}

// Why the file behind `st` must not be trusted, or "" when it may be.
std::string Untrusted(const struct stat& st) {
  if (st.st_uid != geteuid()) return StrCat("it is owned by uid ", st.st_uid, ", not by uid ", geteuid());
  if ((st.st_mode & kWritableByOthers) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return StrCat("it is writable by group or others (mode ", mode, ")");
  }
  return "";
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string RandomHex() {
  std::random_device device;
  std::uniform_int_distribution<uint64_t> bits;
  uint64_t value = bits(device);
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

PrivateDir::PrivateDir(const std::string& path, std::string* why) {
  MakeParents(path);
  bool created = mkdir(path.c_str(), 0700) == 0;
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *why = errno == ELOOP || errno == ENOTDIR ? "it is a symbolic link or not a directory"
                                              : StrCat("it cannot be opened: ", std::strerror(errno));
    return;
  }
  // The umask may have taken bits from (or, at 000, left too many in) a directory we made.
  if (created) fchmod(fd, 0700);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *why = StrCat("it cannot be examined: ", std::strerror(errno));
  } else {
    *why = Untrusted(st);
  }
  if (!why->empty()) {
    close(fd);
    return;
  }
  fd_ = fd;
}

PrivateDir::~PrivateDir() {
  if (fd_ >= 0) close(fd_);
}

PrivateDir::ReadResult PrivateDir::Read(const std::string& name, size_t max_bytes, std::string* data,
                                        std::string* why) const {
  int fd = openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return ReadResult::kMissing;
    *why = errno == ELOOP ? "it is a symbolic link" : StrCat("it cannot be opened: ", std::strerror(errno));
    return ReadResult::kRefused;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *why = StrCat("it cannot be examined: ", std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    *why = "it is not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *why = StrCat("it has ", st.st_size, " bytes, more than the limit of ", max_bytes);
  } else {
    *why = Untrusted(st);
  }
  if (!why->empty()) {
    close(fd);
    return ReadResult::kRefused;
  }
  data->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < data->size()) {
    ssize_t n = read(fd, &(*data)[done], data->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  data->resize(done);  // a file that shrank while read fails the caller's format checks
  close(fd);
  return ReadResult::kRead;
}

bool PrivateDir::Write(const std::string& name, const std::string& data) const {
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temp = ".tmp-" + RandomHex();
    fd = openat(fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return false;
  }
  if (fd < 0) return false;
  bool ok = fchmod(fd, 0600) == 0 && WriteAll(fd, data);
  ok = close(fd) == 0 && ok;
  ok = ok && renameat(fd_, temp.c_str(), fd_, name.c_str()) == 0;
  if (!ok) unlinkat(fd_, temp.c_str(), 0);
  return ok;
}

}  // namespace ir
