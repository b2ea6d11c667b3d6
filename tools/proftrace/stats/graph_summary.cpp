// graphs: CUDA graphs - per executable graph, its launches and their GPU time
// (one kGraph GpuActivity per launch, joined to its GraphLaunch by
// correlation id; or, timed node by node by CUPTI, one per node, the launch
// lasting from its first node's start to its last node's end), its nodes
// and kernels (GraphNode records written at instantiation), and the call
// site that instantiated it (the CallStack of the instantiation). Under the table: captures, captured calls, and nodes
// by type. State grows with the number of executable graphs, not launches.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_map>

#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

constexpr size_t kJoinWindow = size_t{1} << 17;

struct ExecKey {
  uint64_t section;
  uint64_t exec;
  bool operator<(const ExecKey& other) const {
    return section != other.section ? section < other.section : exec < other.exec;
  }
};

struct CorrelationKey {
  uint64_t section;
  uint64_t correlation;
  bool operator==(const CorrelationKey& other) const {
    return section == other.section && correlation == other.correlation;
  }
};
struct CorrelationHash {
  size_t operator()(const CorrelationKey& key) const {
    return std::hash<uint64_t>()(key.section * 0x9E3779B97F4A7C15ull ^ key.correlation);
  }
};

struct ExecSummary {
  uint32_t nodes = 0;
  uint32_t kernels = 0;
  uint64_t launches = 0;
  uint64_t timed_launches = 0;
  uint64_t gpu_ns = 0;
  uint32_t native_stack = 0;  // the instantiation's call site
  uint32_t python_stack = 0;
};

class GraphSummary final : public StatsSection {
 public:
  std::string name() const override { return "graphs"; }

  void on_record(const SectionModel& section, const RecordView& record) override {
    switch (record.record_kind()) {
      case RecordKind::kGraphNode: {
        const auto node = record.as<GraphNodeRecord>();
        ExecSummary& exec = execs_[ExecKey{section.section_id, node.graph_exec}];
        ++exec.nodes;
        if (node.type == static_cast<uint8_t>(GraphNodeType::kKernel)) ++exec.kernels;
        ++nodes_by_type_[graph_node_type_name(node.type)];
        break;
      }
      case RecordKind::kGraphExec: {
        const auto exec = record.as<GraphExecRecord>();
        if (exec.action == static_cast<uint8_t>(GraphExecAction::kInstantiate) && exec.span.result == 0) {
          execs_[ExecKey{section.section_id, exec.graph_exec}];
          instantiations_[CorrelationKey{section.section_id, exec.span.correlation_id}] = exec.graph_exec;
          ++instantiated_;
        }
        break;
      }
      case RecordKind::kCallStack: {
        const auto stack = record.as<CallStackRecord>();
        auto found = instantiations_.find(CorrelationKey{section.section_id, stack.correlation_id});
        if (found == instantiations_.end()) break;
        ExecSummary& exec = execs_[ExecKey{section.section_id, found->second}];
        exec.native_stack = stack.native_stack;
        exec.python_stack = stack.python_stack;
        instantiations_.erase(found);
        break;
      }
      case RecordKind::kGraphLaunch: {
        const auto launch = record.as<GraphLaunchRecord>();
        if (launch.span.result != 0) break;
        if (launch.span.flags & kApiCaptured) {
          ++captured_calls_;
          break;
        }
        ExecSummary& exec = execs_[ExecKey{section.section_id, launch.graph_exec}];
        ++exec.launches;
        const CorrelationKey key{section.section_id, launch.span.correlation_id};
        if (auto early = early_activities_.find(key); early != early_activities_.end()) {
          ++exec.timed_launches;
          exec.gpu_ns += early->second;
          early_activities_.erase(early);
        } else {
          remember(launches_, key, launch.graph_exec);
        }
        break;
      }
      case RecordKind::kGpuActivity: {
        const auto activity = record.as<GpuActivityRecord>();
        if (activity.graph_node != 0) {
          // One node of a launch timed node by node (CUPTI): the launch lasts
          // from its first node's start to its last node's end.
          const CorrelationKey key{section.section_id, activity.correlation_id};
          auto [span, added] = node_spans_.try_emplace(key, NodeSpan{activity.start_ns, activity.end_ns});
          if (added) {
            order_.push_back(key);
            evict();
          } else {
            span->second.start_ns = std::min(span->second.start_ns, activity.start_ns);
            span->second.end_ns = std::max(span->second.end_ns, activity.end_ns);
          }
          break;
        }
        if (activity.kind != static_cast<uint8_t>(GpuActivityKind::kGraph)) break;
        const uint64_t duration = activity.end_ns > activity.start_ns ? activity.end_ns - activity.start_ns : 0;
        const CorrelationKey key{section.section_id, activity.correlation_id};
        if (auto launch = launches_.find(key); launch != launches_.end()) {
          ExecSummary& exec = execs_[ExecKey{section.section_id, launch->second}];
          ++exec.timed_launches;
          exec.gpu_ns += duration;
          launches_.erase(launch);
        } else {
          remember(early_activities_, key, duration);
        }
        break;
      }
      case RecordKind::kStreamCapture: {
        const auto capture = record.as<StreamCaptureRecord>();
        if (capture.action == static_cast<uint8_t>(CaptureAction::kEnd)) {
          if (capture.span.result == 0) ++captures_;
          else ++failed_captures_;
        }
        break;
      }
      case RecordKind::kKernelLaunch:
      case RecordKind::kMemoryCopy:
      case RecordKind::kMemorySet: {
        ApiSpan span;
        std::memcpy(&span, record.data + kApiSpanOffset, sizeof span);
        if (span.flags & kApiCaptured) ++captured_calls_;
        break;
      }
      default:
        break;
    }
  }

  Table finish(const TraceModel& model) override {
    for (auto launch = launches_.begin(); launch != launches_.end();)
      launch = credit_node_span(launch->first) ? launches_.erase(launch) : std::next(launch);
    Table table;
    table.title = "CUDA graphs: GPU time per executable graph";
    table.columns = {"GPU Time (%)", "Total GPU Time (ns)", "Launches", "Avg (ns)", "Nodes", "Kernels",
                     "Graph exec", "Instantiated at"};
    uint64_t grand_total = 0;
    for (const auto& [key, exec] : execs_) grand_total += exec.gpu_ns;
    std::vector<std::pair<ExecKey, ExecSummary>> sorted(execs_.begin(), execs_.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.gpu_ns != b.second.gpu_ns ? a.second.gpu_ns > b.second.gpu_ns
                                                : a.second.launches > b.second.launches;
    });
    StackFormatter formatter;
    for (const auto& [key, exec] : sorted) {
      std::string site;
      if (const SectionModel* section = model.find(key.section); section != nullptr)
        site = formatter.call_site(*section, exec.native_stack, exec.python_stack);
      table.rows.push_back({format_percent(grand_total ? double(exec.gpu_ns) / double(grand_total) : 0),
                            format_ns(exec.gpu_ns), std::to_string(exec.launches),
                            format_ns(exec.timed_launches ? exec.gpu_ns / exec.timed_launches : 0),
                            std::to_string(exec.nodes), std::to_string(exec.kernels), hex(key.exec),
                            site.empty() ? "-" : site});
    }
    if (execs_.empty() && captures_ == 0 && failed_captures_ == 0 && captured_calls_ == 0) return table;
    std::string types;
    for (const auto& [type, count] : nodes_by_type_)
      types += (types.empty() ? "" : ", ") + type + " " + std::to_string(count);
    table.notes.push_back(std::to_string(instantiated_) + " instantiations; nodes by type: " +
                          (types.empty() ? "none" : types));
    table.notes.push_back(std::to_string(captures_) + " stream captures ended with a graph, " +
                          std::to_string(failed_captures_) + " failed; " + std::to_string(captured_calls_) +
                          " calls captured into graphs (their work runs when the graph is launched)");
    uint64_t untimed = launches_.size() + unmatched_;
    if (untimed != 0)
      table.notes.push_back(std::to_string(untimed) + " launches without GPU time (GPU timing off, or lost)");
    return table;
  }

 private:
  template <typename Map, typename Value>
  void remember(Map& map, const CorrelationKey& key, const Value& value) {
    map[key] = value;
    order_.push_back(key);
    evict();
  }

  // Beyond the join window the oldest launch is settled: timed by its nodes
  // when they came, else counted as untimed.
  void evict() {
    while (order_.size() > kJoinWindow) {
      const CorrelationKey old = order_.front();
      order_.pop_front();
      if (launches_.count(old) != 0 && credit_node_span(old)) {
        launches_.erase(old);
        continue;
      }
      unmatched_ += launches_.erase(old) + early_activities_.erase(old);
      node_spans_.erase(old);
    }
  }

  // The launch `key` (in launches_) was timed node by node: its exec gets
  // the span of its nodes. False when no node of it was timed.
  bool credit_node_span(const CorrelationKey& key) {
    auto span = node_spans_.find(key);
    auto launch = launches_.find(key);
    if (span == node_spans_.end() || launch == launches_.end()) return false;
    ExecSummary& exec = execs_[ExecKey{key.section, launch->second}];
    ++exec.timed_launches;
    exec.gpu_ns += span->second.end_ns > span->second.start_ns ? span->second.end_ns - span->second.start_ns : 0;
    node_spans_.erase(span);
    return true;
  }

  struct NodeSpan {
    uint64_t start_ns;
    uint64_t end_ns;
  };

  std::map<ExecKey, ExecSummary> execs_;
  std::map<std::string, uint64_t> nodes_by_type_;
  std::unordered_map<CorrelationKey, uint64_t, CorrelationHash> instantiations_;  // -> exec, until its stack
  std::unordered_map<CorrelationKey, uint64_t, CorrelationHash> launches_;        // -> exec
  std::unordered_map<CorrelationKey, uint64_t, CorrelationHash> early_activities_;  // -> GPU ns
  std::unordered_map<CorrelationKey, NodeSpan, CorrelationHash> node_spans_;  // launches timed node by node
  std::deque<CorrelationKey> order_;
  uint64_t unmatched_ = 0;
  uint64_t instantiated_ = 0;
  uint64_t captures_ = 0;
  uint64_t failed_captures_ = 0;
  uint64_t captured_calls_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_graph_summary() { return std::make_unique<GraphSummary>(); }

}  // namespace proflaunch::tools::stats
