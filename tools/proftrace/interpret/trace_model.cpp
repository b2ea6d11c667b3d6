#include "tools/proftrace/interpret/trace_model.h"

#include <algorithm>

namespace proflaunch::tools {

using namespace proflaunch::format;

std::string_view SectionModel::string(uint32_t id) const {
  if (id == 0) return {};
  auto found = strings.find(id);
  return found == strings.end() ? std::string_view() : std::string_view(found->second);
}

std::string SectionModel::host() const {
  return process ? std::string(string(process->host_string)) : std::string();
}

std::string SectionModel::command_line() const {
  if (!process) return {};
  std::string text(string(process->command_line_string));
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

std::string SectionModel::api_name(uint16_t api) const {
  auto found = apis.find(api);
  if (found != apis.end()) {
    std::string_view name = string(found->second.name_string);
    if (!name.empty()) return std::string(name);
  }
  return "api#" + std::to_string(api);
}

const FunctionDefRecord* SectionModel::function_def(uint64_t handle, uint64_t at_ns) const {
  auto found = functions.find(handle);
  if (found == functions.end() || found->second.empty()) return nullptr;
  const auto& versions = found->second;
  // The last definition with since_ns <= at_ns; before the first, the first.
  const FunctionDefRecord* best = &versions.front();
  for (const auto& version : versions) {
    if (version.since_ns <= at_ns) best = &version;
    else break;
  }
  return best;
}

std::string_view SectionModel::function_name(uint64_t handle, uint64_t at_ns) const {
  const FunctionDefRecord* def = function_def(handle, at_ns);
  return def != nullptr ? string(def->name_string) : std::string_view();
}

std::string_view SectionModel::thread_name(uint32_t tid) const {
  const std::string_view named = nvtx_name(format::NvtxNameKind::kOsThread, 0, tid);
  if (!named.empty()) return named;
  auto found = threads.find(tid);
  if (found == threads.end() || found->second.empty()) return {};
  return string(found->second.back().name_string);
}

std::string_view SectionModel::nvtx_domain_name(uint64_t domain) const {
  auto found = nvtx_domains.find(domain);
  return found == nvtx_domains.end() ? std::string_view() : string(found->second);
}

std::string_view SectionModel::nvtx_name(format::NvtxNameKind kind, uint64_t domain, uint64_t handle) const {
  auto found = nvtx_names.find({static_cast<uint8_t>(kind), domain, handle});
  return found == nvtx_names.end() ? std::string_view() : string(found->second);
}

std::string SectionModel::nvtx_message(const format::NvtxEventRecord& event, std::string_view inline_text) const {
  if (event.message_type == static_cast<uint8_t>(format::NvtxMessageType::kRegistered))
    return std::string(nvtx_name(format::NvtxNameKind::kRegisteredString, event.domain, event.message_handle));
  return std::string(inline_text);
}

SectionModel& TraceModel::section(uint64_t section_id, size_t input_index) {
  auto [it, inserted] = sections_.try_emplace(section_id);
  if (inserted) {
    it->second.section_id = section_id;
    it->second.input_index = input_index;
  }
  return it->second;
}

const SectionModel* TraceModel::find(uint64_t section_id) const {
  auto found = sections_.find(section_id);
  return found == sections_.end() ? nullptr : &found->second;
}

std::vector<const SectionModel*> TraceModel::ordered() const {
  std::vector<const SectionModel*> result;
  for (const auto& [id, section] : sections_) result.push_back(&section);
  auto key = [](const SectionModel* s) {
    const bool has_rank = s->process && s->process->rank >= 0;
    return std::make_tuple(!has_rank, has_rank ? s->process->rank : 0,
                           s->process ? s->process->monotonic_ns : UINT64_MAX, s->pid(),
                           s->section_id);
  };
  std::stable_sort(result.begin(), result.end(),
                   [&](const auto* a, const auto* b) { return key(a) < key(b); });
  return result;
}

void DefinitionsCollector::on_record(const RecordView& record) {
  SectionModel& section = model_.section(record.section_id, input_index_);
  switch (record.record_kind()) {
    case RecordKind::kProcessInfo: section.process = record.as<ProcessInfoRecord>(); break;
    case RecordKind::kStringDef: {
      const auto def = record.as<StringDefRecord>();
      section.strings[def.id] = std::string(record.tail<StringDefRecord>());
      break;
    }
    case RecordKind::kApiDef: {
      const auto def = record.as<ApiDefRecord>();
      section.apis[def.api] = def;
      break;
    }
    case RecordKind::kFunctionDef: {
      const auto def = record.as<FunctionDefRecord>();
      auto& versions = section.functions[def.handle];
      versions.push_back(def);
      std::stable_sort(versions.begin(), versions.end(),
                       [](const auto& a, const auto& b) { return a.since_ns < b.since_ns; });
      break;
    }
    case RecordKind::kThreadInfo: {
      const auto def = record.as<ThreadInfoRecord>();
      auto& versions = section.threads[def.tid];
      versions.push_back(def);
      std::stable_sort(versions.begin(), versions.end(),
                       [](const auto& a, const auto& b) { return a.since_ns < b.since_ns; });
      break;
    }
    case RecordKind::kDeviceInfo: {
      const auto def = record.as<DeviceInfoRecord>();
      section.devices[def.device] = def;
      break;
    }
    case RecordKind::kSectionEnd: section.end = record.as<SectionEndRecord>(); break;
    case RecordKind::kGpuMetricDef: {
      const auto def = record.as<GpuMetricDefRecord>();
      section.gpu_metrics[def.metric] = def;
      break;
    }
    case RecordKind::kNvtxDomainDef: {
      const auto def = record.as<NvtxDomainDefRecord>();
      section.nvtx_domains[def.domain] = def.name_string;
      break;
    }
    case RecordKind::kNvtxNameDef: {
      const auto def = record.as<NvtxNameDefRecord>();
      section.nvtx_names[{def.kind, def.domain, def.handle}] = def.name_string;
      break;
    }
    default: section.stacks.add(record); break;  // stack definitions; events are not for this pass
  }
}

bool open_inputs(const std::vector<std::string>& paths, std::vector<InputTrace>* inputs,
                 std::string* error) {
  for (const auto& path : paths) {
    auto reader = TraceReader::open_file(path, error);
    if (!reader) return false;
    inputs->push_back(InputTrace{path, std::move(reader), {}, {}});
  }
  return true;
}

void load_definitions(std::vector<InputTrace>& inputs, TraceModel& model) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    DefinitionsCollector collector(model, i);
    inputs[i].definitions_report = inputs[i].reader->read(collector, ChunkSelection::kDefinitionsOnly);
  }
}

bool open_readable_inputs(const std::vector<std::string>& paths, std::vector<InputTrace>* inputs,
                          TraceModel& model, std::string* error) {
  if (!open_inputs(paths, inputs, error)) return false;
  load_definitions(*inputs, model);
  for (const auto& input : *inputs) {
    const auto& report = input.definitions_report;
    if (report.chunks_ok + report.chunks_not_decoded == 0) {
      *error = input.path + ": no complete chunk could be read (" + format::summarize(report) + ")";
      return false;
    }
  }
  return true;
}

bool load_trace(const std::vector<std::string>& paths, InputCheck check, Trace* trace, std::FILE* err) {
  std::string error;
  const bool opened = check == InputCheck::kComplete ? open_readable_inputs(paths, &trace->inputs, trace->model, &error)
                                                     : open_inputs(paths, &trace->inputs, &error);
  if (!opened) {
    std::fprintf(err, "proftrace: %s\n", error.c_str());
    return false;
  }
  if (check == InputCheck::kAny) load_definitions(trace->inputs, trace->model);
  return true;
}

}  // namespace proflaunch::tools
