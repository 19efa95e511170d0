/*!
 * \file proto_parse.h
 * \brief Parsing protobuf messages quietly: failures are returned for our errors to report,
 * not logged by protobuf to stderr.
 */
#ifndef IR_TF_PROTO_PARSE_H_
#define IR_TF_PROTO_PARSE_H_

#include <google/protobuf/message.h>

#include <string>

namespace ir {
namespace tf {

/*! \brief Parses binary protobuf; false for truncated or malformed bytes (nothing is logged). */
bool ParseBinary(const std::string& bytes, google::protobuf::Message* message);
/*! \brief Parses text format; returns "" on success, else the first error with its line and column. */
std::string ParseText(const std::string& text, google::protobuf::Message* message);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_PROTO_PARSE_H_
