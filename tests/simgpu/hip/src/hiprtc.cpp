// hiprtc (in libamdhip64 in HIP 5.2): programs and their logs. The simulator
// has no device compiler: hiprtcCompileProgram fails with
// HIPRTC_ERROR_COMPILATION and says so in the program's log, so that a
// program's usual "print the log on failure" path reads a real log. Errors
// as hiprtc.h documents them: a null output or input pointer is
// HIPRTC_ERROR_INVALID_INPUT, a program that is not one is
// HIPRTC_ERROR_INVALID_PROGRAM.
#include <hip/hiprtc.h>

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

namespace {

struct Program {
  std::string source;
  std::string name;
  std::string log;
};

std::mutex g_mutex;
std::unordered_set<Program*>& programs() {
  static auto* set = new std::unordered_set<Program*>;
  return *set;
}

Program* find(hiprtcProgram prog) {
  auto* program = reinterpret_cast<Program*>(prog);
  return programs().count(program) != 0 ? program : nullptr;
}

}  // namespace

extern "C" {

hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name, int numHeaders,
                                 const char** headers, const char** includeNames) {
  if (prog == nullptr || src == nullptr || numHeaders < 0) return HIPRTC_ERROR_INVALID_INPUT;
  if (numHeaders > 0 && (headers == nullptr || includeNames == nullptr)) return HIPRTC_ERROR_INVALID_INPUT;
  auto* program = new (std::nothrow) Program;
  if (program == nullptr) return HIPRTC_ERROR_OUT_OF_MEMORY;
  try {
    program->source = src;
    program->name = name != nullptr ? name : "";
    std::lock_guard lock(g_mutex);
    programs().insert(program);
  } catch (...) {
    delete program;
    return HIPRTC_ERROR_OUT_OF_MEMORY;
  }
  *prog = reinterpret_cast<hiprtcProgram>(program);
  return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog) {
  if (prog == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  std::lock_guard lock(g_mutex);
  Program* program = find(*prog);
  if (program == nullptr) return HIPRTC_ERROR_INVALID_PROGRAM;
  programs().erase(program);
  delete program;
  *prog = nullptr;
  return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions, const char** options) {
  if (numOptions < 0 || (numOptions > 0 && options == nullptr)) return HIPRTC_ERROR_INVALID_INPUT;
  std::lock_guard lock(g_mutex);
  Program* program = find(prog);
  if (program == nullptr) return HIPRTC_ERROR_INVALID_PROGRAM;
  program->log = "simgpu: the simulated HIP runtime has no device compiler; " + program->name + " was not compiled\n";
  return HIPRTC_ERROR_COMPILATION;
}

// The log's size with its terminating NUL (1 for an empty log).
hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t* logSizeRet) {
  if (logSizeRet == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  std::lock_guard lock(g_mutex);
  Program* program = find(prog);
  if (program == nullptr) return HIPRTC_ERROR_INVALID_PROGRAM;
  *logSizeRet = program->log.size() + 1;
  return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char* log) {
  if (log == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  std::lock_guard lock(g_mutex);
  Program* program = find(prog);
  if (program == nullptr) return HIPRTC_ERROR_INVALID_PROGRAM;
  std::memcpy(log, program->log.c_str(), program->log.size() + 1);
  return HIPRTC_SUCCESS;
}

}  // extern "C"
