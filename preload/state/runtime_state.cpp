#include "preload/state/runtime_state.h"

#include <unistd.h>

#include <mutex>

namespace proflaunch::runtime {

Config g_config;
std::atomic<State> g_state{State::kOff};

namespace {

std::mutex g_section_mutex;
SectionIdentity g_section;
std::atomic<uint64_t> g_section_id{0};
std::atomic<uint32_t> g_section_pid{0};

void store_section(const SectionIdentity& section) {
  g_section = section;
  g_section_id.store(section.id, std::memory_order_relaxed);
  g_section_pid.store(section.pid, std::memory_order_relaxed);
}

}  // namespace

bool pause_recording() noexcept {
  State expected = State::kRecording;
  return g_state.compare_exchange_strong(expected, State::kPaused, std::memory_order_acq_rel);
}

bool resume_recording() noexcept {
  State expected = State::kPaused;
  return g_state.compare_exchange_strong(expected, State::kRecording, std::memory_order_acq_rel);
}

SectionIdentity section() noexcept {
  std::lock_guard<std::mutex> lock(g_section_mutex);
  return g_section;
}

uint64_t section_id() noexcept { return g_section_id.load(std::memory_order_relaxed); }

uint32_t section_pid() noexcept { return g_section_pid.load(std::memory_order_relaxed); }

bool owns_this_process() noexcept {
  return static_cast<uint32_t>(getpid()) == section_pid();
}

void set_section(const SectionIdentity& section) noexcept {
  std::lock_guard<std::mutex> lock(g_section_mutex);
  store_section(section);
}

void section_lock_before_fork() noexcept { g_section_mutex.lock(); }

void section_unlock_after_fork() noexcept { g_section_mutex.unlock(); }

void set_section_in_fork_child(const SectionIdentity& section) noexcept { store_section(section); }

}  // namespace proflaunch::runtime
