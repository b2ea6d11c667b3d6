// Text placed in HTML (the memory page, `proftrace view`'s page): the five
// characters that could end an element or an attribute value, escaped.
#pragma once

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

}  // namespace proflaunch::tools
