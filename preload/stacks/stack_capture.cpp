// attach_stacks(): capture, look up, emit. And the start of the stacks
// subsystem (stacks.h).
#include <pthread.h>

#include "preload/base/log.h"
#include "preload/record/emit.h"
#include "preload/stacks/module_map.h"
#include "preload/stacks/native_unwinder.h"
#include "preload/stacks/python_frames.h"
#include "preload/stacks/stack_catalog.h"
#include "preload/stacks/stacks.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::stacks {

uint32_t g_enabled_points = 0;

namespace {

static_assert(kStacksLaunch == 1u << static_cast<unsigned>(format::StackPoint::kLaunch));
static_assert(kStacksMemory == 1u << static_cast<unsigned>(format::StackPoint::kMemory));
static_assert(kStacksSync == 1u << static_cast<unsigned>(format::StackPoint::kSync));

uint32_t g_depth = kDefaultStackDepth;

// Every writer cycle: a library loaded since the last one gets its ModuleDef
// even before any stack needs it, and an object unloaded other than through
// the shim's dlclose (glibc unloads NSS and iconv modules itself) empties the
// threads' unwind caches (cheap when nothing changed: two dl_iterate_phdr
// steps).
void refresh_modules_before_drain() noexcept {
  check_for_unloaded_code();
  refresh_modules();
}
void run_nothing(WriterRecordSink&, bool) noexcept {}
void reset_nothing_in_child() noexcept {}
const WriterTask kModuleMapTask{refresh_modules_before_drain, run_nothing, reset_nothing_in_child};

}  // namespace

void capture_and_emit(uint64_t correlation_id, format::StackPoint point) noexcept {
  const uint32_t native_id = native_stack_id_here(g_depth);

  PythonFrameKey keys[kMaxStackDepth];
  const PythonKeys python = capture_python_keys(keys, g_depth);
  const uint32_t python_id = python.count != 0 ? python_stack_id(keys, python) : 0;

  if (native_id == 0 && python_id == 0) return;
  if (auto* record = emit<format::CallStackRecord>()) {
    record->point = static_cast<uint8_t>(point);
    record->correlation_id = correlation_id;
    record->native_stack = native_id;
    record->python_stack = python_id;
    commit();
  }
}

void start_stacks(const Config& config) noexcept {
  if (config.stack_points == 0 || !runtime::recording()) return;
  g_depth = config.stack_depth == 0 ? kDefaultStackDepth
                                    : (config.stack_depth > kMaxStackDepth ? kMaxStackDepth
                                                                           : config.stack_depth);
  if (!init_stack_catalog()) {
    print_line("out of memory for the call stack tables: no call stacks");
    return;
  }
  if (!init_native_unwinder()) print_line("native stacks cannot be walked: call stacks have Python frames only");
  init_python_frames();
  refresh_modules();  // the module map as the program starts
  writer_register_task(&kModuleMapTask);
  // Registered after the runtime's handlers, so this prepare handler runs
  // before theirs: the catalog mutex is taken before the definitions mutex,
  // the order the cold path takes them in.
  pthread_atfork(catalog_lock_before_fork, catalog_unlock_after_fork, catalog_unlock_after_fork);
  g_enabled_points = config.stack_points;
}

}  // namespace proflaunch::stacks
