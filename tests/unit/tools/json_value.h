// A small JSON parser for TEST code only: checks that proftrace's output is
// valid JSON and lets tests look at its structure. Numbers keep their source
// text so tests can check the exact timestamp format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace proflaunch::testing {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // string contents, or a number's source text
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;

  bool is_object() const { return type == Type::kObject; }
  const JsonValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The member `key`; a null value when absent.
  const JsonValue& operator[](std::string_view key) const;
  int64_t as_int() const;
  uint64_t as_uint() const;
  double as_double() const;
  const std::string& str() const { return text; }
};

// Strict RFC 8259 JSON. On failure returns nullopt and sets `error` with the
// byte offset.
std::optional<JsonValue> parse_json(std::string_view text, std::string* error);

}  // namespace proflaunch::testing
