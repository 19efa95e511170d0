/*!
 * \file file_util.h
 * \brief Small file helpers shared by the loaders and the tool (errors name the path).
 *
 * Every file the frontend reads goes through OpenRegularFile: it is opened non-blocking (a FIFO
 * cannot block the open) and must be a regular file (not a device such as /dev/zero, a FIFO or a
 * directory), and its size is bounded before anything is allocated for it.
 */
#ifndef IR_TF_FILE_UTIL_H_
#define IR_TF_FILE_UTIL_H_

#include <cstdint>
#include <string>

namespace ir {
namespace tf {

/*! \brief The default bound on a file read whole: protobuf messages cannot exceed 2 GiB anyway. */
constexpr uint64_t kMaxReadBytes = uint64_t{1} << 31;

/*! \brief An open regular file (closed on destruction) and its size when it was opened. */
class RegularFile {
 public:
  /*!
   * \brief Opens `path` with O_RDONLY|O_NONBLOCK|O_CLOEXEC and checks with fstat that it is a
   * regular file. \throws ir::Error naming the path otherwise.
   */
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  /*!
   * \brief The `n` bytes at `offset`. \throws ir::Error naming the path and `what` when they lie
   * past the end of the file (checked before allocating) or cannot be read.
   */
  std::string ReadAt(uint64_t offset, uint64_t n, const std::string& what) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/*!
 * \brief The whole regular file. \throws ir::Error naming the path when it cannot be opened, is
 * not a regular file, is larger than `max_bytes` or cannot be read.
 */
std::string ReadFile(const std::string& path, uint64_t max_bytes = kMaxReadBytes);
/*! \brief Writes (replaces) the file; throws ir::Error naming the path on failure. */
void WriteFile(const std::string& path, const std::string& bytes);
/*! \brief True when something (of any kind) exists at `path`. */
bool PathExists(const std::string& path);
/*! \brief True when `path` is (a symlink to) a regular file. */
bool FileExists(const std::string& path);
/*! \brief True when `path` is (a symlink to) a directory. */
bool IsDirectory(const std::string& path);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FILE_UTIL_H_
