/*!
 * \file fuzz_files.h
 * \brief What the fuzz targets of file loaders (and the test replaying their corpora) share: a
 * private scratch directory, in memory when /dev/shm exists, that each input is written into.
 */
#ifndef IR_TF_FUZZ_FILES_H_
#define IR_TF_FUZZ_FILES_H_

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ir {
namespace tf {

/*! \brief A directory made on first use and removed (with its files) when the process exits. */
class FuzzScratch {
 public:
  FuzzScratch() {
    std::string pattern = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/ir-tf-fuzz-XXXXXX";
    if (mkdtemp(&pattern[0]) != nullptr) dir_ = pattern;
  }
  ~FuzzScratch() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  FuzzScratch(const FuzzScratch&) = delete;
  FuzzScratch& operator=(const FuzzScratch&) = delete;

  /*! \brief The process's scratch directory. */
  static const std::string& Dir() {
    static FuzzScratch scratch;
    return scratch.dir_;
  }
  /*! \brief Writes `bytes` to Dir()/name; returns the path. */
  static std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = Dir() + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }

 private:
  std::string dir_;
};

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUZZ_FILES_H_
