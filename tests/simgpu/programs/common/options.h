// Tiny "--name value" / "--name=value" option parsing shared by the target
// programs, so each main() reads as the workload it is.
#ifndef SIMGPU_PROGRAMS_OPTIONS_H
#define SIMGPU_PROGRAMS_OPTIONS_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

class Options {
 public:
  // `known` lists every option the program takes; anything else on the
  // command line exits 2, so a misspelt option never silently falls back to
  // a default (a test asking for --step 5 must not run 200 steps).
  Options(int argc, char** argv, std::initializer_list<const char*> known)
      : argc_(argc), argv_(argv) {
    for (int i = 1; i < argc; ++i) {
      const char* equals = std::strchr(argv[i], '=');
      const size_t length = equals ? size_t(equals - argv[i]) : std::strlen(argv[i]);
      bool recognized = false;
      for (const char* name : known)
        recognized =
            recognized || (std::strlen(name) == length && std::strncmp(name, argv[i], length) == 0);
      if (!recognized) {
        std::fprintf(stderr, "error: unknown argument '%s'\n", argv[i]);
        std::exit(2);
      }
      if (equals == nullptr) ++i;  // "--name value": skip the value
    }
  }

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
