/*!
 * \file json_util.h
 * \brief Turning dmlc-core's JSON failures into ir::Error messages without stack traces.
 */
#ifndef IR_CORE_JSON_UTIL_H_
#define IR_CORE_JSON_UTIL_H_

#include <dmlc/any.h>
#include <dmlc/json.h>
#include <dmlc/logging.h>

#include <string>
#include <typeinfo>

#include "ir/base.h"

namespace ir {
namespace detail {

/*! \brief A dmlc error message without its "[time] file:line: " prefix and stack trace. */
std::string CleanDmlcMessage(const std::string& what);

/*! \brief Demangled C++ type name, for messages. */
std::string TypeName(const std::type_info& type);

/*! \brief Runs fn(); rethrows dmlc (and ir) errors as ir::Error prefixed with `context`. */
template <typename Fn>
auto WithJSONContext(const std::string& context, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dmlc::Error& err) {
    throw Error(StrCat(context, ": ", CleanDmlcMessage(err.what())));
  } catch (const Error& err) {
    throw Error(StrCat(context, ": ", err.what()));
  }
}

}  // namespace detail

namespace json {
struct Value;
}  // namespace json

namespace detail {
/*! \brief Reads a checked `["type_name", value]` graph attribute; errors name the key. */
dmlc::any ReadTypedAttr(const std::string& key, const json::Value& value);
}  // namespace detail

}  // namespace ir

#endif  // IR_CORE_JSON_UTIL_H_
