/*!
 * \file json_value.cc
 * \brief Recursive-descent JSON parser with a depth bound and path-naming errors.
 */
#include "core/json_value.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string_view>

#include <dmlc/json.h>

#include "ir/base.h"

namespace ir {
namespace json {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Value Document() {
    Value root = Parse();
    SkipSpace();
    if (pos_ < text_.size()) Fail("unexpected text after the JSON value: expected the end of the input");
    return root;
  }

 private:
  // One step of the path to the value being read: an object key or an array index.
  struct Step {
    const std::string* key;
    size_t index;
  };

  [[noreturn]] void Fail(const std::string& expected) const {
    size_t line = 1 + std::count(text_.begin(), text_.begin() + pos_, '\n');
    size_t line_start = text_.rfind('\n', pos_ == 0 ? 0 : pos_ - 1);
    size_t column = pos_ - (line_start == std::string::npos || pos_ == 0 ? 0 : line_start + 1) + 1;
    throw Error(StrCat("at ", PathText(), " (line ", line, ", column ", column, "): ", expected, ", found ", Found()));
  }

  std::string PathText() const {
    if (path_.empty()) return "the top level";
    std::string out;
    for (const Step& step : path_) {
      if (step.key == nullptr) {
        out += StrCat("[", step.index, "]");
      } else {
        out += (out.empty() ? "" : ".") + *step.key;
      }
    }
    return out;
  }

  std::string Found() const {
    if (pos_ >= text_.size()) return "the end of the input (truncated?)";
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (std::isprint(c)) return StrCat("'", static_cast<char>(c), "'");
    static const char kHex[] = "0123456789abcdef";
    return StrCat("byte 0x", kHex[c >> 4], kHex[c & 15]);
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Value Parse() {
    SkipSpace();
    Value value;
    value.begin = pos_;
    char c = pos_ < text_.size() ? text_[pos_] : '\0';
    if (c == '[' || c == '{') {
      if (++depth_ > kMaxDepth) Fail(StrCat("arrays and objects nested deeper than ", kMaxDepth, " levels"));
      if (c == '[')
        ParseArray(&value);
      else
        ParseObject(&value);
      --depth_;
    } else if (c == '"') {
      value.kind = Value::Kind::kString;
      value.text = ParseString();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind = Value::Kind::kNumber;
      value.text = ParseNumber();
    } else if (ParseWord("true") || ParseWord("false")) {
      value.kind = Value::Kind::kBool;
      value.boolean = c == 't';
    } else if (ParseWord("null")) {
      value.kind = Value::Kind::kNull;
    } else {
      Fail("expected a value");
    }
    value.end = pos_;
    return value;
  }

  bool ParseWord(std::string_view word) {
    if (text_.compare(pos_, word.size(), word) != 0) return false;
    pos_ += word.size();
    return true;
  }

  void ParseArray(Value* value) {
    value->kind = Value::Kind::kArray;
    ++pos_;
    if (Consume(']')) return;
    do {
      path_.push_back(Step{nullptr, value->items.size()});
      value->items.push_back(Parse());
      path_.pop_back();
    } while (Consume(','));
    if (!Consume(']')) Fail("expected ',' or ']' in an array");
  }

  void ParseObject(Value* value) {
    value->kind = Value::Kind::kObject;
    ++pos_;
    if (Consume('}')) return;
    do {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') Fail("expected a quoted key");
      std::string key = ParseString();
      if (!Consume(':')) Fail(StrCat("expected ':' after key \"", key, "\""));
      path_.push_back(Step{&key, 0});
      Value member = Parse();
      path_.pop_back();
      value->members.emplace_back(std::move(key), std::move(member));
    } while (Consume(','));
    if (!Consume('}')) Fail("expected ',' or '}' in an object");
    CheckUniqueKeys(*value);
  }

  void CheckUniqueKeys(const Value& value) {
    std::vector<std::string_view> keys;
    for (const auto& kv : value.members) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
    auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) {
      pos_ = value.begin;
      Fail(StrCat("an object with unique keys, key \"", *dup, "\" appears twice"));
    }
  }

  std::string ParseString() {
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) Fail("expected '\"' to close the string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) Fail("expected an escaped character");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          AppendUtf8(ParseCodePoint(), &out);
          break;
        default:
          --pos_;
          Fail("expected one of the escapes \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
    }
  }

  uint32_t ParseHex4() {
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      char c = pos_ < text_.size() ? text_[pos_] : '\0';
      if (!std::isxdigit(static_cast<unsigned char>(c))) Fail("expected 4 hex digits after \\u");
      code = code * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c))
                                                   ? c - '0'
                                                   : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    }
    return code;
  }

  // A \uXXXX escape (the \u already read), joining a UTF-16 surrogate pair.
  uint32_t ParseCodePoint() {
    uint32_t code = ParseHex4();
    if (code >= 0xD800 && code < 0xDC00 && text_.compare(pos_, 2, "\\u") == 0) {
      size_t save = pos_;
      pos_ += 2;
      uint32_t low = ParseHex4();
      if (low >= 0xDC00 && low < 0xE000) return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      pos_ = save;
    }
    return code;
  }

  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      *out += static_cast<char>(code);
    } else if (code < 0x800) {
      *out += static_cast<char>(0xC0 | (code >> 6));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      *out += static_cast<char>(0xE0 | (code >> 12));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (code >> 18));
      *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool Digits() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }

  std::string ParseNumber() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    bool leading_zero = pos_ < text_.size() && text_[pos_] == '0';
    if (!Digits()) Fail("expected digits in a number");
    if (leading_zero && pos_ - start > 1 + (text_[start] == '-')) Fail("a number without leading zeros");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!Digits()) Fail("expected digits after '.' in a number");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!Digits()) Fail("expected digits in a number's exponent");
    }
    return text_.substr(start, pos_ - start);
  }

  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<Step> path_;
};

std::string QuoteForDmlc(const std::string& text) {
  std::ostringstream os;
  dmlc::JSONWriter writer(&os);
  writer.WriteString(text);
  return os.str();
}

}  // namespace

const Value* Value::Find(const std::string& key) const {
  for (const auto& kv : members) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

const char* KindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBool:
      return "a boolean";
    case Value::Kind::kNumber:
      return "a number";
    case Value::Kind::kString:
      return "a string";
    case Value::Kind::kArray:
      return "an array";
    case Value::Kind::kObject:
      return "an object";
  }
  return "?";
}

Value Parse(const std::string& text) { return Parser(text).Document(); }

std::string Write(const Value& value) {
  switch (value.kind) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBool:
      return value.boolean ? "true" : "false";
    case Value::Kind::kNumber:
      return value.text;
    case Value::Kind::kString:
      return QuoteForDmlc(value.text);
    case Value::Kind::kArray: {
      std::vector<std::string> items;
      for (const Value& item : value.items) items.push_back(Write(item));
      return "[" + Join(items, ", ") + "]";
    }
    case Value::Kind::kObject: {
      std::vector<std::string> members;
      for (const auto& kv : value.members) members.push_back(QuoteForDmlc(kv.first) + ": " + Write(kv.second));
      return "{" + Join(members, ", ") + "}";
    }
  }
  return "null";
}

uint64_t ToUnsigned(const Value& value, uint64_t max, const std::string& where, const std::string& what) {
  auto fail = [&]() -> Error {
    std::string got = value.kind == Value::Kind::kNumber ? value.text : KindName(value.kind);
    return Error(StrCat(where, ": expected ", what, " (an integer from 0 to ", max, "), got ", got));
  };
  if (value.kind != Value::Kind::kNumber || value.text.find_first_not_of("0123456789") != std::string::npos) {
    throw fail();
  }
  uint64_t result = 0;
  for (char c : value.text) {
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (digit > max || result > (max - digit) / 10) throw fail();
    result = result * 10 + digit;
  }
  return result;
}

}  // namespace json
}  // namespace ir
