#include "tests/unit/tools/json_value.h"

#include <cstdlib>

namespace proflaunch::testing {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::optional<JsonValue> document(std::string* error) {
    JsonValue value;
    skip_space();
    if (!parse_value(value, 0)) {
      *error = "at byte " + std::to_string(at_) + ": " + error_;
      return std::nullopt;
    }
    skip_space();
    if (at_ != text_.size()) {
      *error = "at byte " + std::to_string(at_) + ": trailing characters";
      return std::nullopt;
    }
    return value;
  }

 private:
  bool fail(const char* message) {
    error_ = message;
    return false;
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t'))
      ++at_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  bool parse_value(JsonValue& value, int depth) {
    if (depth > 200) return fail("nesting too deep");
    if (at_ >= text_.size()) return fail("unexpected end");
    const char c = text_[at_];
    if (c == '{') return parse_object(value, depth);
    if (c == '[') return parse_array(value, depth);
    if (c == '"') {
      value.type = JsonValue::Type::kString;
      return parse_string(value.text);
    }
    if (literal("true")) {
      value.type = JsonValue::Type::kBool;
      value.boolean = true;
      return true;
    }
    if (literal("false")) {
      value.type = JsonValue::Type::kBool;
      return true;
    }
    if (literal("null")) return true;
    return parse_number(value);
  }

  bool parse_number(JsonValue& value) {
    const size_t start = at_;
    auto digits = [&] {
      const size_t from = at_;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
      return at_ > from;
    };
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    if (at_ < text_.size() && text_[at_] == '0') ++at_;
    else if (!digits()) return fail("bad number");
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      if (!digits()) return fail("bad fraction");
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (!digits()) return fail("bad exponent");
    }
    value.type = JsonValue::Type::kNumber;
    value.text = std::string(text_.substr(start, at_ - start));
    return true;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | cp >> 18);
      out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t& out) {
    if (at_ + 4 > text_.size()) return fail("short \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_++];
      out <<= 4;
      if (h >= '0' && h <= '9') out |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') out |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') out |= static_cast<uint32_t>(h - 'A' + 10);
      else return fail("bad \\u escape");
    }
    return true;
  }

  bool parse_string(std::string& out) {
    ++at_;  // opening quote
    while (at_ < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (at_ >= text_.size()) return fail("unexpected end in escape");
      const char e = text_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low;
            if (!literal("\\u") || !hex4(low) || low < 0xDC00 || low > 0xDFFF) return fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: return fail("unknown escape");
      }
    }
    return fail("unterminated string");
  }

  bool parse_array(JsonValue& value, int depth) {
    value.type = JsonValue::Type::kArray;
    ++at_;
    skip_space();
    if (at_ < text_.size() && text_[at_] == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      JsonValue item;
      skip_space();
      if (!parse_value(item, depth + 1)) return false;
      value.items.push_back(std::move(item));
      skip_space();
      if (at_ >= text_.size()) return fail("unterminated array");
      if (text_[at_] == ',') { ++at_; continue; }
      if (text_[at_] == ']') { ++at_; return true; }
      return fail("expected , or ]");
    }
  }

  bool parse_object(JsonValue& value, int depth) {
    value.type = JsonValue::Type::kObject;
    ++at_;
    skip_space();
    if (at_ < text_.size() && text_[at_] == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      skip_space();
      if (at_ >= text_.size() || text_[at_] != '"') return fail("expected a key");
      std::string key;
      if (!parse_string(key)) return false;
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ':') return fail("expected :");
      ++at_;
      skip_space();
      JsonValue member;
      if (!parse_value(member, depth + 1)) return false;
      if (value.find(key) != nullptr) return fail("duplicate key");
      value.members.emplace_back(std::move(key), std::move(member));
      skip_space();
      if (at_ >= text_.size()) return fail("unterminated object");
      if (text_[at_] == ',') { ++at_; continue; }
      if (text_[at_] == '}') { ++at_; return true; }
      return fail("expected , or }");
    }
  }

  std::string_view text_;
  size_t at_ = 0;
  std::string error_;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [name, value] : members)
    if (name == key) return &value;
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  static const JsonValue kNull;
  const JsonValue* found = find(key);
  return found != nullptr ? *found : kNull;
}

int64_t JsonValue::as_int() const { return std::strtoll(text.c_str(), nullptr, 10); }
uint64_t JsonValue::as_uint() const { return std::strtoull(text.c_str(), nullptr, 10); }
double JsonValue::as_double() const { return std::strtod(text.c_str(), nullptr); }

std::optional<JsonValue> parse_json(std::string_view text, std::string* error) {
  return Parser(text).document(error);
}

}  // namespace proflaunch::testing
