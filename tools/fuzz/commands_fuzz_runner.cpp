// Runs the commands fuzzer's entry point without libFuzzer, so that every
// build (and CI) exercises it: over each input file given (the corpus and
// the regressions) and over deterministic record-level mutations of each.
//
//   commands_fuzz_runner [--mutations N] DIR_OR_FILE...
//   commands_fuzz_runner --make-seed TRACE OUT   # a real trace as fuzzer input
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tools/fuzz/record_list.h"
#include "tools/proftrace/commands.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool read_file(const std::filesystem::path& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// The corpus must be readable traces, or the fuzzer only ever meets the
// reader's "not a trace": each converts without error before mutation.
bool converts(const std::vector<uint8_t>& input, const std::filesystem::path& name) {
  const std::vector<uint8_t> trace = proflaunch::fuzz::to_trace(input.data(), input.size());
  const std::string path = "/dev/shm/proflaunch-fuzz-runner-" + std::to_string(getpid()) + ".trace";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(trace.data()),
                                               static_cast<std::streamsize>(trace.size()));
  proflaunch::tools::ConvertCommand convert;
  convert.inputs = {path};
  convert.output = "/dev/null";
  convert.quiet = true;
  const int code = proflaunch::tools::run_convert(convert, stderr);
  std::remove(path.c_str());
  if (code != 0) std::fprintf(stderr, "%s: the corpus input does not convert (exit %d)\n", name.c_str(), code);
  return code == 0;
}

int make_seed(const char* trace_path, const char* out_path) {
  std::vector<uint8_t> trace, list;
  std::string error;
  if (!read_file(trace_path, &trace) || !proflaunch::fuzz::from_trace(trace, &list, &error)) {
    std::fprintf(stderr, "%s: cannot read: %s\n", trace_path, error.c_str());
    return 1;
  }
  std::ofstream out(out_path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(list.data()), static_cast<std::streamsize>(list.size()));
  if (!out) {
    std::fprintf(stderr, "%s: cannot write\n", out_path);
    return 1;
  }
  std::printf("%s: %zu bytes of records\n", out_path, list.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--make-seed") == 0) return make_seed(argv[2], argv[3]);
  int mutations = 40;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
      mutations = std::atoi(argv[++i]);
    } else if (std::filesystem::is_directory(argv[i])) {
      for (const auto& entry : std::filesystem::directory_iterator(argv[i]))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  size_t runs = 0;
  std::mt19937_64 random(20261125);  // fixed: the same inputs on every run
  for (const auto& path : files) {
    std::vector<uint8_t> input;
    if (!read_file(path, &input)) {
      std::fprintf(stderr, "%s: cannot read\n", path.c_str());
      return 1;
    }
    if (path.parent_path().filename() == "corpus" && !converts(input, path)) return 1;
    LLVMFuzzerTestOneInput(input.data(), input.size());
    ++runs;
    for (int i = 0; i < mutations; ++i) {
      std::vector<proflaunch::fuzz::RecordChunk> chunks = proflaunch::fuzz::parse_record_list(input.data(), input.size());
      for (int k = 0, n = 1 + static_cast<int>(random() % 8); k < n; ++k) proflaunch::fuzz::mutate_records(chunks, random);
      const std::vector<uint8_t> mutated = proflaunch::fuzz::serialize_record_list(chunks);
      LLVMFuzzerTestOneInput(mutated.data(), mutated.size());
      ++runs;
    }
  }
  std::printf("commands_fuzz_runner: %zu inputs from %zu files, no invariant broken\n", runs, files.size());
  return files.empty() ? 1 : 0;
}
