/*!
 * \file param_error.cc
 * \brief Errors for op parameters that do not parse, naming the op, node and parameter.
 */
#include <string>

#include "core/json_util.h"
#include "ir/op.h"

namespace ir {
namespace detail {

namespace {

/*! \brief dmlc's message for one bad value, reworded as a reason: it names the key itself, or not at all. */
std::string ParamReason(const std::string& message) {
  const std::string trailing = "Some trailing characters could not be parsed: ";
  if (message.rfind(trailing, 0) == 0) {
    return "trailing characters could not be parsed: " + message.substr(trailing.size());
  }
  if (message.rfind("Invalid Parameter format for ", 0) == 0) {
    size_t expect = message.find(" expect "), but = message.find(" but value=");
    if (expect != std::string::npos && but != std::string::npos && but > expect) {
      std::string type = message.substr(expect + 8, but - expect - 8);
      return type.empty() ? "not a valid value" : "expected " + type;  // our own field types have no name
    }
  }
  if (message.rfind("Out of range value for ", 0) == 0) return "out of range";
  return message;
}

}  // namespace

void ThrowParamError(const NodeAttrs& attrs, const std::exception& err,
                     const std::pair<const std::string, std::string>* bad) {
  std::string where = StrCat("op '", attrs.op ? attrs.op->name : std::string("?"), "' (node '", attrs.name, "')");
  std::string message = CleanDmlcMessage(err.what());
  if (bad == nullptr) throw Error(StrCat(where, ": invalid parameters: ", message));
  throw Error(StrCat(where, ": invalid parameters: ", bad->first, "='", bad->second, "': ", ParamReason(message)));
}

}  // namespace detail
}  // namespace ir
