/*!
 * \file snappy.h
 * \brief Decompressing Snappy's raw format (TensorFlow's table writer compresses blocks with it
 * when that saves space).
 */
#ifndef IR_TF_SNAPPY_H_
#define IR_TF_SNAPPY_H_

#include <string>

namespace ir {
namespace tf {

/*!
 * \brief The bytes a raw Snappy stream encodes: a varint length, then literals and back-references.
 * \throws ir::Error naming `origin` for a malformed or truncated stream.
 */
std::string SnappyUncompress(const std::string& compressed, const std::string& origin);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_SNAPPY_H_
