// Small, valid traces that cover every record kind, several sections and
// chunks, and a few damaged variants: the fuzzer's seed corpus.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace proflaunch::format {

struct SeedTrace {
  std::string name;
  std::vector<uint8_t> bytes;
};

std::vector<SeedTrace> seed_traces();

}  // namespace proflaunch::format
