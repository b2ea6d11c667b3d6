#include "tools/proftrace/interpret/blocking_calls.h"

#include <cstdio>

namespace proflaunch::tools::interpret {

using format::WaitObjectKind;

std::string wait_object_kind_name(uint8_t kind) {
  switch (static_cast<WaitObjectKind>(kind)) {
    case WaitObjectKind::kNone: return "sleep";
    case WaitObjectKind::kMutex: return "mutex";
    case WaitObjectKind::kCondition: return "condition variable";
    case WaitObjectKind::kSemaphore: return "semaphore";
    case WaitObjectKind::kThread: return "thread";
    case WaitObjectKind::kPipe: return "pipe";
    case WaitObjectKind::kSocket: return "socket";
    case WaitObjectKind::kFile: return "file";
    case WaitObjectKind::kCharDevice: return "character device";
    case WaitObjectKind::kEventFd: return "eventfd";
    case WaitObjectKind::kOtherFd: return "descriptor";
    case WaitObjectKind::kChildProcess: return "child process";
    case WaitObjectKind::kFutex: return "futex";
    case WaitObjectKind::kEpoll: return "epoll";
  }
  return "object#" + std::to_string(kind);
}

std::string wait_object_text(const format::BlockingCallRecord& call) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(call.object));
  switch (static_cast<WaitObjectKind>(call.object_kind)) {
    case WaitObjectKind::kNone: return "";
    case WaitObjectKind::kMutex:
    case WaitObjectKind::kCondition:
    case WaitObjectKind::kSemaphore:
    case WaitObjectKind::kFutex:
    case WaitObjectKind::kThread: return wait_object_kind_name(call.object_kind) + " " + hex;
    case WaitObjectKind::kChildProcess:
      return static_cast<int64_t>(call.object) == -1 ? std::string("any child")
                                                      : "child pid " + std::to_string(static_cast<int64_t>(call.object));
    case WaitObjectKind::kPipe:
    case WaitObjectKind::kSocket:
    case WaitObjectKind::kFile:
    case WaitObjectKind::kCharDevice:
    case WaitObjectKind::kEventFd:
    case WaitObjectKind::kOtherFd:
    case WaitObjectKind::kEpoll:
      return wait_object_kind_name(call.object_kind) + " fd " + std::to_string(call.object);
  }
  return wait_object_kind_name(call.object_kind) + " " + hex;
}

std::string blocking_call_name(const SectionModel* section, const format::BlockingCallRecord& call) {
  return section != nullptr ? section->api_name(call.span.api) : "api#" + std::to_string(call.span.api);
}

std::string blocking_call_label(const SectionModel* section, const format::BlockingCallRecord& call) {
  const std::string object = wait_object_text(call);
  const std::string name = blocking_call_name(section, call);
  return object.empty() ? name : name + " (" + object + ")";
}

}  // namespace proflaunch::tools::interpret
