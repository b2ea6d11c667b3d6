// graphs: CUDA graphs - per executable graph, its launches and their GPU time
// (one kGraph GpuActivity per launch, which the pass joins to its launch;
// or, timed node by node by CUPTI, one per node, the launch lasting from its
// first node's start to its last node's end), its nodes and kernels
// (GraphNode records written at instantiation), and the call site that
// instantiated it (the instantiation's stack). Under the table: captures,
// captured calls, and nodes by type. State grows with the number of
// executable graphs, not launches.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

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

  void on_graph_node(const interpret::Event<GraphNodeRecord>& e) override {
    const GraphNodeRecord& node = e.record;
    ExecSummary& exec = execs_[ExecKey{e.section->id, node.graph_exec}];
    ++exec.nodes;
    if (node.type == static_cast<uint8_t>(GraphNodeType::kKernel)) ++exec.kernels;
    ++nodes_by_type_[graph_node_type_name(node.type)];
  }

  void on_graph_exec(const interpret::Event<GraphExecRecord>& e) override {
    const GraphExecRecord& record = e.record;
    if (record.action != static_cast<uint8_t>(GraphExecAction::kInstantiate) || record.span.result != 0) return;
    ExecSummary& exec = execs_[ExecKey{e.section->id, record.graph_exec}];
    if (!e.stacks.empty()) {
      exec.native_stack = e.stacks.native;
      exec.python_stack = e.stacks.python;
    }
    ++instantiated_;
  }

  void on_stream_capture(const interpret::Event<StreamCaptureRecord>& e) override {
    if (e.record.action != static_cast<uint8_t>(CaptureAction::kEnd)) return;
    if (e.record.span.result == 0) ++captures_;
    else ++failed_captures_;
  }

  void on_operation_read(const interpret::Operation& op) override {
    if (op.kind == interpret::OperationKind::kGraphLaunch && op.span().result != 0) return;
    if (op.captured()) ++captured_calls_;
  }

  // A graph launch with its GPU work: one kGraph activity (timed by events),
  // or its nodes (timed node by node by CUPTI: the launch lasts from its
  // first node's start to its last node's end, known once its nodes are done).
  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    if (op.kind != interpret::OperationKind::kGraphLaunch || op.span().result != 0 || op.captured()) return;
    ExecSummary& exec = execs_[ExecKey{op.section->id, op.graph_launch.graph_exec}];
    ++exec.launches;
    if (gpu == nullptr) {
      ++unmatched_;
    } else if (gpu->activity.graph_node != 0) {
      node_spans_[CorrelationKey{op.section->id, op.span().correlation_id}] =
          NodeSpan{gpu->activity.start_ns, gpu->activity.end_ns};
    } else if (gpu->activity.kind == static_cast<uint8_t>(GpuActivityKind::kGraph)) {
      ++exec.timed_launches;
      exec.gpu_ns += gpu->duration_ns();
    } else {
      ++unmatched_;
    }
  }

  void on_more_gpu_work(const interpret::Operation& op, const interpret::GpuWork& gpu) override {
    auto span = node_spans_.find(CorrelationKey{op.section->id, op.span().correlation_id});
    if (span == node_spans_.end()) return;
    span->second.start_ns = std::min(span->second.start_ns, gpu.activity.start_ns);
    span->second.end_ns = std::max(span->second.end_ns, gpu.activity.end_ns);
  }

  void on_nodes_done(const interpret::Operation& op) override {
    auto span = node_spans_.find(CorrelationKey{op.section->id, op.span().correlation_id});
    if (span == node_spans_.end()) return;
    ExecSummary& exec = execs_[ExecKey{op.section->id, op.graph_launch.graph_exec}];
    ++exec.timed_launches;
    exec.gpu_ns += span->second.end_ns > span->second.start_ns ? span->second.end_ns - span->second.start_ns : 0;
    node_spans_.erase(span);
  }

  Table finish(const TraceModel& model) override {
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
    const uint64_t untimed = unmatched_;
    if (untimed != 0)
      table.notes.push_back(std::to_string(untimed) + " launches without GPU time (GPU timing off, or lost)");
    return table;
  }

 private:
  struct NodeSpan {
    uint64_t start_ns;
    uint64_t end_ns;
  };

  std::map<ExecKey, ExecSummary> execs_;
  std::map<std::string, uint64_t> nodes_by_type_;
  // Launches timed node by node: their nodes' span so far, until their nodes are done.
  std::unordered_map<CorrelationKey, NodeSpan, CorrelationHash> node_spans_;
  uint64_t unmatched_ = 0;
  uint64_t instantiated_ = 0;
  uint64_t captures_ = 0;
  uint64_t failed_captures_ = 0;
  uint64_t captured_calls_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_graph_summary() { return std::make_unique<GraphSummary>(); }

}  // namespace proflaunch::tools::stats
