#include "tools/proftrace/interpret/gpu_join.h"

namespace proflaunch::tools::interpret {

CorrelationJoin::CorrelationJoin(JoinSink& sink, size_t window_entries)
    : sink_(sink), window_entries_(window_entries > 0 ? window_entries : 1) {}

CorrelationJoin::Key CorrelationJoin::key_of(const Section* section,
                                             uint64_t correlation_id) const {
  // The section pointer is stable and unique per section.
  return Key{reinterpret_cast<uintptr_t>(section), correlation_id};
}

void CorrelationJoin::add(const Operation& operation) {
  const uint64_t id = operation.span().correlation_id;
  if (id == 0) {  // the writer gave it no id: nothing can join it
    ++stats_.operations_without_activity;
    sink_.operation_alone(operation);
    return;
  }
  const auto [first, inserted] = first_call_id_.try_emplace(operation.section, id);
  if (!inserted && id < first->second) first->second = id;
  const Key key = key_of(operation.section, id);
  uint64_t sequence = 0;
  bool has_work = false;
  if (Entry* activity = take_partner(key, /*is_operation=*/true, &sequence)) {
    ++stats_.joined;
    activity->done = true;
    sink_.joined(operation, activity->activity);
    if (!is_graph_node_of(activity->activity, operation)) {
      trim();
      return;
    }
    has_work = true;  // its other nodes may come
  }
  Entry entry;
  entry.is_operation = true;
  entry.done = false;
  entry.has_work = has_work;
  entry.operation = operation;
  insert(key, entry);
}

void CorrelationJoin::add(const GpuWork& activity) {
  const uint64_t id = activity.activity.correlation_id;
  if (id == 0) {
    ++stats_.activities_without_operation;
    sink_.activity_alone(activity);
    return;
  }
  const Key key = key_of(activity.section, id);
  uint64_t sequence = 0;
  if (Entry* operation = take_partner(key, /*is_operation=*/false, &sequence)) {
    if (is_graph_node_of(activity, operation->operation)) {
      // It stays for the graph's other nodes.
      waiting_.put(key, sequence);
      if (operation->has_work) {
        ++stats_.more_node_work;
        sink_.more_node_work(operation->operation, activity);
      } else {
        operation->has_work = true;
        ++stats_.joined;
        sink_.joined(operation->operation, activity);
      }
      return;
    }
    ++stats_.joined;
    operation->done = true;  // popped by trim(), after it has been used
    sink_.joined(operation->operation, activity);
    trim();
    return;
  }
  Entry entry;
  entry.is_operation = false;
  entry.done = false;
  entry.has_work = false;
  entry.activity = activity;
  insert(key, entry);
}

CorrelationJoin::Entry* CorrelationJoin::take_partner(const Key& key, bool is_operation, uint64_t* sequence) {
  *sequence = waiting_.take(key);
  if (*sequence == WaitingTable::kAbsent) return nullptr;
  Entry& other = at(*sequence);
  if (other.is_operation != is_operation) return &other;
  // The same kind under the same id: the writer reused it. The older one
  // goes out alone; the newer one waits instead.
  ++stats_.duplicate_ids;
  release(other, false);
  return nullptr;
}

void CorrelationJoin::insert(const Key& key, const Entry& entry) {
  if (fifo_size() == ring_.size()) {
    // Full ring: double it, entries kept at their sequence numbers.
    std::vector<Entry> ring(ring_.empty() ? 1024 : ring_.size() * 2);
    for (uint64_t sequence = first_sequence_; sequence < next_sequence_; ++sequence)
      ring[sequence & (ring.size() - 1)] = at(sequence);
    ring_.swap(ring);
  }
  at(next_sequence_) = entry;
  waiting_.put(key, next_sequence_++);
  trim();
}

void CorrelationJoin::release(Entry& entry, bool evicted) {
  if (entry.done) return;
  entry.done = true;
  if (entry.has_work) {  // a graph launch done with its nodes
    sink_.nodes_done(entry.operation);
    return;
  }
  if (evicted) ++stats_.evicted_by_window;
  if (entry.is_operation) {
    ++stats_.operations_without_activity;
    sink_.operation_alone(entry.operation);
  } else {
    ++stats_.activities_without_operation;
    const auto first = first_call_id_.find(entry.activity.section);
    if (first != first_call_id_.end() && entry.activity.activity.correlation_id < first->second) {
      entry.activity.before_first_call = true;
      ++stats_.activities_before_first_call;
    }
    sink_.activity_alone(entry.activity);
  }
}

void CorrelationJoin::trim() {
  while (first_sequence_ != next_sequence_ && (at(first_sequence_).done || fifo_size() > window_entries_)) {
    Entry& front = at(first_sequence_);
    if (!front.done) {
      const uint64_t id = front.is_operation ? front.operation.span().correlation_id
                                             : front.activity.activity.correlation_id;
      const Section* section =
          front.is_operation ? front.operation.section : front.activity.section;
      waiting_.take(key_of(section, id));
      release(front, true);
    }
    ++first_sequence_;
  }
}

void CorrelationJoin::finish() {
  for (uint64_t sequence = first_sequence_; sequence < next_sequence_; ++sequence) release(at(sequence), false);
  first_sequence_ = next_sequence_ = 0;
  waiting_.clear();
}

size_t CorrelationJoin::WaitingTable::home(const Key& key) const {
  // Correlation ids are mostly consecutive: a multiplicative hash spreads
  // them; the top bits pick the slot.
  const uint64_t mixed = (key.section_id * 0x9E3779B97F4A7C15ull ^ key.correlation_id) * 0xBF58476D1CE4E5B9ull;
  return static_cast<size_t>(mixed >> 32) & (slots_.size() - 1);
}

size_t CorrelationJoin::WaitingTable::index_of(const Key& key) const {
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  while (slots_[i].sequence != kAbsent && !(slots_[i].key == key)) i = (i + 1) & mask;
  return i;
}

uint64_t CorrelationJoin::WaitingTable::take(const Key& key) {
  if (slots_.empty()) return kAbsent;
  const size_t mask = slots_.size() - 1;
  size_t hole = index_of(key);
  const uint64_t sequence = slots_[hole].sequence;
  if (sequence == kAbsent) return kAbsent;
  --size_;
  // Shift later members of the probe run back into the hole, so that no
  // run is broken (each stays reachable from its home slot).
  for (size_t next = (hole + 1) & mask; slots_[next].sequence != kAbsent; next = (next + 1) & mask) {
    const size_t want = home(slots_[next].key);
    // `next` may move to `hole` when its home is not in (hole, next].
    if (((next - want) & mask) >= ((next - hole) & mask)) {
      slots_[hole] = slots_[next];
      hole = next;
    }
  }
  slots_[hole].sequence = kAbsent;
  return sequence;
}

void CorrelationJoin::WaitingTable::put(const Key& key, uint64_t sequence) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  Slot& slot = slots_[index_of(key)];
  if (slot.sequence == kAbsent) ++size_;
  slot.key = key;
  slot.sequence = sequence;
}

void CorrelationJoin::WaitingTable::grow() {
  std::vector<Slot> old(slots_.empty() ? 2048 : slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& slot : old)
    if (slot.sequence != kAbsent) slots_[index_of(slot.key)] = slot;
}

void CorrelationJoin::WaitingTable::clear() {
  slots_.clear();
  size_ = 0;
}

}  // namespace proflaunch::tools::interpret
