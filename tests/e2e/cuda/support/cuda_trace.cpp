#include "tests/e2e/cuda/support/cuda_trace.h"

#include <cstring>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unordered_map>

namespace proflaunch::e2e {
namespace {

using namespace format;

class Collector : public RecordVisitor {
 public:
  explicit Collector(std::map<uint64_t, ProcessImage>& images) : images_(images) {}

  void on_record(const RecordView& record) override {
    ProcessImage& image = images_[record.section_id];
    image.section_id = record.section_id;
    if (has_api_span(record.kind) && record.bytes >= kApiSpanOffset + sizeof(ApiSpan)) {
      SpanRecord span;
      span.kind = record.record_kind();
      span.tid = record.tid;
      std::memcpy(&span.span, record.data + kApiSpanOffset, sizeof span.span);
      image.spans.push_back(span);
    }
    switch (record.record_kind()) {
      case RecordKind::kProcessInfo: image.info = record.as<ProcessInfoRecord>(); break;
      case RecordKind::kStringDef:
        image.strings[record.as<StringDefRecord>().id] = std::string(record.tail<StringDefRecord>());
        break;
      case RecordKind::kApiDef: {
        const auto api = record.as<ApiDefRecord>();
        image.apis[api.api] = api;
        break;
      }
      case RecordKind::kFunctionDef: {
        const auto function = record.as<FunctionDefRecord>();
        image.functions[function.handle].push_back(function);
        break;
      }
      case RecordKind::kThreadInfo: {
        const auto thread = record.as<ThreadInfoRecord>();
        image.thread_infos[thread.tid].push_back(thread);
        break;
      }
      case RecordKind::kDeviceInfo: {
        const auto device = record.as<DeviceInfoRecord>();
        image.devices[device.device] = device;
        break;
      }
      case RecordKind::kSectionEnd: image.end = record.as<SectionEndRecord>(); break;
      case RecordKind::kThreadBatch: {
        const uint32_t tid = record.as<ThreadBatchRecord>().tid;
        if (std::find(image.event_tids.begin(), image.event_tids.end(), tid) == image.event_tids.end())
          image.event_tids.push_back(tid);
        break;
      }
      case RecordKind::kLost: image.lost.push_back(record.as<LostRecord>()); break;
      case RecordKind::kKernelLaunch: {
        Operation op;
        op.kind = OperationKind::kLaunch;
        op.launch = record.as<KernelLaunchRecord>();
        op.span = op.launch.span;
        op.device = op.launch.device;
        op.stream = op.launch.stream;
        add(image, record.tid, std::move(op));
        break;
      }
      case RecordKind::kMemoryCopy: {
        Operation op;
        op.kind = OperationKind::kCopy;
        op.copy = record.as<MemoryCopyRecord>();
        op.span = op.copy.span;
        op.device = op.copy.device;
        op.stream = op.copy.stream;
        op.bytes = op.copy.bytes;
        add(image, record.tid, std::move(op));
        break;
      }
      case RecordKind::kMemorySet: {
        Operation op;
        op.kind = OperationKind::kSet;
        op.set = record.as<MemorySetRecord>();
        op.span = op.set.span;
        op.device = op.set.device;
        op.stream = op.set.stream;
        op.bytes = op.set.bytes;
        add(image, record.tid, std::move(op));
        break;
      }
      case RecordKind::kApiCall: {
        HostCall call = host_call(RecordKind::kApiCall, record.tid);
        call.span = record.as<ApiCallRecord>().span;
        image.calls.push_back(call);
        break;
      }
      case RecordKind::kSynchronize: {
        HostCall call = host_call(RecordKind::kSynchronize, record.tid);
        call.sync = record.as<SynchronizeRecord>();
        call.span = call.sync.span;
        image.calls.push_back(call);
        break;
      }
      case RecordKind::kObjectLifecycle: {
        HostCall call = host_call(RecordKind::kObjectLifecycle, record.tid);
        call.lifecycle = record.as<ObjectLifecycleRecord>();
        call.span = call.lifecycle.span;
        image.calls.push_back(call);
        break;
      }
      case RecordKind::kGpuActivity: image.gpu_activities.push_back(record.as<GpuActivityRecord>()); break;
      case RecordKind::kCaptureWindow: image.windows.push_back(record.as<CaptureWindowRecord>()); break;
      case RecordKind::kMemoryOperation: image.memory.push_back(record.as<MemoryOperationRecord>()); break;
      case RecordKind::kUnattributedGpuWork:
        image.unattributed.push_back(record.as<UnattributedGpuWorkRecord>());
        break;
      case RecordKind::kApiCount: {
        const auto counted = record.as<ApiCountRecord>();
        image.raw_counts.push_back({record.tid, counted.api, counted.count, counted.first_ns, counted.last_ns, ""});
        break;
      }
      default: break;
    }
  }

 private:
  static HostCall host_call(RecordKind kind, uint32_t tid) {
    HostCall call;
    call.kind = kind;
    call.tid = tid;
    return call;
  }

  static void add(ProcessImage& image, uint32_t tid, Operation op) {
    op.tid = tid;
    image.operations.push_back(std::move(op));
  }

  std::map<uint64_t, ProcessImage>& images_;
};

std::string api_name(const ProcessImage& image, uint16_t api) {
  const auto found = image.apis.find(api);
  if (found == image.apis.end()) return "api#" + std::to_string(api);
  return image.string(found->second.name_string);
}

// The definition of `handle` in force when the call ended: a runtime launch
// starts (its span begins) before the driver hook names the function, so the
// end of the call is the moment the name is known by.
std::string kernel_name(const ProcessImage& image, uint64_t handle, uint64_t end_ns) {
  const auto found = image.functions.find(handle);
  if (found == image.functions.end() || found->second.empty()) return "";
  const FunctionDefRecord* chosen = &found->second.front();
  for (const auto& def : found->second)
    if (def.since_ns <= end_ns && def.since_ns >= chosen->since_ns) chosen = &def;
  return image.string(chosen->name_string);
}

void resolve(ProcessImage& image) {
  std::unordered_map<uint64_t, Operation*> by_correlation;
  for (Operation& op : image.operations) {
    op.api = api_name(image, op.span.api);
    if (op.kind == OperationKind::kLaunch) op.kernel = kernel_name(image, op.launch.function, op.span.end_ns);
    by_correlation[op.span.correlation_id] = &op;
  }
  for (HostCall& call : image.calls) call.api = api_name(image, call.span.api);
  for (SpanRecord& span : image.spans) span.api = api_name(image, span.span.api);
  for (ProcessImage::RawCount& count : image.raw_counts) {
    const std::string name = api_name(image, count.api);
    count.name = name;
    image.counted_calls[name] += count.count;
    image.counted_calls_by_thread[{count.tid, name}] += count.count;
  }
  for (const GpuActivityRecord& activity : image.gpu_activities) {
    const auto found = by_correlation.find(activity.correlation_id);
    if (found != by_correlation.end()) found->second->gpu.push_back(activity);
  }
}

}  // namespace

std::string ProcessImage::string(uint32_t id) const {
  const auto found = strings.find(id);
  return found == strings.end() ? std::string() : found->second;
}

std::string ProcessImage::command_line() const {
  if (!info) return "";
  std::string text = string(info->command_line_string);
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

std::string ProcessImage::thread_name(uint32_t tid) const {
  const auto found = thread_infos.find(tid);
  if (found == thread_infos.end() || found->second.empty()) return "";
  const ThreadInfoRecord* latest = &found->second.front();
  for (const auto& info : found->second)
    if (info.since_ns >= latest->since_ns) latest = &info;
  return string(latest->name_string);
}

namespace {
std::vector<const Operation*> of_kind(const std::vector<Operation>& operations, OperationKind kind) {
  std::vector<const Operation*> found;
  for (const Operation& op : operations)
    if (op.kind == kind) found.push_back(&op);
  return found;
}
}  // namespace

std::vector<const Operation*> ProcessImage::launches() const { return of_kind(operations, OperationKind::kLaunch); }
std::vector<const Operation*> ProcessImage::copies() const { return of_kind(operations, OperationKind::kCopy); }
std::vector<const Operation*> ProcessImage::sets() const { return of_kind(operations, OperationKind::kSet); }

std::vector<const HostCall*> ProcessImage::syncs() const {
  std::vector<const HostCall*> found;
  for (const HostCall& call : calls)
    if (call.kind == RecordKind::kSynchronize) found.push_back(&call);
  return found;
}

std::map<std::string, int> ProcessImage::launches_by_kernel() const {
  std::map<std::string, int> counts;
  for (const Operation* op : launches()) ++counts[op->kernel];
  return counts;
}

int ProcessImage::launch_count(const std::string& fragment) const {
  int count = 0;
  for (const Operation* op : launches())
    if (op->kernel.find(fragment) != std::string::npos) ++count;
  return count;
}

std::vector<const ProcessImage*> CudaTrace::images_of(uint32_t pid) const {
  std::vector<const ProcessImage*> found;
  for (const ProcessImage& image : images)
    if (image.pid() == pid) found.push_back(&image);
  return found;
}

const ProcessImage* CudaTrace::find_section(uint64_t section_id) const {
  for (const ProcessImage& image : images)
    if (image.section_id == section_id) return &image;
  return nullptr;
}

size_t CudaTrace::operation_count() const {
  size_t count = 0;
  for (const ProcessImage& image : images) count += image.operations.size();
  return count;
}

CudaTrace load_cuda_trace(const std::string& path, std::string* error) {
  CudaTrace trace;
  auto reader = TraceReader::open_file(path, error);
  if (!reader) return trace;
  std::map<uint64_t, ProcessImage> images;
  Collector collector(images);
  trace.report = reader->read(collector);
  for (auto& [id, image] : images) {
    resolve(image);
    trace.images.push_back(std::move(image));
  }
  std::stable_sort(trace.images.begin(), trace.images.end(), [](const auto& a, const auto& b) {
    const uint64_t a_ns = a.info ? a.info->monotonic_ns : 0;
    const uint64_t b_ns = b.info ? b.info->monotonic_ns : 0;
    return a_ns < b_ns;
  });
  return trace;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : mangled;
}

}  // namespace proflaunch::e2e
