/*!
 * \file file_util.h
 * \brief Small file helpers shared by the loaders and the tool (errors name the path).
 */
#ifndef IR_TF_FILE_UTIL_H_
#define IR_TF_FILE_UTIL_H_

#include <string>

namespace ir {
namespace tf {

/*! \brief The whole file; throws ir::Error naming the path when it cannot be read. */
std::string ReadFile(const std::string& path);
/*! \brief Writes (replaces) the file; throws ir::Error naming the path on failure. */
void WriteFile(const std::string& path, const std::string& bytes);
bool FileExists(const std::string& path);
bool IsDirectory(const std::string& path);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FILE_UTIL_H_
