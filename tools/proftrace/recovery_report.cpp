#include <cinttypes>

#include "formats/reader.h"
#include "tools/proftrace/commands.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

bool report_recovery(const std::vector<InputTrace>& inputs, bool combine_two_passes, std::FILE* err) {
  bool damaged = false;
  for (const auto& input : inputs) {
    const format::ReadReport report =
        combine_two_passes ? format::combine_passes(input.definitions_report, input.events_report)
                           : input.events_report;
    if (report.clean()) continue;
    damaged = true;
    std::fprintf(err, "proftrace: warning: %s: damaged input, recovered what was intact: %s\n",
                 input.path.c_str(), format::summarize(report).c_str());
    if (report.truncated_tail)
      std::fprintf(err,
                   "proftrace: warning: %s: the file ends inside a chunk at offset %" PRIu64
                   " (the writer was killed or the disk filled up): events after that point are missing\n",
                   input.path.c_str(), report.truncated_tail_offset);
    for (const auto& note : report.notes)
      std::fprintf(err, "proftrace:   at offset %" PRIu64 ": %s\n", note.file_offset, note.reason.c_str());
  }
  return damaged;
}

}  // namespace proflaunch::tools
