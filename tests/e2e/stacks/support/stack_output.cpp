#include "tests/e2e/stacks/support/stack_output.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "formats/reader.h"
#include "formats/record_kinds.h"
#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/unit/tools/json_value.h"

namespace proflaunch::e2e {

std::vector<const SliceStack*> ConvertedStacks::named(const std::string& api) const {
  std::vector<const SliceStack*> found;
  for (const SliceStack& slice : slices)
    if (slice.api == api) found.push_back(&slice);
  return found;
}

ConvertedStacks convert_stacks(const std::string& trace_path) {
  ConvertedStacks result;
  const std::string json_path = trace_path + ".json";
  const ProcessResult run = run_proftrace({"convert", "-q", trace_path, "-o", json_path});
  result.proftrace_stderr = run.err;
  if (!run.exited_with(0)) {
    result.error = "proftrace convert: " + run.describe();
    return result;
  }
  std::ifstream in(json_path);
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  const auto document = testing::parse_json(text.str(), &error);
  if (!document) {
    result.error = "bad JSON: " + error;
    return result;
  }
  for (const testing::JsonValue& event : (*document)["traceEvents"].items) {
    if (event["ph"].str() != "X" || !event["args"].has("correlation")) continue;
    SliceStack slice;
    slice.api = event["name"].str();
    if (const testing::JsonValue* stack = event["args"].find("stack")) {
      std::istringstream lines(stack->str());
      for (std::string line; std::getline(lines, line);) slice.frames.push_back(line);
    }
    result.slices.push_back(std::move(slice));
  }
  result.ok = true;
  return result;
}

std::map<std::string, uint64_t> record_counts(const std::string& trace_path) {
  class Counter : public format::RecordVisitor {
   public:
    void on_record(const format::RecordView& record) override {
      const auto name = format::record_kind_name(record.kind);
      ++counts[name ? std::string(*name) : "kind" + std::to_string(record.kind)];
    }
    std::map<std::string, uint64_t> counts;
  };
  std::string error;
  auto reader = format::TraceReader::open_file(trace_path, &error);
  if (!reader) return {};
  Counter counter;
  reader->read(counter);
  return counter.counts;
}

int site_line(const std::string& file, const std::string& name) {
  std::ifstream in(file);
  const std::string marker = "@site:" + name;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const size_t at = line.find(marker);
    // The whole marker, not a prefix of a longer one.
    if (at == std::string::npos) continue;
    const size_t end = at + marker.size();
    if (end == line.size() || (!std::isalnum(static_cast<unsigned char>(line[end])) && line[end] != '_'))
      return number;
  }
  return 0;
}

bool contains_in_order(const std::vector<std::string>& frames, const std::vector<FrameMatch>& expected,
                       std::string* why) {
  auto matches = [](const std::string& frame, const FrameMatch& want) {
    for (const std::string& piece : want)
      if (frame.find(piece) == std::string::npos) return false;
    return true;
  };
  size_t next = 0;
  for (const FrameMatch& want : expected) {
    while (next < frames.size() && !matches(frames[next], want)) ++next;
    if (next == frames.size()) {
      std::string pieces;
      for (const std::string& piece : want) pieces += "'" + piece + "' ";
      *why = "no frame with " + pieces + "(in this order) in:\n" + joined(frames);
      return false;
    }
    ++next;
  }
  return true;
}

std::string native_line(const std::string& path, const std::string& site) {
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base + ":" + std::to_string(site_line(path, site)) + ")";
}

std::string joined(const std::vector<std::string>& frames) {
  std::string text;
  for (const std::string& frame : frames) text += "  " + frame + "\n";
  return text;
}

}  // namespace proflaunch::e2e
