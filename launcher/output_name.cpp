#include "launcher/output_name.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace proflaunch::launcher {
namespace {

bool path_exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

// Expands everything but %n (left as the marker "\x01n").
NameResult expand_fixed(const std::string& pattern, pid_t traced_pid, bool* has_counter) {
  NameResult result;
  std::string out;
  *has_counter = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 >= pattern.size()) {
      result.error = "--output '" + pattern + "' ends with a lone %; write %% for a percent sign";
      return result;
    }
    const char code = pattern[++i];
    switch (code) {
      case '%': out += '%'; break;
      case 'p': out += std::to_string(traced_pid); break;
      case 'h': out += host_name(); break;
      case 'n':
        out += "\x01n";
        *has_counter = true;
        break;
      case 'q': {
        const size_t close = pattern.find('}', i + 1);
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string::npos) {
          result.error = "--output '" + pattern + "': %q needs a variable name, as in %q{RANK}";
          return result;
        }
        const std::string variable = pattern.substr(i + 2, close - i - 2);
        if (variable.empty()) {
          result.error = "--output '" + pattern + "': %q{} names no variable, as in %q{RANK}";
          return result;
        }
        const char* value = std::getenv(variable.c_str());
        if (value == nullptr) {
          result.error = "--output '" + pattern + "': environment variable '" + variable +
                         "' is not set";
          return result;
        }
        out += value;
        i = close;
        break;
      }
      default:
        result.error = std::string("--output '") + pattern + "': unknown placeholder %" + code +
                       " (known: %p %h %q{VAR} %n %%)";
        return result;
    }
  }
  if (out.empty()) {
    result.error = pattern.empty() ? "--output is empty: name the trace file, as in -o run.trace"
                                   : "--output '" + pattern + "' expands to an empty name";
    return result;
  }
  result.path = out;
  return result;
}

std::string with_counter(const std::string& expanded, unsigned counter) {
  std::string out;
  for (size_t i = 0; i < expanded.size(); ++i) {
    if (expanded[i] == '\x01' && i + 1 < expanded.size() && expanded[i + 1] == 'n') {
      out += std::to_string(counter);
      ++i;
    } else {
      out += expanded[i];
    }
  }
  return out;
}

}  // namespace

NameResult expand_output_name(const std::string& pattern, pid_t traced_pid, ExistsFunction exists) {
  if (exists == nullptr) exists = path_exists;
  bool has_counter = false;
  NameResult fixed = expand_fixed(pattern, traced_pid, &has_counter);
  if (!fixed.error.empty() || !has_counter) return fixed;
  for (unsigned counter = 1; counter < 1000000; ++counter) {
    const std::string candidate = with_counter(fixed.path, counter);
    if (!exists(candidate) && !exists(parts_directory_for(candidate))) return {candidate, ""};
  }
  return {"", "--output '" + pattern + "': no free name for %n"};
}

std::string parts_directory_for(const std::string& output_path) { return output_path + ".parts"; }

std::string absolute_path(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char* cwd = getcwd(nullptr, 0);
  if (cwd == nullptr) return path;
  std::string result = std::string(cwd) + "/" + path;
  std::free(cwd);
  return result;
}

}  // namespace proflaunch::launcher
