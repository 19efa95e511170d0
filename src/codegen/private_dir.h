/*!
 * \file private_dir.h
 * \brief A directory only the effective user can write, and its files read and written
 * without following links, blocking on special files or trusting other users' files.
 *
 * The kernel cache loads machine code from its entries, so whoever can write an entry can
 * run code as the caller: every check here is about who could have written the bytes.
 */
#ifndef IR_CODEGEN_PRIVATE_DIR_H_
#define IR_CODEGEN_PRIVATE_DIR_H_

#include <string>

namespace ir {

/*!
 * \brief An open directory verified to be a real directory (not a symbolic link) owned by the
 * effective uid and writable by neither group nor others. All access goes through its file
 * descriptor (openat/renameat), so replacing the path after the check changes nothing.
 */
class PrivateDir {
 public:
  /*! \brief What Read found. */
  enum class ReadResult { kMissing, kRead, kRefused };

  /*!
   * \brief Opens `path`, creating it and missing parents with mode 0700 whatever the umask.
   * On failure valid() is false and *why says what is wrong with the directory.
   */
  PrivateDir(const std::string& path, std::string* why);
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  bool valid() const { return fd_ >= 0; }

  /*!
   * \brief Reads file `name` whole. It is refused (*why says why, nothing is read) unless it is
   * a regular file (no symbolic link, FIFO or device: opened O_NOFOLLOW|O_NONBLOCK) owned by
   * the effective uid, writable by neither group nor others and at most `max_bytes` long.
   */
  ReadResult Read(const std::string& name, size_t max_bytes, std::string* data, std::string* why) const;

  /*!
   * \brief Replaces file `name` atomically: writes a new mode-0600 file under an unpredictable
   * name (O_CREAT|O_EXCL|O_NOFOLLOW) and renames it over `name`. Returns false on failure
   * (a full or read-only disk), leaving no temporary file behind.
   */
  bool Write(const std::string& name, const std::string& data) const;

 private:
  int fd_ = -1;
};

}  // namespace ir

#endif  // IR_CODEGEN_PRIVATE_DIR_H_
