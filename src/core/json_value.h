/*!
 * \file json_value.h
 * \brief A strict JSON document parser for untrusted input (graph JSON, graph attributes).
 *
 * dmlc's streaming reader reports failures as "Error at Line 0, around ^``, Expect number"
 * and cannot say which node or field was being read. This parser builds a small tree whose
 * values remember where they came from, bounds nesting depth (no stack overflow on
 * `[[[[...`), rejects duplicate keys and trailing text, and names the JSON path of every
 * syntax error (e.g. "nodes[3].inputs[1]").
 */
#ifndef IR_CORE_JSON_VALUE_H_
#define IR_CORE_JSON_VALUE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ir {
namespace json {

/*! \brief The most nested arrays/objects a document may have. */
constexpr int kMaxDepth = 64;

/*! \brief One JSON value and the byte range [begin, end) of its text in the document. */
struct Value {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  /*! \brief Contents of a string (unescaped), or the literal text of a number. */
  std::string text;
  bool boolean = false;
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;
  size_t begin = 0, end = 0;

  /*! \brief The member named `key`, or nullptr. */
  const Value* Find(const std::string& key) const;
};

/*! \brief "string", "array", ... for messages. */
const char* KindName(Value::Kind kind);

/*!
 * \brief Parses one complete JSON document.
 * \throws ir::Error "at <path> (line L, column C): <what was expected>, found <what>".
 */
Value Parse(const std::string& text);

/*!
 * \brief The value as JSON text that dmlc's reader accepts (strings use only its escapes),
 * for handing a checked subtree to a dmlc::JSONReader-based codec.
 */
std::string Write(const Value& value);

/*!
 * \brief The value as an unsigned integer no larger than `max`.
 * \throws ir::Error "<where>: expected <what> (an integer from 0 to max), got <value>".
 */
uint64_t ToUnsigned(const Value& value, uint64_t max, const std::string& where, const std::string& what);

}  // namespace json
}  // namespace ir

#endif  // IR_CORE_JSON_VALUE_H_
