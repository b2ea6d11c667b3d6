#include "preload/control/control_client.h"

#include <unistd.h>

#include <atomic>

#include "preload/control/capture_control.h"
#include "preload/control/control_page.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::control {
namespace {

Page* g_page = nullptr;
std::atomic<Slot*> g_slot{nullptr};
// Writer thread only.
uint32_t g_seen = 0;
uint32_t g_ack = 0;
int g_ack_in = 0;  // cycles until the ack (0: none pending)

SlotState current_state() noexcept {
  if (runtime::config().capture.ring_ns != 0) return SlotState::kRing;
  return runtime::recording() ? SlotState::kRecording : SlotState::kPaused;
}

void act(Command command) noexcept {
  switch (command) {
    case Command::kStart:
      capture::request_start(g_page->duration_ns.load(std::memory_order_acquire));
      break;
    case Command::kStop: capture::request_stop(); break;
    case Command::kDump:
      if (runtime::config().capture.ring_ns != 0) writer_request_dump(format::CaptureTrigger::kRequest);
      break;
    case Command::kFlush:
    case Command::kNone: break;
  }
}

void task_before_drain() noexcept {}

// A command's effect is on disk two cycles later: this cycle queues the
// window's records (the capture task emits them next cycle) and every cycle
// until the ack asks for a flush, which follows the cycle.
void task_run(WriterRecordSink& /*sink*/, bool /*final*/) noexcept {
  Slot* slot = g_slot.load(std::memory_order_acquire);
  if (g_page == nullptr || slot == nullptr) return;
  if (slot->state.load(std::memory_order_relaxed) != static_cast<uint32_t>(SlotState::kExited))
    slot->state.store(static_cast<uint32_t>(current_state()), std::memory_order_relaxed);
  if (g_ack_in > 0) {
    if (--g_ack_in == 0) slot->acked.store(g_ack, std::memory_order_release);
    else writer_request_flush();
  }
  const uint32_t generation = g_page->generation.load(std::memory_order_acquire);
  if (generation == g_seen) return;
  g_seen = generation;
  const uint32_t target = g_page->target_pid.load(std::memory_order_acquire);
  if (target != 0 && target != static_cast<uint32_t>(getpid())) return;
  act(static_cast<Command>(g_page->command.load(std::memory_order_acquire)));
  g_ack = generation;
  g_ack_in = 2;
  writer_request_flush();
}

void task_reset_in_child() noexcept {
  g_ack_in = 0;
  g_seen = g_page != nullptr ? g_page->generation.load(std::memory_order_acquire) : 0;
}

const WriterTask kTask{task_before_drain, task_run, task_reset_in_child};

}  // namespace

void start_client(const Config& config) noexcept {
  g_page = map_page(config.parts_dir);
  if (g_page == nullptr) return;
  g_seen = g_page->generation.load(std::memory_order_acquire);
  g_slot.store(take_slot(g_page, static_cast<uint32_t>(getpid()), config.rank), std::memory_order_release);
  writer_register_task(&kTask);
  // Idle processes record nothing until asked: their writer must run to hear it.
  if (config.capture.mode == CaptureMode::kIdle) writer_ensure_started();
}

void after_fork_in_child() noexcept {
  if (g_page == nullptr) return;
  g_slot.store(take_slot(g_page, static_cast<uint32_t>(getpid()), runtime::config().rank),
               std::memory_order_release);
}

void at_exit() noexcept {
  Slot* slot = g_slot.load(std::memory_order_acquire);
  if (slot == nullptr) return;
  slot->state.store(static_cast<uint32_t>(SlotState::kExited), std::memory_order_release);
}

}  // namespace proflaunch::control
