// Joining: the per-process parts of a run become the one file the user named.
// One FileHeader, then every complete chunk of every part, in part order.
// Each chunk header is checked (magic, CRC, size) and the chunk must be whole;
// a part whose tail is cut or damaged is copied up to its last good chunk and
// the rest is reported, never copied. Chunks are not decompressed: the join
// is a copy, bounded by disk speed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proflaunch::launcher {

struct PartReport {
  std::string part;            // file name
  uint64_t chunks = 0;         // copied
  uint64_t bytes_cut = 0;      // not copied (damaged or truncated tail)
  uint64_t cut_offset = 0;     // where the cut starts
  std::string cut_reason;      // empty when the part was whole
};

struct JoinResult {
  bool ok = false;
  std::string error;  // one line, when !ok
  std::vector<PartReport> parts;
  uint64_t output_bytes = 0;
};

// Writes `output_path` (through a temporary file renamed into place; an
// existing file is replaced only when `replace_existing`) from the *.part
// files in `parts_dir`, then removes them and the directory, unless
// `keep_parts` (some writers still run: a later --join gets the whole).
JoinResult join_parts(const std::string& parts_dir, const std::string& output_path,
                      bool replace_existing, bool keep_parts = false);

// The same for the parts of the processes in `pids` only, and the parts stay
// (proflaunch ctl writes a trace of a run that goes on). A part being
// written is copied up to its last whole chunk.
JoinResult copy_parts_of(const std::string& parts_dir, const std::vector<uint32_t>& pids,
                         const std::string& output_path, bool replace_existing);

}  // namespace proflaunch::launcher
