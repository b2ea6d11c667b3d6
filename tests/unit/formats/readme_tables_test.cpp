// formats/README.md documents every record with a field table. This test
// reads those tables and checks them against the structs in records.h: kind
// numbers, total sizes, and each field's offset and size. The README cannot
// drift from the code without this failing.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "formats/record_kinds.h"
#include "formats/records.h"

namespace proflaunch::format {
namespace {

struct FieldFact {
  size_t offset;
  size_t bytes;
};

struct StructFact {
  size_t bytes;
  int kind;  // -1: not a record
  std::map<std::string, FieldFact> fields;
};

#define FIELD(Type, name) \
  { #name, FieldFact{offsetof(Type, name), sizeof(std::declval<Type&>().name)} }

#define SPAN_FIELDS(Type)                                                         \
  FIELD(Type, span.begin_ns), FIELD(Type, span.end_ns),                          \
      FIELD(Type, span.correlation_id), FIELD(Type, span.result), FIELD(Type, span.api), \
      FIELD(Type, span.flags)

template <typename T>
StructFact record(std::map<std::string, FieldFact> fields) {
  return StructFact{sizeof(T), static_cast<int>(RecordKindOf<T>::value), std::move(fields)};
}

std::map<std::string, StructFact> facts_from_code() {
  std::map<std::string, StructFact> facts;
  facts["FileHeader"] = StructFact{
      sizeof(FileHeader), -1,
      {FIELD(FileHeader, magic), FIELD(FileHeader, format_version), FIELD(FileHeader, header_bytes),
       FIELD(FileHeader, required_features), FIELD(FileHeader, optional_features),
       FIELD(FileHeader, reserved)}};
  facts["ChunkHeader"] = StructFact{
      sizeof(ChunkHeader), -1,
      {FIELD(ChunkHeader, magic), FIELD(ChunkHeader, kind), FIELD(ChunkHeader, flags),
       FIELD(ChunkHeader, section_id), FIELD(ChunkHeader, payload_bytes),
       FIELD(ChunkHeader, header_crc32)}};
  facts["RecordHeader"] = StructFact{
      sizeof(RecordHeader), -1, {FIELD(RecordHeader, kind), FIELD(RecordHeader, bytes)}};
  facts["ApiSpan"] = StructFact{
      sizeof(ApiSpan), -1,
      {FIELD(ApiSpan, begin_ns), FIELD(ApiSpan, end_ns), FIELD(ApiSpan, correlation_id),
       FIELD(ApiSpan, result), FIELD(ApiSpan, api), FIELD(ApiSpan, flags)}};
  facts["ProcessInfo"] = record<ProcessInfoRecord>(
      {FIELD(ProcessInfoRecord, header), FIELD(ProcessInfoRecord, pid),
       FIELD(ProcessInfoRecord, ppid), FIELD(ProcessInfoRecord, rank),
       FIELD(ProcessInfoRecord, local_rank), FIELD(ProcessInfoRecord, world_size),
       FIELD(ProcessInfoRecord, flags), FIELD(ProcessInfoRecord, monotonic_ns),
       FIELD(ProcessInfoRecord, realtime_ns), FIELD(ProcessInfoRecord, boottime_ns),
       FIELD(ProcessInfoRecord, parent_section_id), FIELD(ProcessInfoRecord, host_string),
       FIELD(ProcessInfoRecord, command_line_string), FIELD(ProcessInfoRecord, executable_string),
       FIELD(ProcessInfoRecord, tool_version_string)});
  facts["StringDef"] =
      record<StringDefRecord>({FIELD(StringDefRecord, header), FIELD(StringDefRecord, id)});
  facts["ApiDef"] = record<ApiDefRecord>(
      {FIELD(ApiDefRecord, header), FIELD(ApiDefRecord, api), FIELD(ApiDefRecord, domain),
       FIELD(ApiDefRecord, vendor), FIELD(ApiDefRecord, name_string)});
  facts["FunctionDef"] = record<FunctionDefRecord>(
      {FIELD(FunctionDefRecord, header), FIELD(FunctionDefRecord, name_string),
       FIELD(FunctionDefRecord, handle), FIELD(FunctionDefRecord, since_ns),
       FIELD(FunctionDefRecord, registers_per_thread), FIELD(FunctionDefRecord, static_shared_bytes),
       FIELD(FunctionDefRecord, max_threads_per_block), FIELD(FunctionDefRecord, local_bytes_per_thread),
       FIELD(FunctionDefRecord, attributes_known), FIELD(FunctionDefRecord, reserved)});
  facts["ThreadInfo"] = record<ThreadInfoRecord>(
      {FIELD(ThreadInfoRecord, header), FIELD(ThreadInfoRecord, tid),
       FIELD(ThreadInfoRecord, name_string), FIELD(ThreadInfoRecord, since_ns)});
  facts["DeviceInfo"] = record<DeviceInfoRecord>(
      {FIELD(DeviceInfoRecord, header), FIELD(DeviceInfoRecord, device),
       FIELD(DeviceInfoRecord, vendor), FIELD(DeviceInfoRecord, reserved),
       FIELD(DeviceInfoRecord, name_string), FIELD(DeviceInfoRecord, multiprocessor_count),
       FIELD(DeviceInfoRecord, total_memory_bytes), FIELD(DeviceInfoRecord, uuid),
       FIELD(DeviceInfoRecord, max_threads_per_multiprocessor),
       FIELD(DeviceInfoRecord, max_blocks_per_multiprocessor),
       FIELD(DeviceInfoRecord, registers_per_multiprocessor), FIELD(DeviceInfoRecord, registers_per_block),
       FIELD(DeviceInfoRecord, shared_bytes_per_multiprocessor), FIELD(DeviceInfoRecord, shared_bytes_per_block),
       FIELD(DeviceInfoRecord, shared_bytes_per_block_optin),
       FIELD(DeviceInfoRecord, reserved_shared_bytes_per_block), FIELD(DeviceInfoRecord, warp_size),
       FIELD(DeviceInfoRecord, compute_capability_major), FIELD(DeviceInfoRecord, compute_capability_minor)});
  facts["SectionEnd"] = record<SectionEndRecord>(
      {FIELD(SectionEndRecord, header), FIELD(SectionEndRecord, reserved),
       FIELD(SectionEndRecord, end_ns), FIELD(SectionEndRecord, records_written),
       FIELD(SectionEndRecord, records_dropped)});
  facts["ThreadBatch"] =
      record<ThreadBatchRecord>({FIELD(ThreadBatchRecord, header), FIELD(ThreadBatchRecord, tid)});
  facts["Lost"] = record<LostRecord>({FIELD(LostRecord, header), FIELD(LostRecord, reason),
                                      FIELD(LostRecord, first_ns), FIELD(LostRecord, last_ns),
                                      FIELD(LostRecord, count)});
  facts["ApiCall"] = record<ApiCallRecord>(
      {FIELD(ApiCallRecord, header), FIELD(ApiCallRecord, reserved), SPAN_FIELDS(ApiCallRecord),
       FIELD(ApiCallRecord, event), FIELD(ApiCallRecord, stream)});
  facts["KernelLaunch"] = record<KernelLaunchRecord>(
      {FIELD(KernelLaunchRecord, header), FIELD(KernelLaunchRecord, device),
       SPAN_FIELDS(KernelLaunchRecord), FIELD(KernelLaunchRecord, function),
       FIELD(KernelLaunchRecord, stream), FIELD(KernelLaunchRecord, context),
       FIELD(KernelLaunchRecord, grid.x), FIELD(KernelLaunchRecord, grid.y),
       FIELD(KernelLaunchRecord, grid.z), FIELD(KernelLaunchRecord, block.x),
       FIELD(KernelLaunchRecord, block.y), FIELD(KernelLaunchRecord, block.z),
       FIELD(KernelLaunchRecord, dynamic_shared_bytes), FIELD(KernelLaunchRecord, launch_flags)});
  facts["MemoryCopy"] = record<MemoryCopyRecord>(
      {FIELD(MemoryCopyRecord, header), FIELD(MemoryCopyRecord, device),
       SPAN_FIELDS(MemoryCopyRecord), FIELD(MemoryCopyRecord, bytes),
       FIELD(MemoryCopyRecord, stream), FIELD(MemoryCopyRecord, context),
       FIELD(MemoryCopyRecord, src), FIELD(MemoryCopyRecord, dst),
       FIELD(MemoryCopyRecord, direction), FIELD(MemoryCopyRecord, src_kind),
       FIELD(MemoryCopyRecord, dst_kind), FIELD(MemoryCopyRecord, reserved),
       FIELD(MemoryCopyRecord, peer_device), FIELD(MemoryCopyRecord, src_device),
       FIELD(MemoryCopyRecord, dst_device)});
  facts["ApiCount"] = record<ApiCountRecord>(
      {FIELD(ApiCountRecord, header), FIELD(ApiCountRecord, api), FIELD(ApiCountRecord, reserved),
       FIELD(ApiCountRecord, count), FIELD(ApiCountRecord, first_ns), FIELD(ApiCountRecord, last_ns)});
  facts["MemorySet"] = record<MemorySetRecord>(
      {FIELD(MemorySetRecord, header), FIELD(MemorySetRecord, device),
       SPAN_FIELDS(MemorySetRecord), FIELD(MemorySetRecord, bytes), FIELD(MemorySetRecord, stream),
       FIELD(MemorySetRecord, context), FIELD(MemorySetRecord, dst), FIELD(MemorySetRecord, value),
       FIELD(MemorySetRecord, element_bytes), FIELD(MemorySetRecord, dst_kind),
       FIELD(MemorySetRecord, reserved)});
  facts["Synchronize"] = record<SynchronizeRecord>(
      {FIELD(SynchronizeRecord, header), FIELD(SynchronizeRecord, device),
       SPAN_FIELDS(SynchronizeRecord), FIELD(SynchronizeRecord, stream),
       FIELD(SynchronizeRecord, event), FIELD(SynchronizeRecord, context),
       FIELD(SynchronizeRecord, target), FIELD(SynchronizeRecord, reserved)});
  facts["ObjectLifecycle"] = record<ObjectLifecycleRecord>(
      {FIELD(ObjectLifecycleRecord, header), FIELD(ObjectLifecycleRecord, device),
       SPAN_FIELDS(ObjectLifecycleRecord), FIELD(ObjectLifecycleRecord, handle),
       FIELD(ObjectLifecycleRecord, context), FIELD(ObjectLifecycleRecord, id),
       FIELD(ObjectLifecycleRecord, flags), FIELD(ObjectLifecycleRecord, priority),
       FIELD(ObjectLifecycleRecord, object), FIELD(ObjectLifecycleRecord, action),
       FIELD(ObjectLifecycleRecord, reserved)});
  facts["GpuActivity"] = record<GpuActivityRecord>(
      {FIELD(GpuActivityRecord, header), FIELD(GpuActivityRecord, device),
       FIELD(GpuActivityRecord, correlation_id), FIELD(GpuActivityRecord, start_ns),
       FIELD(GpuActivityRecord, end_ns), FIELD(GpuActivityRecord, stream),
       FIELD(GpuActivityRecord, kind), FIELD(GpuActivityRecord, source),
       FIELD(GpuActivityRecord, reserved), FIELD(GpuActivityRecord, graph_node)});
  facts["CallStack"] = record<CallStackRecord>(
      {FIELD(CallStackRecord, header), FIELD(CallStackRecord, point),
       FIELD(CallStackRecord, reserved), FIELD(CallStackRecord, correlation_id),
       FIELD(CallStackRecord, native_stack), FIELD(CallStackRecord, python_stack)});
  facts["CpuSample"] = record<CpuSampleRecord>(
      {FIELD(CpuSampleRecord, header), FIELD(CpuSampleRecord, flags), FIELD(CpuSampleRecord, reserved),
       FIELD(CpuSampleRecord, time_ns), FIELD(CpuSampleRecord, thread_cpu_ns),
       FIELD(CpuSampleRecord, native_stack), FIELD(CpuSampleRecord, python_stack),
       FIELD(CpuSampleRecord, periods)});
  facts["CpuSamplingInfo"] = record<CpuSamplingInfoRecord>(
      {FIELD(CpuSamplingInfoRecord, header), FIELD(CpuSamplingInfoRecord, hz),
       FIELD(CpuSamplingInfoRecord, mechanism), FIELD(CpuSamplingInfoRecord, state),
       FIELD(CpuSamplingInfoRecord, signal_number), FIELD(CpuSamplingInfoRecord, reserved),
       FIELD(CpuSamplingInfoRecord, reserved2), FIELD(CpuSamplingInfoRecord, time_ns)});
  facts["BlockingCall"] = record<BlockingCallRecord>(
      {FIELD(BlockingCallRecord, header), FIELD(BlockingCallRecord, object_kind),
       FIELD(BlockingCallRecord, reserved), FIELD(BlockingCallRecord, span), FIELD(BlockingCallRecord, object),
       FIELD(BlockingCallRecord, error), FIELD(BlockingCallRecord, reserved2)});
  facts["GpuMetricDef"] = record<GpuMetricDefRecord>(
      {FIELD(GpuMetricDefRecord, header), FIELD(GpuMetricDefRecord, metric), FIELD(GpuMetricDefRecord, device),
       FIELD(GpuMetricDefRecord, kind), FIELD(GpuMetricDefRecord, source), FIELD(GpuMetricDefRecord, link),
       FIELD(GpuMetricDefRecord, name_string), FIELD(GpuMetricDefRecord, unit_string),
       FIELD(GpuMetricDefRecord, unsupported_reason_string)});
  facts["GpuMetricSample"] = record<GpuMetricSampleRecord>(
      {FIELD(GpuMetricSampleRecord, header), FIELD(GpuMetricSampleRecord, metric),
       FIELD(GpuMetricSampleRecord, time_ns), FIELD(GpuMetricSampleRecord, value)});
  facts["NativeStackDef"] = record<NativeStackDefRecord>(
      {FIELD(NativeStackDefRecord, header), FIELD(NativeStackDefRecord, id),
       FIELD(NativeStackDefRecord, frame_count), FIELD(NativeStackDefRecord, flags)});
  facts["PythonFrame"] = StructFact{
      sizeof(PythonFrame), -1,
      {FIELD(PythonFrame, file_string), FIELD(PythonFrame, function_string),
       FIELD(PythonFrame, line), FIELD(PythonFrame, flags)}};
  facts["PythonStackDef"] = record<PythonStackDefRecord>(
      {FIELD(PythonStackDefRecord, header), FIELD(PythonStackDefRecord, id),
       FIELD(PythonStackDefRecord, frame_count), FIELD(PythonStackDefRecord, flags)});
  facts["ModuleDef"] = record<ModuleDefRecord>(
      {FIELD(ModuleDefRecord, header), FIELD(ModuleDefRecord, path_string),
       FIELD(ModuleDefRecord, load_bias), FIELD(ModuleDefRecord, start),
       FIELD(ModuleDefRecord, end), FIELD(ModuleDefRecord, flags),
       FIELD(ModuleDefRecord, build_id_bytes), FIELD(ModuleDefRecord, reserved)});
  facts["SymbolDef"] = record<SymbolDefRecord>(
      {FIELD(SymbolDefRecord, header), FIELD(SymbolDefRecord, function_string),
       FIELD(SymbolDefRecord, address), FIELD(SymbolDefRecord, file_string),
       FIELD(SymbolDefRecord, line), FIELD(SymbolDefRecord, inline_depth),
       FIELD(SymbolDefRecord, flags), FIELD(SymbolDefRecord, reserved)});
  facts["CollectiveComm"] = record<CollectiveCommRecord>(
      {FIELD(CollectiveCommRecord, header), FIELD(CollectiveCommRecord, device),
       SPAN_FIELDS(CollectiveCommRecord), FIELD(CollectiveCommRecord, comm),
       FIELD(CollectiveCommRecord, comm_id), FIELD(CollectiveCommRecord, parent_comm_id),
       FIELD(CollectiveCommRecord, rank), FIELD(CollectiveCommRecord, nranks),
       FIELD(CollectiveCommRecord, action), FIELD(CollectiveCommRecord, library), FIELD(CollectiveCommRecord, reserved)});
  facts["Collective"] = record<CollectiveRecord>(
      {FIELD(CollectiveRecord, header), FIELD(CollectiveRecord, device), SPAN_FIELDS(CollectiveRecord),
       FIELD(CollectiveRecord, comm), FIELD(CollectiveRecord, comm_id), FIELD(CollectiveRecord, sequence),
       FIELD(CollectiveRecord, count), FIELD(CollectiveRecord, bytes), FIELD(CollectiveRecord, stream),
       FIELD(CollectiveRecord, group_id), FIELD(CollectiveRecord, root), FIELD(CollectiveRecord, rank),
       FIELD(CollectiveRecord, nranks), FIELD(CollectiveRecord, op), FIELD(CollectiveRecord, datatype),
       FIELD(CollectiveRecord, reduction), FIELD(CollectiveRecord, group_depth)});
  facts["CollectiveGroup"] = record<CollectiveGroupRecord>(
      {FIELD(CollectiveGroupRecord, header), FIELD(CollectiveGroupRecord, device),
       SPAN_FIELDS(CollectiveGroupRecord), FIELD(CollectiveGroupRecord, group_id),
       FIELD(CollectiveGroupRecord, stream), FIELD(CollectiveGroupRecord, members),
       FIELD(CollectiveGroupRecord, reserved)});
  facts["NvtxDomainDef"] = record<NvtxDomainDefRecord>(
      {FIELD(NvtxDomainDefRecord, header), FIELD(NvtxDomainDefRecord, name_string), FIELD(NvtxDomainDefRecord, domain)});
  facts["NvtxNameDef"] = record<NvtxNameDefRecord>(
      {FIELD(NvtxNameDefRecord, header), FIELD(NvtxNameDefRecord, kind), FIELD(NvtxNameDefRecord, reserved),
       FIELD(NvtxNameDefRecord, domain), FIELD(NvtxNameDefRecord, handle), FIELD(NvtxNameDefRecord, name_string),
       FIELD(NvtxNameDefRecord, reserved2)});
  facts["NvtxEvent"] = record<NvtxEventRecord>(
      {FIELD(NvtxEventRecord, header), FIELD(NvtxEventRecord, type), FIELD(NvtxEventRecord, message_type),
       FIELD(NvtxEventRecord, payload_type), FIELD(NvtxEventRecord, flags), SPAN_FIELDS(NvtxEventRecord),
       FIELD(NvtxEventRecord, domain), FIELD(NvtxEventRecord, range_id), FIELD(NvtxEventRecord, payload),
       FIELD(NvtxEventRecord, message_handle), FIELD(NvtxEventRecord, category), FIELD(NvtxEventRecord, color)});
  facts["MemoryOperation"] = record<MemoryOperationRecord>(
      {FIELD(MemoryOperationRecord, header), FIELD(MemoryOperationRecord, device),
       SPAN_FIELDS(MemoryOperationRecord), FIELD(MemoryOperationRecord, address),
       FIELD(MemoryOperationRecord, bytes), FIELD(MemoryOperationRecord, stream),
       FIELD(MemoryOperationRecord, handle), FIELD(MemoryOperationRecord, context),
       FIELD(MemoryOperationRecord, pool_reserved_bytes),
       FIELD(MemoryOperationRecord, pitch_or_offset_bytes), FIELD(MemoryOperationRecord, flags),
       FIELD(MemoryOperationRecord, kind), FIELD(MemoryOperationRecord, action),
       FIELD(MemoryOperationRecord, reserved)});
  facts["MemoryInfo"] = record<MemoryInfoRecord>(
      {FIELD(MemoryInfoRecord, header), FIELD(MemoryInfoRecord, device),
       SPAN_FIELDS(MemoryInfoRecord), FIELD(MemoryInfoRecord, free_bytes),
       FIELD(MemoryInfoRecord, total_bytes)});
  facts["StreamCapture"] = record<StreamCaptureRecord>(
      {FIELD(StreamCaptureRecord, header), FIELD(StreamCaptureRecord, device), SPAN_FIELDS(StreamCaptureRecord),
       FIELD(StreamCaptureRecord, stream), FIELD(StreamCaptureRecord, context),
       FIELD(StreamCaptureRecord, capture_id), FIELD(StreamCaptureRecord, graph),
       FIELD(StreamCaptureRecord, action), FIELD(StreamCaptureRecord, mode),
       FIELD(StreamCaptureRecord, reserved)});
  facts["CapturedNode"] = record<CapturedNodeRecord>(
      {FIELD(CapturedNodeRecord, header), FIELD(CapturedNodeRecord, reserved),
       FIELD(CapturedNodeRecord, correlation_id), FIELD(CapturedNodeRecord, capture_id),
       FIELD(CapturedNodeRecord, graph), FIELD(CapturedNodeRecord, node)});
  facts["GraphNode"] = record<GraphNodeRecord>(
      {FIELD(GraphNodeRecord, header), FIELD(GraphNodeRecord, type), FIELD(GraphNodeRecord, flags),
       FIELD(GraphNodeRecord, dependency_count), FIELD(GraphNodeRecord, graph_exec),
       FIELD(GraphNodeRecord, graph), FIELD(GraphNodeRecord, node), FIELD(GraphNodeRecord, function),
       FIELD(GraphNodeRecord, grid), FIELD(GraphNodeRecord, block),
       FIELD(GraphNodeRecord, dynamic_shared_bytes), FIELD(GraphNodeRecord, device),
       FIELD(GraphNodeRecord, bytes), FIELD(GraphNodeRecord, address)});
  facts["GraphExec"] = record<GraphExecRecord>(
      {FIELD(GraphExecRecord, header), FIELD(GraphExecRecord, device), SPAN_FIELDS(GraphExecRecord),
       FIELD(GraphExecRecord, graph_exec), FIELD(GraphExecRecord, graph), FIELD(GraphExecRecord, stream),
       FIELD(GraphExecRecord, context), FIELD(GraphExecRecord, node_count), FIELD(GraphExecRecord, action),
       FIELD(GraphExecRecord, reserved)});
  facts["GraphLaunch"] = record<GraphLaunchRecord>(
      {FIELD(GraphLaunchRecord, header), FIELD(GraphLaunchRecord, device), SPAN_FIELDS(GraphLaunchRecord),
       FIELD(GraphLaunchRecord, graph_exec), FIELD(GraphLaunchRecord, stream),
       FIELD(GraphLaunchRecord, context)});
  return facts;
}

struct DocumentedRow {
  size_t offset;
  size_t bytes;
  std::string field;
};

struct DocumentedStruct {
  int kind = -1;
  size_t bytes = 0;
  std::vector<DocumentedRow> rows;
};

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(' ');
  const size_t end = text.find_last_not_of(' ');
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

std::map<std::string, DocumentedStruct> tables_from_readme(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  const std::regex heading(R"(^### (\w+) \((?:kind (\d+), )?(\d+) bytes(?:, embedded)?\)$)");
  const std::regex row(R"(^\| *(\d+) *\| *(\d+) *\| *([\w.]+) *\|.*$)");
  std::map<std::string, DocumentedStruct> tables;
  std::string line, current;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_match(line, match, heading)) {
      current = match[1];
      DocumentedStruct& table = tables[current];
      table.kind = match[2].matched ? std::stoi(match[2]) : -1;
      table.bytes = std::stoul(match[3]);
    } else if (line.rfind("## ", 0) == 0) {
      current.clear();
    } else if (!current.empty() && std::regex_match(line, match, row)) {
      tables[current].rows.push_back(
          DocumentedRow{std::stoul(match[1]), std::stoul(match[2]), trim(match[3])});
    }
  }
  return tables;
}

TEST(ReadmeTables, MatchTheStructsInRecordsH) {
  const auto documented = tables_from_readme(PROFLAUNCH_FORMATS_README);
  const auto code = facts_from_code();

  for (const auto& [name, fact] : code) {
    SCOPED_TRACE(name);
    auto found = documented.find(name);
    ASSERT_NE(found, documented.end()) << "README has no table for " << name;
    const DocumentedStruct& table = found->second;
    EXPECT_EQ(table.bytes, fact.bytes) << "size in the heading";
    EXPECT_EQ(table.kind, fact.kind) << "kind in the heading";
    ASSERT_FALSE(table.rows.empty());

    size_t expected_offset = 0;
    for (const DocumentedRow& row : table.rows) {
      SCOPED_TRACE(row.field);
      EXPECT_EQ(row.offset, expected_offset) << "rows must be contiguous";
      expected_offset = row.offset + row.bytes;
      auto field = fact.fields.find(row.field);
      ASSERT_NE(field, fact.fields.end()) << "README field not in the struct (or not in this test)";
      EXPECT_EQ(row.offset, field->second.offset);
      EXPECT_EQ(row.bytes, field->second.bytes);
    }
    EXPECT_EQ(expected_offset, fact.bytes) << "rows must cover the whole struct";
    EXPECT_EQ(table.rows.size(), fact.fields.size()) << "every struct field documented once";
  }
}

TEST(ReadmeTables, EveryKnownRecordKindIsDocumented) {
  const auto documented = tables_from_readme(PROFLAUNCH_FORMATS_README);
  for (RecordKind kind : kKnownRecordKinds) {
    const std::string name(*record_kind_name(static_cast<uint16_t>(kind)));
    auto found = documented.find(name);
    ASSERT_NE(found, documented.end()) << name;
    EXPECT_EQ(found->second.kind, static_cast<int>(kind)) << name;
    EXPECT_EQ(found->second.bytes, *fixed_record_bytes(static_cast<uint16_t>(kind))) << name;
  }
}

}  // namespace
}  // namespace proflaunch::format
