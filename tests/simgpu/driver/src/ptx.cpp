#include "ptx.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace simgpu {
namespace {

std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '(' || c == ')') {
      if (!current.empty()) tokens.push_back(std::move(current));
      current.clear();
      if (c == '(' || c == ')') tokens.emplace_back(1, c);
    } else {
      current += c;
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

uint32_t scalar_bytes(const std::string& type) {
  // .u64 .s32 .f16 .b8 .pred ...: the digits are the width in bits.
  if (type == ".pred") return 1;
  size_t digits = type.find_first_of("0123456789");
  if (digits == std::string::npos) return 0;
  return uint32_t(std::strtoul(type.c_str() + digits, nullptr, 10) / 8);
}

// Parses "[.align N] .type name[count]" starting at tokens[i]; false if
// malformed. `i` ends just after the name, `element_bytes` is the scalar size.
bool parse_declaration(const std::vector<std::string>& tokens, size_t& i, std::string& name, uint32_t& bytes,
                       uint32_t& alignment, uint32_t& element_bytes) {
  alignment = 0;
  element_bytes = 0;
  for (; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token == "(") {  // .attribute(.managed): skip the attribute list
      while (i < tokens.size() && tokens[i] != ")") ++i;
    } else if (token == ".align" && i + 1 < tokens.size()) {
      alignment = uint32_t(std::strtoul(tokens[++i].c_str(), nullptr, 10));
    } else if (token.rfind(".attribute", 0) == 0 || token == ".ptr" || token == ".global" || token == ".const" ||
               token == ".shared" || token == ".local") {
      continue;
    } else if (token[0] == '.') {
      element_bytes = scalar_bytes(token);
    } else {
      break;
    }
  }
  if (i >= tokens.size() || element_bytes == 0) return false;
  name = tokens[i++];
  uint64_t count = 1;
  if (size_t bracket = name.find('['); bracket != std::string::npos) {
    count = std::strtoull(name.c_str() + bracket + 1, nullptr, 10);
    name.resize(bracket);
  }
  bytes = uint32_t(element_bytes * count);
  if (alignment == 0) alignment = element_bytes;
  return !name.empty();
}

// Evaluates "= 42" / "= {1, 2, 3}" / "= 0f3F800000" (PTX hex float) after a
// declaration into little-endian bytes. Anything else leaves the value zero.
std::vector<uint8_t> initial_value(const std::vector<std::string>& tokens, size_t i, uint32_t element_bytes,
                                   uint32_t bytes) {
  if (i >= tokens.size() || tokens[i] != "=" || element_bytes == 0 || element_bytes > 8) return {};
  std::vector<uint8_t> value;
  for (++i; i < tokens.size() && value.size() < bytes; ++i) {
    std::string token = tokens[i];
    token.erase(std::remove(token.begin(), token.end(), '{'), token.end());
    token.erase(std::remove(token.begin(), token.end(), '}'), token.end());
    if (token.empty()) continue;
    uint64_t bits = 0;
    if (token.size() > 2 && token[0] == '0' && (token[1] == 'f' || token[1] == 'd' || token[1] == 'x')) {
      bits = std::strtoull(token.c_str() + 2, nullptr, 16);
    } else if (token.find_first_of(".eE") != std::string::npos) {
      return {};  // decimal floats: not produced by nvcc
    } else {
      bits = uint64_t(std::strtoll(token.c_str(), nullptr, 10));
    }
    for (uint32_t b = 0; b < element_bytes; ++b) value.push_back(uint8_t(bits >> (8 * b)));
  }
  value.resize(bytes, 0);
  return value;
}

}  // namespace

bool looks_like_ptx(const char* text, size_t length) {
  size_t i = 0;
  while (i < length) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    } else if (i + 1 < length && text[i] == '/' && text[i + 1] == '/') {
      while (i < length && text[i] != '\n') ++i;
    } else {
      return text[i] == '.';
    }
  }
  return false;
}

bool parse_ptx(const char* text, ModuleImage& image, std::string& error) {
  std::istringstream lines{std::string(text)};
  std::string line;
  KernelInfo* open_kernel = nullptr;  // collecting parameters until ')'
  int brace_depth = 0;
  image.from_ptx = true;
  while (std::getline(lines, line)) {
    if (size_t comment = line.find("//"); comment != std::string::npos) line.resize(comment);
    std::vector<std::string> tokens = tokens_of(line);
    if (tokens.empty()) continue;
    if (open_kernel) {
      for (size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] == ")") {
          open_kernel->parameter_bytes = 0;
          for (const KernelParameter& p : open_kernel->parameters) {
            open_kernel->parameter_bytes = std::max(open_kernel->parameter_bytes, p.offset + p.bytes);
          }
          open_kernel = nullptr;
          break;
        }
        if (tokens[i] != ".param") continue;
        std::string name;
        uint32_t bytes = 0, alignment = 1, element_bytes = 0;
        size_t next = i + 1;
        if (!parse_declaration(tokens, next, name, bytes, alignment, element_bytes)) continue;
        uint32_t offset = open_kernel->parameter_bytes;
        offset = (offset + alignment - 1) / alignment * alignment;
        open_kernel->parameters.push_back({offset, bytes});
        open_kernel->parameter_bytes = offset + bytes;
      }
      continue;
    }
    brace_depth += int(std::count(line.begin(), line.end(), '{')) - int(std::count(line.begin(), line.end(), '}'));
    if (tokens[0] == ".target" && tokens.size() > 1) {
      const char* digits = std::strpbrk(tokens[1].c_str(), "0123456789");
      image.sm_arch = digits ? std::atoi(digits) : 0;
      continue;
    }
    auto entry = std::find(tokens.begin(), tokens.end(), ".entry");
    if (entry != tokens.end() && entry + 1 != tokens.end()) {
      image.kernels.push_back(KernelInfo{});
      open_kernel = &image.kernels.back();
      open_kernel->name = *(entry + 1);
      open_kernel->has_parameter_info = true;
      if (std::find(entry, tokens.end(), std::string(")")) != tokens.end()) open_kernel = nullptr;
      continue;
    }
    const bool top_level = brace_depth == 0;
    const bool is_extern = std::find(tokens.begin(), tokens.end(), ".extern") != tokens.end();
    auto space = std::find_if(tokens.begin(), tokens.end(),
                              [](const std::string& t) { return t == ".global" || t == ".const"; });
    if (top_level && !is_extern && space != tokens.end() && (space == tokens.begin() || (*tokens.begin())[0] == '.')) {
      VariableInfo variable;
      uint32_t bytes = 0, alignment = 0, element_bytes = 0;
      size_t next = size_t(space - tokens.begin()) + 1;
      if (parse_declaration(tokens, next, variable.name, bytes, alignment, element_bytes)) {
        variable.bytes = bytes;
        variable.managed = line.find(".managed") != std::string::npos;
        variable.initial_value = initial_value(tokens, next, element_bytes, bytes);
        image.variables.push_back(std::move(variable));
      }
    }
  }
  if (image.sm_arch == 0) {
    error = "PTX without a .target sm_XX directive";
    return false;
  }
  return true;
}

}  // namespace simgpu
