#include "tools/proftrace/timeline/correlation_join.h"

#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::tools::timeline {

CorrelationJoin::CorrelationJoin(JoinSink& sink, size_t window_entries)
    : sink_(sink), window_entries_(window_entries > 0 ? window_entries : 1) {}

CorrelationJoin::Key CorrelationJoin::key_of(const SectionContext* section,
                                             uint64_t correlation_id) const {
  // The section pointer is stable and unique per section.
  return Key{reinterpret_cast<uintptr_t>(section), correlation_id};
}

void CorrelationJoin::add(const HostOperation& operation) {
  const uint64_t id = operation.span().correlation_id;
  if (id == 0) {  // the writer gave it no id: nothing can join it
    ++stats_.operations_without_activity;
    sink_.operation_alone(operation);
    return;
  }
  const Key key = key_of(operation.section, id);
  if (const Entry* activity = take_partner(key, /*is_operation=*/true)) {
    sink_.joined(operation, activity->activity);
    trim();
    return;
  }
  Entry entry{};
  entry.is_operation = true;
  entry.operation = operation;
  insert(key, entry);
}

void CorrelationJoin::add(const DeviceActivity& activity) {
  const uint64_t id = activity.activity.correlation_id;
  if (id == 0) {
    ++stats_.activities_without_operation;
    sink_.activity_alone(activity);
    return;
  }
  const Key key = key_of(activity.section, id);
  if (const Entry* operation = take_partner(key, /*is_operation=*/false)) {
    sink_.joined(operation->operation, activity);
    trim();
    return;
  }
  Entry entry{};
  entry.is_operation = false;
  entry.activity = activity;
  insert(key, entry);
}

const CorrelationJoin::Entry* CorrelationJoin::take_partner(const Key& key, bool is_operation) {
  const auto found = waiting_.find(key);
  if (found == waiting_.end()) return nullptr;
  Entry& other = fifo_[found->second - first_sequence_];
  waiting_.erase(found);
  if (other.is_operation != is_operation) {
    ++stats_.joined;
    other.done = true;  // popped by the caller's trim(), after it has been used
    return &other;
  }
  // The same kind under the same id: the writer reused it. The older one
  // goes out alone; the newer one waits instead.
  ++stats_.duplicate_ids;
  release(other, false);
  return nullptr;
}

void CorrelationJoin::insert(const Key& key, const Entry& entry) {
  fifo_.push_back(entry);
  waiting_[key] = first_sequence_ + fifo_.size() - 1;
  trim();
}

void CorrelationJoin::release(Entry& entry, bool evicted) {
  if (entry.done) return;
  entry.done = true;
  if (evicted) ++stats_.evicted_by_window;
  if (entry.is_operation) {
    ++stats_.operations_without_activity;
    sink_.operation_alone(entry.operation);
  } else {
    ++stats_.activities_without_operation;
    sink_.activity_alone(entry.activity);
  }
}

void CorrelationJoin::trim() {
  while (!fifo_.empty() && (fifo_.front().done || fifo_.size() > window_entries_)) {
    Entry& front = fifo_.front();
    if (!front.done) {
      const uint64_t id = front.is_operation ? front.operation.span().correlation_id
                                             : front.activity.activity.correlation_id;
      const SectionContext* section =
          front.is_operation ? front.operation.section : front.activity.section;
      waiting_.erase(key_of(section, id));
      release(front, true);
    }
    fifo_.pop_front();
    ++first_sequence_;
  }
}

void CorrelationJoin::finish() {
  for (Entry& entry : fifo_) release(entry, false);
  fifo_.clear();
  waiting_.clear();
  first_sequence_ = 0;
}

}  // namespace proflaunch::tools::timeline
