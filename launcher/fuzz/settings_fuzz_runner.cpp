// Runs the settings fuzzer's entry point without libFuzzer (meson test):
// over each input file given (the corpus, the regressions) and over
// deterministic byte-level mutations of each (flips, cuts, fields doubled).
//   settings_fuzz_runner DIR_OR_FILE...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& entry : std::filesystem::directory_iterator(argv[i]))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  std::mt19937 random(20261125);  // fixed: the same inputs on every run
  size_t runs = 0;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", path.c_str());
      return 1;
    }
    const std::vector<uint8_t> seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    ++runs;
    for (int i = 0; i < 500 && !seed.empty(); ++i) {
      std::vector<uint8_t> input = seed;
      const size_t at = random() % input.size();
      switch (i % 4) {
        case 0: input[at] ^= static_cast<uint8_t>(1 + random() % 255); break;
        case 1: input.resize(at); break;
        case 2: input.insert(input.begin() + static_cast<long>(at), input.begin(), input.begin() + static_cast<long>(at)); break;
        default: input[at] = "%,:.{}0-9\xff"[random() % 11]; break;
      }
      if (i % 8 == 0 && !input.empty()) input[0] = static_cast<uint8_t>(i / 8);  // every parser
      LLVMFuzzerTestOneInput(input.data(), input.size());
      ++runs;
    }
  }
  std::printf("settings_fuzz_runner: %zu inputs from %zu files, no invariant broken\n", runs, files.size());
  return files.empty() ? 1 : 0;
}
