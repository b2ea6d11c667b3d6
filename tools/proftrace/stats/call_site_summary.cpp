// call-sites: the call sites (merged native and Python stacks) that launched
// the most GPU time - kernels, copies and memsets - in the manner of a
// profiler's "top call paths" view. A CallStack names an operation's stacks
// by its correlation id; the operation's GpuActivity, joined by the same id
// in a bounded window, gives its GPU time. State grows with the number of
// distinct stacks, not with the number of operations.
//
// alloc-sites: the same table by bytes allocated. Each successful allocation
// (device, pool, managed, pinned or registered host, VMM physical memory; not
// address reservations or mappings, which would count the memory again) is
// joined to its CallStack (point kMemory) by correlation id.
#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>

#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

constexpr size_t kJoinWindow = size_t{1} << 17;
constexpr size_t kRowsShown = 20;

struct StackKey {
  uint64_t section;
  uint32_t native;
  uint32_t python;
  bool operator<(const StackKey& other) const {
    return std::tie(section, native, python) < std::tie(other.section, other.native, other.python);
  }
};

// Sums a quantity per call site and renders the top rows.
class CallSiteTable {
 public:
  void add(const StackKey& key, uint64_t amount) {
    Total& total = by_stack_[key];
    total.amount += amount;
    ++total.count;
  }

  Table render(const TraceModel& model, const std::string& title, const std::string& amount_column,
               const std::string& count_column) const {
    // Identical stacks of different processes (ranks, workers) are one site.
    struct Site {
      std::string call_site;
      uint64_t amount = 0;
      uint64_t count = 0;
    };
    StackFormatter formatter;
    std::map<std::string, Site> by_text;
    uint64_t grand_total = 0;
    for (const auto& [key, total] : by_stack_) {
      const SectionModel* section = model.find(key.section);
      if (section == nullptr) continue;
      std::string text;
      for (const std::string& frame : formatter.frames(*section, key.native, key.python))
        text += (text.empty() ? "" : " > ") + frame;
      if (text.empty()) continue;
      Site& site = by_text[text];
      if (site.call_site.empty()) site.call_site = formatter.call_site(*section, key.native, key.python);
      site.amount += total.amount;
      site.count += total.count;
      grand_total += total.amount;
    }
    std::vector<std::pair<std::string, Site>> sorted(by_text.begin(), by_text.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.amount > b.second.amount; });
    Table table;
    table.title = title;
    table.columns = {"Share (%)", amount_column, count_column, "Call site", "Stack (root > leaf)"};
    for (size_t i = 0; i < sorted.size() && i < kRowsShown; ++i) {
      const Site& site = sorted[i].second;
      table.rows.push_back({format_percent(grand_total ? double(site.amount) / double(grand_total) : 0),
                            std::to_string(site.amount), std::to_string(site.count), site.call_site,
                            sorted[i].first});
    }
    if (sorted.size() > kRowsShown)
      table.notes.push_back(std::to_string(sorted.size()) + " call sites; the top " +
                            std::to_string(kRowsShown) + " are shown");
    return table;
  }

  bool empty() const { return by_stack_.empty(); }

 private:
  struct Total {
    uint64_t amount = 0;
    uint64_t count = 0;
  };
  std::map<StackKey, Total> by_stack_;
};

struct Correlation {
  uint64_t section;
  uint64_t id;
  bool operator==(const Correlation& other) const { return section == other.section && id == other.id; }
};
struct CorrelationHash {
  size_t operator()(const Correlation& c) const { return std::hash<uint64_t>()(c.section * 31 + c.id); }
};

class GpuTimeByCallSite final : public StatsSection {
 public:
  std::string name() const override { return "call-sites"; }

  void on_record(const SectionModel& section, const RecordView& record) override {
    if (record.record_kind() == RecordKind::kCallStack) {
      const auto stack = record.as<CallStackRecord>();
      if (stack.point != static_cast<uint8_t>(StackPoint::kLaunch)) return;
      const Correlation key{section.section_id, stack.correlation_id};
      const StackKey site{section.section_id, stack.native_stack, stack.python_stack};
      if (auto it = early_activities_.find(key); it != early_activities_.end()) {
        table_.add(site, it->second);
        early_activities_.erase(it);
        return;
      }
      remember(stacks_, key, site);
    } else if (record.record_kind() == RecordKind::kGpuActivity) {
      const auto activity = record.as<GpuActivityRecord>();
      const uint64_t duration = activity.end_ns > activity.start_ns ? activity.end_ns - activity.start_ns : 0;
      const Correlation key{section.section_id, activity.correlation_id};
      if (auto it = stacks_.find(key); it != stacks_.end()) {
        table_.add(it->second, duration);
        stacks_.erase(it);
      } else {
        remember(early_activities_, key, duration);
      }
    }
  }

  Table finish(const TraceModel& model) override {
    if (table_.empty()) return Table{};
    Table table = table_.render(model, "Call sites: GPU time they launched (kernels, copies, memsets)",
                                "GPU Time (ns)", "Operations");
    if (!stacks_.empty() || unmatched_ > 0)
      table.notes.push_back(std::to_string(stacks_.size() + unmatched_) +
                            " operations with a stack but no GPU time (GPU timing off, or lost) are not counted");
    return table;
  }

 private:
  template <typename Map, typename Value>
  void remember(Map& map, const Correlation& key, const Value& value) {
    map[key] = value;
    order_.push_back(key);
    while (order_.size() > kJoinWindow) {
      const Correlation old = order_.front();
      order_.pop_front();
      unmatched_ += stacks_.erase(old) + early_activities_.erase(old);
    }
  }

  CallSiteTable table_;
  std::unordered_map<Correlation, StackKey, CorrelationHash> stacks_;
  std::unordered_map<Correlation, uint64_t, CorrelationHash> early_activities_;
  std::deque<Correlation> order_;
  uint64_t unmatched_ = 0;
};

bool allocates_memory(const MemoryOperationRecord& record) {
  if (record.action != static_cast<uint8_t>(MemoryAction::kAcquire) || record.span.result != 0) return false;
  const auto kind = static_cast<AllocationKind>(record.kind);
  return kind != AllocationKind::kMapping && kind != AllocationKind::kAddressRange;
}

class BytesAllocatedByCallSite final : public StatsSection {
 public:
  std::string name() const override { return "alloc-sites"; }

  void on_record(const SectionModel& section, const RecordView& record) override {
    if (record.record_kind() == RecordKind::kMemoryOperation) {
      const auto operation = record.as<MemoryOperationRecord>();
      if (!allocates_memory(operation)) return;
      if (operation.span.flags & kApiCaptured) return;  // allocated when its graph runs
      if (operation.span.flags & kApiCarried) return;   // allocated before the capture window
      const Correlation key{section.section_id, operation.span.correlation_id};
      bytes_[key] = operation.bytes;
      order_.push_back(key);
      while (order_.size() > kJoinWindow) {
        unmatched_ += bytes_.erase(order_.front());
        order_.pop_front();
      }
    } else if (record.record_kind() == RecordKind::kCallStack) {
      const auto stack = record.as<CallStackRecord>();
      if (stack.point != static_cast<uint8_t>(StackPoint::kMemory)) return;
      // The stack follows its allocation on the same thread: it is known by now.
      auto it = bytes_.find(Correlation{section.section_id, stack.correlation_id});
      if (it == bytes_.end()) return;
      table_.add(StackKey{section.section_id, stack.native_stack, stack.python_stack}, it->second);
      bytes_.erase(it);
    }
  }

  Table finish(const TraceModel& model) override {
    if (table_.empty()) return Table{};
    Table table = table_.render(model, "Call sites: bytes allocated (device, pool, managed, pinned host, VMM physical)",
                                "Bytes", "Allocations");
    if (!bytes_.empty() || unmatched_ > 0)
      table.notes.push_back(std::to_string(bytes_.size() + unmatched_) +
                            " allocations without a recorded stack are not counted");
    return table;
  }

 private:
  CallSiteTable table_;
  std::unordered_map<Correlation, uint64_t, CorrelationHash> bytes_;
  std::deque<Correlation> order_;  // may name allocations already matched
  uint64_t unmatched_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_call_site_summary() { return std::make_unique<GpuTimeByCallSite>(); }
std::unique_ptr<StatsSection> make_alloc_site_summary() { return std::make_unique<BytesAllocatedByCallSite>(); }

}  // namespace proflaunch::tools::stats
