// proftrace dump FILE...: every record as one line of text, in file order.
#include <CLI/CLI.hpp>

#include <memory>

#include "tools/proftrace/commands.h"
#include "tools/proftrace/dump_format.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

using namespace proflaunch::format;

namespace {

class DumpVisitor : public RecordVisitor {
 public:
  DumpVisitor(const TraceModel& model, std::FILE* out) : model_(model), out_(out) {}

  void on_chunk(const ChunkInfo& chunk) override { section_ = model_.find(chunk.section_id); }
  void on_record(const RecordView& record) override {
    line_.clear();
    format_record(line_, record, section_);
    line_ += '\n';
    if (std::fwrite(line_.data(), 1, line_.size(), out_) != line_.size()) failed_ = true;
  }
  bool keep_going() override { return !failed_; }
  bool failed() const { return failed_; }

 private:
  const TraceModel& model_;
  std::FILE* out_;
  const SectionModel* section_ = nullptr;
  std::string line_;
  bool failed_ = false;
};

}  // namespace

int run_dump(const DumpCommand& command, std::FILE* out, std::FILE* err) {
  try {
    // Definitions first, so that records can show names defined after them.
    Trace trace;
    if (!load_trace(command.inputs, InputCheck::kAny, &trace, err)) return kExitError;
    std::vector<InputTrace>& inputs = trace.inputs;
    const TraceModel& model = trace.model;
    for (auto& input : inputs) {
      DumpVisitor visitor(model, out);
      input.events_report = input.reader->read(
          visitor, command.definitions_only ? ChunkSelection::kDefinitionsOnly : ChunkSelection::kAll);
      if (visitor.failed() || std::fflush(out) != 0) {
        std::fprintf(err, "proftrace: writing the dump failed\n");
        return kExitError;
      }
    }
    report_recovery(inputs, false, err);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace: dump failed: %s\n", e.what());
    return kExitError;
  }
}

void add_dump_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<DumpCommand>();
  CLI::App* sub = app.add_subcommand("dump", "Print every record as one line of text, in file order");
  sub->add_option("files", command->inputs, "proflaunch trace files")->required();
  sub->add_flag("--definitions", command->definitions_only,
                "only the definitions (processes, strings, APIs, kernels, threads, devices)");
  sub->callback([command, &exit_code] { exit_code = run_dump(*command, stdout, stderr); });
}

}  // namespace proflaunch::tools
