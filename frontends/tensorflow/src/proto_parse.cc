/*!
 * \file proto_parse.cc
 * \brief Parsing protobuf messages quietly.
 */
#include "proto_parse.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include "ir/base.h"

namespace ir {
namespace tf {
namespace {

/*! \brief Deepest message nesting accepted in text files (binary parsing has the same default). */
constexpr int kMaxNesting = 100;

/*! \brief Collects the text parser's complaints (the default prints them to stderr). */
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  void AddWarning(int, int, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

bool ParseBinary(const std::string& bytes, google::protobuf::Message* message) {
  google::protobuf::LogSilencer quiet;  // e.g. "invalid UTF-8 data": the caller reports the failure
  return message->ParseFromString(bytes);
}

std::string ParseText(const std::string& text, google::protobuf::Message* message) {
  google::protobuf::LogSilencer quiet;
  TextErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.SetRecursionLimit(kMaxNesting);  // the default is unbounded: deep nesting would overflow the stack
  if (parser.ParseFromString(text, message)) return "";
  return errors.first().empty() ? std::string("malformed text") : errors.first();
}

}  // namespace tf
}  // namespace ir
