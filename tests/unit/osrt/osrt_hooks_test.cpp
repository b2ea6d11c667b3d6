// The OS runtime hooks linked into this test program (they interpose on it
// as they do on a traced one; the runtime is off, so nothing records):
// the call table, and that the CPU sampler's signal never makes a call the
// kernel does not restart fail with EINTR, while the program's signal mask
// comes back exactly as it was.
#include <gtest/gtest.h>

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include "preload/intercept/libc_symbols.h"
#include "preload/osrt/blocking_call.h"
#include "preload/osrt/osrt_calls.h"
#include "preload/state/sampling_signal.h"

namespace proflaunch::osrt {
namespace {

TEST(OsrtCalls, OneRowPerCallWithItsOwnIdAndARealFunction) {
  std::set<uint16_t> ids;
  std::set<std::string> names;
  for (const CallRow& call : kCallRows) {
    EXPECT_TRUE(ids.insert(call.api).second) << call.name;
    EXPECT_TRUE(names.insert(call.name).second) << call.name;
    EXPECT_GE(call.api, 3500);
    EXPECT_LT(call.api, 3600);
    EXPECT_NE(intercept::find_libc_symbol(call.symbol), nullptr) << call.symbol;
  }
  EXPECT_EQ(ids.size(), kCallCount);
}

TEST(OsrtCalls, TheCallsTheKernelNeverRestartsAreSignal7sAndTimedFutexWaits) {
  std::set<std::string> never;
  for (const CallRow& call : kCallRows)
    if (call.restart != Restart::kRestarted) never.insert(call.name);
  const std::set<std::string> expected = {"poll",      "ppoll",      "select",          "pselect",
                                          "epoll_wait", "epoll_pwait", "nanosleep",     "clock_nanosleep",
                                          "usleep",     "sleep",       "sem_timedwait", "sem_clockwait",
                                          "futex",      "__poll_chk", "__ppoll_chk"};
  EXPECT_EQ(never, expected);
}

// A SA_RESTART handler for a real-time signal that a per-thread timer sends
// every 500 us: the sampler's situation.
std::atomic<int> g_handled{0};
void on_signal(int) { g_handled.fetch_add(1, std::memory_order_relaxed); }

class SamplingSignal : public ::testing::Test {
 protected:
  void SetUp() override {
    signal_ = SIGRTMIN + 3;
    struct sigaction action {};
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(signal_, &action, &previous_), 0);
    sigevent event{};
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = signal_;
    event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
    ASSERT_EQ(timer_create(CLOCK_MONOTONIC, &event, &timer_), 0);
    itimerspec every{{0, 500000}, {0, 500000}};
    ASSERT_EQ(timer_settime(timer_, 0, &every, nullptr), 0);
    // Something of the program's own blocked, which must stay blocked.
    sigset_t program;
    sigemptyset(&program);
    sigaddset(&program, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &program, &original_mask_);
    pthread_sigmask(SIG_BLOCK, nullptr, &mask_before_);
    set_sampling_signal(signal_);
  }
  void TearDown() override {
    set_sampling_signal(0);
    timer_delete(timer_);
    pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
    sigaction(signal_, &previous_, nullptr);
  }
  void expect_mask_unchanged() {
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, nullptr, &now);
    for (int s = 1; s < NSIG; ++s)
      EXPECT_EQ(sigismember(&now, s), sigismember(&mask_before_, s)) << "signal " << s;
  }

  int signal_ = 0;
  timer_t timer_{};
  struct sigaction previous_ {};
  sigset_t original_mask_;
  sigset_t mask_before_;
};

constexpr timespec k30ms{0, 30000000};

TEST_F(SamplingSignal, TheRealCallsFailWithEintrHere) {
  // The setup interrupts what it should: without the hook, nanosleep and
  // poll end early with EINTR.
  timespec duration = k30ms;
  EXPECT_EQ(real<decltype(::nanosleep)>(Call::nanosleep)(&duration, nullptr), -1);
  EXPECT_EQ(errno, EINTR);
  EXPECT_EQ(real<decltype(::poll)>(Call::poll)(nullptr, 0, 30), -1);
  EXPECT_EQ(errno, EINTR);
}

TEST_F(SamplingSignal, SleepsRunTheirWholeDuration) {
  const int handled = g_handled.load();
  timespec duration = k30ms;
  errno = 0;
  EXPECT_EQ(nanosleep(&duration, nullptr), 0) << std::strerror(errno);
  expect_mask_unchanged();
  EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &duration, nullptr), 0);
  expect_mask_unchanged();
  EXPECT_EQ(usleep(30000), 0) << std::strerror(errno);
  expect_mask_unchanged();
  EXPECT_EQ(sleep(1), 0u);
  expect_mask_unchanged();
  // The samples held back are taken once the mask is back.
  EXPECT_GT(g_handled.load(), handled);
}

TEST_F(SamplingSignal, WaitsForDescriptorsTimeOutInsteadOfFailing) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pollfd item{fds[0], POLLIN, 0};
  EXPECT_EQ(poll(&item, 1, 30), 0) << std::strerror(errno);
  expect_mask_unchanged();
  timespec timeout = k30ms;
  EXPECT_EQ(ppoll(&item, 1, &timeout, nullptr), 0) << std::strerror(errno);
  expect_mask_unchanged();
  sigset_t empty;
  sigemptyset(&empty);  // the program's own mask for the wait unblocks everything
  EXPECT_EQ(ppoll(&item, 1, &timeout, &empty), 0) << std::strerror(errno);
  expect_mask_unchanged();
  fd_set read_set;
  FD_ZERO(&read_set);
  FD_SET(fds[0], &read_set);
  timeval tv{0, 30000};
  EXPECT_EQ(select(fds[0] + 1, &read_set, nullptr, nullptr, &tv), 0) << std::strerror(errno);
  expect_mask_unchanged();
  FD_SET(fds[0], &read_set);
  EXPECT_EQ(pselect(fds[0] + 1, &read_set, nullptr, nullptr, &timeout, &empty), 0) << std::strerror(errno);
  expect_mask_unchanged();
  const int epoll = epoll_create1(0);
  epoll_event event{};
  event.events = EPOLLIN;
  ASSERT_EQ(epoll_ctl(epoll, EPOLL_CTL_ADD, fds[0], &event), 0);
  EXPECT_EQ(epoll_wait(epoll, &event, 1, 30), 0) << std::strerror(errno);
  expect_mask_unchanged();
  EXPECT_EQ(epoll_pwait(epoll, &event, 1, 30, &empty), 0) << std::strerror(errno);
  expect_mask_unchanged();
  close(epoll);
  close(fds[0]);
  close(fds[1]);
}

TEST_F(SamplingSignal, TimedSemaphoreAndFutexWaitsTimeOut) {
  sem_t semaphore;
  sem_init(&semaphore, 0, 0);
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += 30000000;
  if (deadline.tv_nsec >= 1000000000) deadline.tv_sec += 1, deadline.tv_nsec -= 1000000000;
  EXPECT_EQ(sem_timedwait(&semaphore, &deadline), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  expect_mask_unchanged();
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_nsec += 30000000;
  if (deadline.tv_nsec >= 1000000000) deadline.tv_sec += 1, deadline.tv_nsec -= 1000000000;
  EXPECT_EQ(sem_clockwait(&semaphore, CLOCK_MONOTONIC, &deadline), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  expect_mask_unchanged();
  // A semaphore that can be taken is taken at once, and errno is left alone.
  sem_post(&semaphore);
  errno = 1234;
  EXPECT_EQ(sem_timedwait(&semaphore, &deadline), 0);
  EXPECT_EQ(errno, 1234);
  sem_destroy(&semaphore);

  uint32_t word = 0;
  timespec timeout = k30ms;
  EXPECT_EQ(syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &timeout, nullptr, 0), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  expect_mask_unchanged();
  // Other system calls pass through syscall() untouched.
  EXPECT_EQ(syscall(SYS_gettid), static_cast<long>(gettid()));
}

TEST_F(SamplingSignal, CallsThatCannotWaitAreNotMasked) {
  // Timeout 0: nothing to protect, and no system call for the mask. The
  // handler still runs inside the hook's call, as it would untraced.
  EXPECT_EQ(poll(nullptr, 0, 0), 0);
  timespec zero{0, 0};
  EXPECT_EQ(nanosleep(&zero, nullptr), 0);
  expect_mask_unchanged();
}

}  // namespace
}  // namespace proflaunch::osrt
