// The bounded join of GPU activity to its launch, on its own.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tools/proftrace/interpret/gpu_join.h"

namespace proflaunch::tools::interpret {
namespace {

using namespace proflaunch::format;

struct RecordingSink : JoinSink {
  void joined(const Operation& op, const GpuWork& activity) override {
    EXPECT_EQ(op.span().correlation_id, activity.activity.correlation_id);
    EXPECT_EQ(op.section, activity.section);
    pairs.push_back(op.span().correlation_id);
  }
  void operation_alone(const Operation& op) override { lone_operations.push_back(op.span().correlation_id); }
  void activity_alone(const GpuWork& a) override { lone_activities.push_back(a.activity.correlation_id); }
  void more_node_work(const Operation& op, const GpuWork& a) override {
    EXPECT_EQ(op.span().correlation_id, a.activity.correlation_id);
    more_nodes.push_back(a.activity.graph_node);
  }
  void nodes_done(const Operation& op) override { done.push_back(op.span().correlation_id); }
  std::vector<uint64_t> pairs, lone_operations, lone_activities, more_nodes, done;
};

Operation operation(Section* section, uint64_t id) {
  Operation op{};
  op.section = section;
  op.tid = 1;
  op.kind = OperationKind::kKernel;
  op.launch = KernelLaunchRecord{};
  op.launch.span.correlation_id = id;
  return op;
}

GpuWork device_activity(Section* section, uint64_t id) {
  GpuWork a{section, 2, GpuActivityRecord{}, nullptr};
  a.activity.correlation_id = id;
  return a;
}

TEST(CorrelationJoin, JoinsEitherOrderWithinASection) {
  Section a, b;
  RecordingSink sink;
  CorrelationJoin join(sink, 100);
  join.add(operation(&a, 1));
  join.add(device_activity(&b, 1));  // same id, other section: no join
  join.add(device_activity(&a, 2));
  join.add(device_activity(&a, 1));
  join.add(operation(&a, 2));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(sink.lone_operations.empty());
  EXPECT_EQ(sink.lone_activities, (std::vector<uint64_t>{1}));
  EXPECT_EQ(join.stats().joined, 2u);
  EXPECT_EQ(join.stats().activities_without_operation, 1u);
}

TEST(CorrelationJoin, WindowStaysBoundedWhenNothingEverJoins) {
  // GPU timing off: every launch waits in vain. The window must not grow.
  Section section;
  RecordingSink sink;
  CorrelationJoin join(sink, 64);
  for (uint64_t id = 1; id <= 100000; ++id) {
    join.add(operation(&section, id));
    ASSERT_LE(join.waiting(), 64u);
  }
  EXPECT_EQ(sink.lone_operations.size(), 100000u - 64u) << "evicted oldest first, while streaming";
  EXPECT_EQ(sink.lone_operations.front(), 1u);
  join.finish();
  EXPECT_EQ(sink.lone_operations.size(), 100000u);
  EXPECT_EQ(join.stats().evicted_by_window, 100000u - 64u);
}

TEST(CorrelationJoin, MatchedEntriesDoNotPinTheWindowOpen) {
  // One launch never matches while many others do: the window is bounded in
  // entries (matched ones included), so the stale one is evicted eventually.
  Section section;
  RecordingSink sink;
  CorrelationJoin join(sink, 8);
  join.add(operation(&section, 999999));
  for (uint64_t id = 1; id <= 1000; ++id) {
    join.add(operation(&section, id));
    join.add(device_activity(&section, id));
  }
  EXPECT_EQ(sink.pairs.size(), 1000u);
  EXPECT_EQ(sink.lone_operations, (std::vector<uint64_t>{999999}));
}

TEST(CorrelationJoin, ZeroAndDuplicateIdsAreNotJoinedWrongly) {
  Section section;
  RecordingSink sink;
  CorrelationJoin join(sink, 16);
  join.add(operation(&section, 0));
  join.add(device_activity(&section, 0));
  join.add(operation(&section, 5));
  join.add(operation(&section, 5));  // a writer bug: the first leaves unmatched
  join.add(device_activity(&section, 5));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{5}));
  EXPECT_EQ(sink.lone_operations, (std::vector<uint64_t>{0, 5}));
  EXPECT_EQ(sink.lone_activities, (std::vector<uint64_t>{0}));
  EXPECT_EQ(join.stats().duplicate_ids, 1u);
}

Operation graph_launch(Section* section, uint64_t id) {
  Operation op = operation(section, id);
  op.kind = OperationKind::kGraphLaunch;
  op.graph_launch = GraphLaunchRecord{};
  op.graph_launch.span.correlation_id = id;
  return op;
}

GpuWork node_work(Section* section, uint64_t id, uint64_t node) {
  GpuWork a = device_activity(section, id);
  a.activity.graph_node = node;
  return a;
}

// A graph launch timed node by node (CUPTI): every node has the launch's
// correlation id. The first is joined, each later one is more work of the
// same launch, and the launch leaves the window without being counted as
// an operation without GPU work.
TEST(CorrelationJoin, EveryNodeOfAGraphLaunchJoinsItsLaunch) {
  Section section;
  RecordingSink sink;
  CorrelationJoin join(sink, 100);
  join.add(graph_launch(&section, 7));
  join.add(node_work(&section, 7, 0xA));
  join.add(node_work(&section, 7, 0xB));
  join.add(operation(&section, 8));
  join.add(node_work(&section, 7, 0xC));
  join.add(device_activity(&section, 8));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(sink.more_nodes, (std::vector<uint64_t>{0xB, 0xC}));
  EXPECT_EQ(sink.done, (std::vector<uint64_t>{7})) << "once, when the trace ends";
  EXPECT_TRUE(sink.lone_operations.empty());
  EXPECT_TRUE(sink.lone_activities.empty());
  EXPECT_EQ(join.stats().more_node_work, 2u);
  EXPECT_EQ(join.stats().operations_without_activity, 0u);
}

// The first node read before its launch (the launch's record was late):
// joined when the launch comes, and the later nodes still find it.
TEST(CorrelationJoin, AGraphLaunchAfterItsFirstNodeStillTakesTheOthers) {
  Section section;
  RecordingSink sink;
  CorrelationJoin join(sink, 100);
  join.add(node_work(&section, 3, 0xA));
  join.add(graph_launch(&section, 3));
  join.add(node_work(&section, 3, 0xB));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{3}));
  EXPECT_EQ(sink.more_nodes, (std::vector<uint64_t>{0xB}));
  EXPECT_TRUE(sink.lone_operations.empty());
}

// A node-timed launch keeps its place in the window only as long as the
// window allows: pushed out, it leaves silently and a late node is alone.
TEST(CorrelationJoin, ANodeTimedLaunchLeavesTheWindowLikeAnyEntry) {
  Section section;
  RecordingSink sink;
  CorrelationJoin join(sink, 2);
  join.add(graph_launch(&section, 1));
  join.add(node_work(&section, 1, 0xA));
  join.add(operation(&section, 2));
  join.add(operation(&section, 3));  // pushes the launch out
  join.add(node_work(&section, 1, 0xB));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{1}));
  EXPECT_TRUE(sink.more_nodes.empty());
  EXPECT_EQ(sink.done, (std::vector<uint64_t>{1})) << "when it was pushed out";
  EXPECT_EQ(sink.lone_activities, (std::vector<uint64_t>{1})) << "the node that came after its launch left";
  EXPECT_EQ(sink.lone_operations, (std::vector<uint64_t>{2, 3}));
  EXPECT_LE(join.waiting(), 2u);
}

// The join against a plain model of its rules (a FIFO of at most `window`
// entries, a map of the waiting ones) on random input: many sections, ids
// from a small range (so that keys collide in the table, repeat, and leave
// by eviction while others wait), windows small and large. Every call to the
// sink must come in the model's order.
struct EventLog : JoinSink {
  void joined(const Operation& op, const GpuWork&) override { log.push_back("J" + text(op.section, op.span().correlation_id)); }
  void operation_alone(const Operation& op) override { log.push_back("O" + text(op.section, op.span().correlation_id)); }
  void activity_alone(const GpuWork& a) override { log.push_back("A" + text(a.section, a.activity.correlation_id)); }
  void more_node_work(const Operation& op, const GpuWork&) override {
    log.push_back("M" + text(op.section, op.span().correlation_id));
  }
  void nodes_done(const Operation& op) override { log.push_back("D" + text(op.section, op.span().correlation_id)); }
  static std::string text(const Section* section, uint64_t id) {
    return std::to_string(reinterpret_cast<uintptr_t>(section) % 4096) + ":" + std::to_string(id);
  }
  std::vector<std::string> log;
};

struct ModelJoin {
  struct Item {
    bool operation;
    const Section* section;
    uint64_t id;
    bool done = false;
  };
  explicit ModelJoin(size_t window) : window(window) {}
  void add(bool is_operation, const Section* section, uint64_t id) {
    const std::string kind = is_operation ? "O" : "A";
    if (id == 0) {
      log.push_back(kind + EventLog::text(section, id));
      return;
    }
    const auto key = std::make_pair(section, id);
    auto found = waiting.find(key);
    if (found != waiting.end()) {
      Item& other = fifo[found->second - first];
      waiting.erase(found);
      if (other.operation != is_operation) {
        other.done = true;
        log.push_back("J" + EventLog::text(section, id));
        trim();
        return;
      }
      other.done = true;
      log.push_back((other.operation ? "O" : "A") + EventLog::text(section, id));
    }
    fifo.push_back(Item{is_operation, section, id});
    waiting[key] = first + fifo.size() - 1;
    trim();
  }
  void trim() {
    while (!fifo.empty() && (fifo.front().done || fifo.size() > window)) {
      Item& front = fifo.front();
      if (!front.done) {
        waiting.erase(std::make_pair(front.section, front.id));
        log.push_back((front.operation ? "O" : "A") + EventLog::text(front.section, front.id));
      }
      fifo.pop_front();
      ++first;
    }
  }
  void finish() {
    for (Item& item : fifo)
      if (!item.done) log.push_back((item.operation ? "O" : "A") + EventLog::text(item.section, item.id));
  }
  size_t window;
  std::deque<Item> fifo;
  uint64_t first = 0;
  std::map<std::pair<const Section*, uint64_t>, uint64_t> waiting;
  std::vector<std::string> log;
};

TEST(CorrelationJoin, MatchesAPlainModelOnRandomInput) {
  std::vector<Section> sections(5);
  for (const size_t window : {1u, 3u, 64u, 5000u}) {
    for (const uint64_t ids : {8u, 300u, 100000u}) {
      std::mt19937_64 random(window * 1000003 + ids);
      EventLog sink;
      CorrelationJoin join(sink, window);
      ModelJoin model(window);
      for (int i = 0; i < 30000; ++i) {
        Section* section = &sections[random() % sections.size()];
        const uint64_t id = random() % ids;
        if (random() % 2 == 0) {
          join.add(operation(section, id));
          model.add(true, section, id);
        } else {
          join.add(device_activity(section, id));
          model.add(false, section, id);
        }
        ASSERT_LE(join.waiting(), window) << "window " << window << ", ids " << ids;
      }
      join.finish();
      model.finish();
      ASSERT_EQ(sink.log, model.log) << "window " << window << ", ids " << ids;
      EXPECT_EQ(join.waiting(), 0u);
    }
  }
}

}  // namespace
}  // namespace proflaunch::tools::interpret
