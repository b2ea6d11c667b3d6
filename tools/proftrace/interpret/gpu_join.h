// Joins GPU work to the launch, copy, memset or graph launch it belongs to,
// by (section, correlation_id), while streaming. Either side may arrive first;
// it waits in a FIFO window of bounded length. When the window is full its
// oldest entry leaves unmatched, so memory stays constant however long the
// trace is, and every unmatched entry is counted.
//
// A graph launch timed node by node (CUPTI) has a piece of GPU work per node,
// each with the launch's correlation id and its node: the first is joined,
// the others follow as more work of the same launch, which stays in the
// window for them until it leaves it (nodes_done: it had its GPU work).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/interpret/events.h"

namespace proflaunch::tools::interpret {

class JoinSink {
 public:
  virtual ~JoinSink() = default;
  virtual void joined(const Operation& operation, const GpuWork& activity) = 0;
  virtual void operation_alone(const Operation& operation) = 0;
  virtual void activity_alone(const GpuWork& activity) = 0;
  // A graph launch's node after its first (already joined).
  virtual void more_node_work(const Operation& operation, const GpuWork& activity) = 0;
  // A graph launch joined with its nodes leaves the window: no node of it
  // comes any more.
  virtual void nodes_done(const Operation& operation) = 0;
};

struct JoinStats {
  uint64_t joined = 0;
  uint64_t operations_without_activity = 0;  // at the end of the trace or evicted
  uint64_t activities_without_operation = 0;
  uint64_t evicted_by_window = 0;  // of the above, pushed out of a full window
  uint64_t duplicate_ids = 0;      // a second entry with a pending entry's key
  // Of activities_without_operation: work of calls made before the first
  // call its process has in the trace (a flight-recorder dump's window let
  // them go; GpuWork::before_first_call).
  uint64_t activities_before_first_call = 0;
  uint64_t more_node_work = 0;     // graph nodes joined after their launch's first
};

class CorrelationJoin {
 public:
  // `window_entries`: how many operations and activities may wait (matched
  // ones still count until they reach the front of the FIFO).
  CorrelationJoin(JoinSink& sink, size_t window_entries);

  void add(const Operation& operation);
  void add(const GpuWork& activity);
  // End of input: everything still waiting leaves unmatched.
  void finish();

  const JoinStats& stats() const { return stats_; }
  size_t waiting() const { return waiting_.size(); }

 private:
  struct Key {
    uint64_t section_id;
    uint64_t correlation_id;
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    bool is_operation;
    bool done;  // matched or emitted; waiting to be popped from the front
    bool has_work;  // a graph launch joined with its first node: waits for the others
    union {
      Operation operation{};
      GpuWork activity;
    };
  };

  // Key -> sequence number of the waiting entry: open addressing, linear
  // probing, erasure by shifting back (no tombstones); at most half full.
  // Every entry of the window passes through it once or twice, so it
  // allocates nothing per entry.
  class WaitingTable {
   public:
    static constexpr uint64_t kAbsent = ~uint64_t{0};
    // Removes `key` (if present) and returns its sequence number or kAbsent.
    uint64_t take(const Key& key);
    void put(const Key& key, uint64_t sequence);
    size_t size() const { return size_; }
    void clear();

   private:
    struct Slot {
      Key key;
      uint64_t sequence = kAbsent;  // kAbsent: empty
    };
    size_t home(const Key& key) const;
    size_t index_of(const Key& key) const;  // its slot, or an empty one
    void grow();
    std::vector<Slot> slots_;
    size_t size_ = 0;
  };

  Key key_of(const Section* section, uint64_t correlation_id) const;
  // The entry waiting under `key` if it is the other half of an entry of
  // kind `is_operation` (its sequence number in *sequence), else nullptr; a
  // waiting entry of the same kind is a reused id and is released alone.
  Entry* take_partner(const Key& key, bool is_operation, uint64_t* sequence);
  static bool is_graph_node_of(const GpuWork& work, const Operation& operation) {
    return work.activity.graph_node != 0 && operation.kind == OperationKind::kGraphLaunch;
  }
  void insert(const Key& key, const Entry& entry);
  void release(Entry& entry, bool evicted);
  void trim();
  // The FIFO: entries by sequence number in a ring of 2^n (grown as needed).
  Entry& at(uint64_t sequence) { return ring_[sequence & (ring_.size() - 1)]; }
  size_t fifo_size() const { return static_cast<size_t>(next_sequence_ - first_sequence_); }

  JoinSink& sink_;
  size_t window_entries_;
  std::vector<Entry> ring_;
  uint64_t first_sequence_ = 0;  // sequence number of the FIFO's front
  uint64_t next_sequence_ = 0;   // one past its back
  WaitingTable waiting_;
  JoinStats stats_;
  // Per section, the lowest correlation id of its operations seen so far
  // (ids grow with time within a section).
  std::unordered_map<const Section*, uint64_t> first_call_id_;
};

}  // namespace proflaunch::tools::interpret
