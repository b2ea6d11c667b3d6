// Tiny "--name value" / "--name=value" option parsing shared by the target
// programs, so each main() reads as the workload it is.
#ifndef SIMGPU_PROGRAMS_OPTIONS_H
#define SIMGPU_PROGRAMS_OPTIONS_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

class Options {
 public:
  Options(int argc, char** argv) : argc_(argc), argv_(argv) {}

  // The value of --name, or fallback if absent. Exits 2 on a malformed value.
  long integer(const char* name, long fallback) const {
    const char* text = find(name);
    if (text == nullptr) return fallback;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0') usage_error(name, text);
    return value;
  }

  double real(const char* name, double fallback) const {
    const char* text = find(name);
    if (text == nullptr) return fallback;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (*text == '\0' || *end != '\0') usage_error(name, text);
    return value;
  }

  std::string text(const char* name, const char* fallback) const {
    const char* value = find(name);
    return value != nullptr ? value : fallback;
  }

  bool flag(const char* name) const {
    for (int i = 1; i < argc_; ++i)
      if (std::strcmp(argv_[i], name) == 0) return true;
    return false;
  }

 private:
  const char* find(const char* name) const {
    const size_t length = std::strlen(name);
    for (int i = 1; i < argc_; ++i) {
      if (std::strncmp(argv_[i], name, length) != 0) continue;
      if (argv_[i][length] == '=') return argv_[i] + length + 1;
      if (argv_[i][length] == '\0' && i + 1 < argc_) return argv_[i + 1];
    }
    return nullptr;
  }

  [[noreturn]] static void usage_error(const char* name, const char* text) {
    std::fprintf(stderr, "error: %s expects a number, got '%s'\n", name, text);
    std::exit(2);
  }

  int argc_;
  char** argv_;
};

#endif
