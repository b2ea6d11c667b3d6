// Text placed in HTML (the memory page, the report page, `proftrace view`'s
// page): the five characters that could end an element or an attribute
// value, escaped; JSON made inert inside <script>; template placeholders.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace proflaunch::tools {

inline std::string html_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Inside <script>, "</script" ends the element and "<!--" changes how the
// rest is parsed. '<' can only occur inside JSON strings, where "\u003c"
// means the same: escaping every one makes the data inert.
inline std::string script_safe(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

// Every `placeholder` in `text` replaced by `value` (not searched again).
inline void replace_all(std::string& text, std::string_view placeholder, std::string_view value) {
  for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size()))
    text.replace(at, placeholder.size(), value);
}

// `page` with each @NAME@ that `values` has replaced by its value, in one
// pass: text that a value brings in is never taken for a placeholder.
// Unknown @NAME@s stay as they are.
inline std::string fill_template(std::string_view page, const std::map<std::string, std::string_view>& values) {
  std::string out;
  size_t at = 0;
  while (at < page.size()) {
    const size_t open = page.find('@', at);
    if (open == std::string_view::npos) break;
    const size_t close = page.find('@', open + 1);
    if (close == std::string_view::npos) break;
    const auto value = values.find(std::string(page.substr(open + 1, close - open - 1)));
    if (value == values.end()) {
      out.append(page.substr(at, close - at));  // the second '@' may open the next placeholder
      at = close;
      continue;
    }
    out.append(page.substr(at, open - at));
    out.append(value->second);
    at = close + 1;
  }
  out.append(page.substr(at));
  return out;
}

}  // namespace proflaunch::tools
