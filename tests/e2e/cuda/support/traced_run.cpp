#include "tests/e2e/cuda/support/traced_run.h"

#include <cstdlib>
#include "tests/perfetto/twin_check.h"

#include <gtest/gtest.h>

#include <sstream>

namespace proflaunch::e2e {

std::string build_path(const char* variable) { return testing::required_env(variable); }

RunOptions untraced(const std::vector<std::string>& program,
                    const std::vector<std::pair<std::string, std::string>>& env) {
  RunOptions options;
  options.argv = program;
  options.unset_env = {"LD_PRELOAD", "PROFLAUNCH_LIBRARY", "PROFLAUNCH_PARTS_DIR",
                       "PROFLAUNCH_BUFFER_SIZE", "PROFLAUNCH_FLUSH_INTERVAL_MS",
                       "PROFLAUNCH_VERBOSE", "PROFLAUNCH_EXEC_PARENT", "PROFLAUNCH_TRACE",
                       "PROFLAUNCH_GPU_TIMING", "SIMGPU_KERNEL_COSTS"};
  // Never a real NVIDIA library: the simulated ones come first.
  options.set_env = {{"LD_LIBRARY_PATH", build_path("SIMGPU_LIBRARY_PATH")}};
  // A sanitized test build: an uninstrumented program (Python) loading the
  // instrumented simulator needs the sanitizer runtime first.
  if (const std::string runtime = testing::sanitizer_runtime(); !runtime.empty())
    options.set_env.emplace_back("LD_PRELOAD", runtime);
  options.set_env.insert(options.set_env.end(), env.begin(), env.end());
  options.timeout_ms = 20000;
  return options;
}

RunOptions traced(const std::string& trace, const std::vector<std::string>& program,
                  const std::vector<std::string>& launcher_args,
                  const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> command = {build_path("PROFLAUNCH_EXE"), "-q", "-o", trace};
  command.insert(command.end(), launcher_args.begin(), launcher_args.end());
  command.push_back("--");
  command.insert(command.end(), program.begin(), program.end());
  return untraced(command, env);
}

ProcessResult run_proftrace(const std::vector<std::string>& args) {
  RunOptions options;
  options.argv.push_back(build_path("PROFTRACE_EXE"));
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.timeout_ms = 20000;
  ProcessResult result = testing::run_process(options);
  if (result.exited_with(0)) {
    const std::string twin = testing::protobuf_twin_problems(options.argv[0], args);
    if (!twin.empty()) ADD_FAILURE() << twin;
  }
  return result;
}

CudaTrace load_trace_or_fail(const std::string& path) {
  std::string error;
  CudaTrace trace = load_cuda_trace(path, &error);
  EXPECT_EQ(error, "") << "cannot read " << path;
  return trace;
}

std::string describe(const CudaTrace& trace) {
  std::ostringstream text;
  text << trace.images.size() << " process images; " << format::summarize(trace.report) << "\n";
  for (const ProcessImage& image : trace.images) {
    text << "  pid " << image.pid() << " ppid " << image.ppid() << " section 0x" << std::hex
         << image.section_id << std::dec << " '" << image.command_line() << "': "
         << image.launches().size() << " launches, " << image.copies().size() << " copies, "
         << image.sets().size() << " memsets, " << image.gpu_activities.size()
         << " GPU activities" << (image.end ? "" : ", no SectionEnd") << "\n";
    for (const auto& [kernel, count] : image.launches_by_kernel())
      text << "    " << count << " x " << kernel << "\n";
  }
  return text.str();
}

bool sanitized_run() { return std::getenv("SANITIZER_PRELOAD") != nullptr; }

}  // namespace proflaunch::e2e
