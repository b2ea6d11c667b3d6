// The simulated NCCL: ranks are forked processes (the parent never touches
// CUDA, so every child may), meeting through the library's shared memory.
// Each rank checks the data it received; a rank's exit status is its number
// of failed checks.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

namespace {

using RankBody = std::function<int(int rank, int nranks, const ncclUniqueId& id)>;

int64_t now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000 + t.tv_nsec / 1'000'000;
}

// Exit status per rank (128 + signal when killed); -1 if it had to be killed
// after `timeout_ms`.
std::vector<int> run_ranks(int nranks, const RankBody& body, int64_t timeout_ms = 20'000) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return {};
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nranks; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      const int failures = body(rank, nranks, id);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(failures > 100 ? 100 : failures);
    }
    pids.push_back(pid);
  }
  std::vector<int> status(nranks, -1);
  int remaining = nranks;
  const int64_t deadline = now_ms() + timeout_ms;
  while (remaining > 0 && now_ms() < deadline) {
    for (int r = 0; r < nranks; ++r) {
      int raw = 0;
      if (status[r] != -1 || waitpid(pids[r], &raw, WNOHANG) != pids[r]) continue;
      status[r] = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
      --remaining;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < nranks; ++r) {
    if (status[r] != -1) continue;
    kill(pids[r], SIGKILL);
    waitpid(pids[r], nullptr, 0);
  }
  return status;
}

#define RANK_CHECK(condition)                                                             \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "rank %d: check failed at line %d: %s\n", rank, __LINE__, #condition); \
      ++failures;                                                                         \
    }                                                                                     \
  } while (0)

#define NCCL_OK(call) RANK_CHECK((call) == ncclSuccess)

struct Rank {
  int rank;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

// Device 0 or 1 by rank, a communicator and a stream.
int open_rank(int rank, int nranks, const ncclUniqueId& id, Rank& out) {
  int failures = 0;
  out.rank = rank;
  RANK_CHECK(cudaSetDevice(rank % 2) == cudaSuccess);
  RANK_CHECK(cudaStreamCreate(&out.stream) == cudaSuccess);
  NCCL_OK(ncclCommInitRank(&out.comm, nranks, id, rank));
  return failures;
}

template <typename T>
T* device_copy(const std::vector<T>& host) {
  T* device = nullptr;
  cudaMalloc(&device, host.size() * sizeof(T) + 1);
  cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return device;
}

template <typename T>
std::vector<T> host_copy(const T* device, size_t count) {
  std::vector<T> host(count);
  cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost);
  return host;
}

bool all_ok(const std::vector<int>& status) {
  for (int s : status)
    if (s != 0) return false;
  return !status.empty();
}

std::string describe(const std::vector<int>& status) {
  std::string text;
  for (size_t r = 0; r < status.size(); ++r) text += "rank " + std::to_string(r) + ": " + std::to_string(status[r]) + "  ";
  return text;
}

TEST(SimNccl, CollectivesMoveTheRightDataAcrossFourProcesses) {
  const auto status = run_ranks(4, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    const size_t count = 1000;
    // all-reduce: sum and max of rank+1+i
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = float(rank + 1) + float(i);
    float* buffer = device_copy(values);
    NCCL_OK(ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    auto summed = host_copy(buffer, count);
    RANK_CHECK(summed[0] == 10.0f && summed[999] == 10.0f + 4 * 999.0f);
    int32_t* ints = device_copy(std::vector<int32_t>(count, rank * 7));
    NCCL_OK(ncclAllReduce(ints, ints, count, ncclInt32, ncclMax, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    RANK_CHECK(host_copy(ints, count)[500] == 21);
    // all-gather: block r holds rank r's values
    int32_t* mine = device_copy(std::vector<int32_t>(count, 100 + rank));
    int32_t* gathered = device_copy(std::vector<int32_t>(count * n, -1));
    NCCL_OK(ncclAllGather(mine, gathered, count, ncclInt32, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    auto all = host_copy(gathered, count * n);
    for (int b = 0; b < n; ++b) RANK_CHECK(all[b * count] == 100 + b && all[b * count + count - 1] == 100 + b);
    // reduce-scatter: rank r gets the sum of block r over ranks
    std::vector<double> blocks(count * n);
    for (int b = 0; b < n; ++b)
      for (size_t i = 0; i < count; ++i) blocks[b * count + i] = b * 1000.0 + rank;
    double* send = device_copy(blocks);
    double* received = device_copy(std::vector<double>(count, 0));
    NCCL_OK(ncclReduceScatter(send, received, count, ncclFloat64, ncclSum, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    RANK_CHECK(host_copy(received, count)[7] == 4 * rank * 1000.0 + (0 + 1 + 2 + 3));
    // broadcast from rank 2, in place (ncclBcast)
    int64_t* shared = device_copy(std::vector<int64_t>(count, rank == 2 ? 4242 : 0));
    NCCL_OK(ncclBcast(shared, count, ncclInt64, 2, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    RANK_CHECK(host_copy(shared, count)[count - 1] == 4242);
    // reduce to rank 1: only rank 1's output changes
    float* reduced = device_copy(std::vector<float>(count, -1.0f));
    NCCL_OK(ncclReduce(buffer, reduced, count, ncclFloat32, ncclMin, 1, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    RANK_CHECK(host_copy(reduced, count)[0] == (rank == 1 ? 10.0f : -1.0f));
    // all-to-all: block b of rank r's output is rank b's block r
    std::vector<int32_t> outgoing(count * n);
    for (int b = 0; b < n; ++b)
      for (size_t i = 0; i < count; ++i) outgoing[b * count + i] = rank * 10 + b;
    int32_t* a2a_send = device_copy(outgoing);
    int32_t* a2a_recv = device_copy(std::vector<int32_t>(count * n, -1));
    NCCL_OK(ncclAlltoAll(a2a_send, a2a_recv, count, ncclInt32, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    auto incoming = host_copy(a2a_recv, count * n);
    for (int b = 0; b < n; ++b) RANK_CHECK(incoming[b * count + 3] == b * 10 + rank);
    // gather to 3 and scatter from 0
    int32_t* gathered3 = device_copy(std::vector<int32_t>(count * n, -1));
    NCCL_OK(ncclGather(mine, gathered3, count, ncclInt32, 3, r.comm, r.stream));
    int32_t* scattered = device_copy(std::vector<int32_t>(count, -1));
    NCCL_OK(ncclScatter(a2a_send, scattered, count, ncclInt32, 0, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    RANK_CHECK(host_copy(gathered3, count * n)[2 * count] == (rank == 3 ? 102 : -1));
    RANK_CHECK(host_copy(scattered, count)[0] == rank);  // rank 0's block r is 0*10 + r
    int size = 0, me = -1, device = -1;
    NCCL_OK(ncclCommCount(r.comm, &size));
    NCCL_OK(ncclCommUserRank(r.comm, &me));
    NCCL_OK(ncclCommCuDevice(r.comm, &device));
    RANK_CHECK(size == 4 && me == rank && device == rank % 2);
    NCCL_OK(ncclCommDestroy(r.comm));
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, GroupedSendsAndReceivesInARingDoNotDeadlock) {
  const auto status = run_ranks(4, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    // Bigger than a mailbox, so the transfer needs several rounds.
    const size_t count = 300'000;
    int32_t* send = device_copy(std::vector<int32_t>(count, rank));
    int32_t* recv = device_copy(std::vector<int32_t>(count, -1));
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclSend(send, count, ncclInt32, (rank + 1) % n, r.comm, r.stream));
    NCCL_OK(ncclRecv(recv, count, ncclInt32, (rank + n - 1) % n, r.comm, r.stream));
    NCCL_OK(ncclGroupEnd());
    cudaStreamSynchronize(r.stream);
    ncclResult_t async = ncclSuccess;
    NCCL_OK(ncclCommGetAsyncError(r.comm, &async));
    if (async != ncclSuccess) std::fprintf(stderr, "rank %d: %s\n", rank, ncclGetLastError(r.comm));
    RANK_CHECK(async == ncclSuccess);
    auto got = host_copy(recv, count);
    RANK_CHECK(got[0] == (rank + n - 1) % n && got[count - 1] == (rank + n - 1) % n);
    NCCL_OK(ncclCommDestroy(r.comm));
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

// A rank that has nothing more to do may exit: transfers between other
// ranks go on (the failure above needs a peer of the transfer to die).
TEST(SimNccl, ARankThatLeftDoesNotBreakTransfersItIsNotPartOf) {
  const auto status = run_ranks(3, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    if (rank == 0) return failures;  // exits now
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 0 is gone by now
    const size_t count = 300'000;  // several mailbox rounds: both sides wait
    int32_t* buffer = device_copy(std::vector<int32_t>(count, rank == 1 ? 7 : -1));
    if (rank == 1) NCCL_OK(ncclSend(buffer, count, ncclInt32, 2, r.comm, r.stream));
    else NCCL_OK(ncclRecv(buffer, count, ncclInt32, 1, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    ncclResult_t async = ncclSuccess;
    NCCL_OK(ncclCommGetAsyncError(r.comm, &async));
    if (async != ncclSuccess) std::fprintf(stderr, "rank %d: %s\n", rank, ncclGetLastError(r.comm));
    RANK_CHECK(async == ncclSuccess);
    auto got = host_copy(buffer, count);
    RANK_CHECK(got[0] == 7 && got[count - 1] == 7);
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, MessagesLargerThanTheStagingAreaAreChunked) {
  const auto status = run_ranks(2, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    const size_t count = 700'000;  // 2.8 MB of floats, the slot is 1 MiB
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = float(i % 1000) * (rank + 1);
    float* buffer = device_copy(values);
    NCCL_OK(ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclAvg, r.comm, r.stream));
    cudaStreamSynchronize(r.stream);
    auto out = host_copy(buffer, count);
    RANK_CHECK(out[699'999] == 999.0f * 1.5f && out[300'001] == 1.0f * 1.5f);
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, ASlowRankHoldsTheOthersCollectiveOnTheirStreams) {
  static constexpr int kDelayMs = 400;
  const auto status = run_ranks(3, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    int32_t* buffer = device_copy(std::vector<int32_t>(16, 1));
    if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(kDelayMs));
    const int64_t begin = now_ms();
    NCCL_OK(ncclAllReduce(buffer, buffer, 16, ncclInt32, ncclSum, r.comm, r.stream));
    const int64_t returned = now_ms();
    cudaStreamSynchronize(r.stream);
    const int64_t completed = now_ms();
    // The call itself is asynchronous; the stream waits for the slow rank.
    RANK_CHECK(returned - begin < kDelayMs / 2);
    if (rank != 2) RANK_CHECK(completed - begin >= kDelayMs / 2);
    RANK_CHECK(host_copy(buffer, 16)[0] == 3);
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, APeerThatDiesMakesTheOthersFailInsteadOfHanging) {
  const auto status = run_ranks(3, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    int32_t* buffer = device_copy(std::vector<int32_t>(16, 1));
    if (rank == 1) _exit(0);  // gone before the collective
    NCCL_OK(ncclAllReduce(buffer, buffer, 16, ncclInt32, ncclSum, r.comm, r.stream));
    RANK_CHECK(cudaStreamSynchronize(r.stream) == cudaSuccess);
    ncclResult_t async = ncclSuccess;
    NCCL_OK(ncclCommGetAsyncError(r.comm, &async));
    RANK_CHECK(async == ncclRemoteError);
    // Later calls report the broken communicator.
    RANK_CHECK(ncclAllReduce(buffer, buffer, 16, ncclInt32, ncclSum, r.comm, r.stream) == ncclRemoteError);
    const std::string why = ncclGetLastError(r.comm);
    RANK_CHECK(why.find("died") != std::string::npos || why.find("aborted") != std::string::npos);
    NCCL_OK(ncclCommAbort(r.comm));
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, InitAllMakesThreadRanksThatMeetInAGroup) {
  const auto status = run_ranks(1, [](int rank, int, const ncclUniqueId&) {
    int failures = 0;
    ncclComm_t comms[2];
    const int devices[2] = {0, 1};
    NCCL_OK(ncclCommInitAll(comms, 2, devices));
    cudaStream_t streams[2];
    float* buffers[2];
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaStreamCreate(&streams[d]);
      buffers[d] = device_copy(std::vector<float>(64, float(d + 1)));
    }
    NCCL_OK(ncclGroupStart());
    for (int d = 0; d < 2; ++d) NCCL_OK(ncclAllReduce(buffers[d], buffers[d], 64, ncclFloat32, ncclSum, comms[d], streams[d]));
    NCCL_OK(ncclGroupEnd());
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaStreamSynchronize(streams[d]);
      RANK_CHECK(host_copy(buffers[d], 64)[63] == 3.0f);
      int device = -1;
      NCCL_OK(ncclCommCuDevice(comms[d], &device));
      RANK_CHECK(device == d);
      NCCL_OK(ncclCommDestroy(comms[d]));
    }
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, SplitMakesCommunicatorsOfEachColor) {
  const auto status = run_ranks(4, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    ncclComm_t half = nullptr;
    // Reversed keys: the new ranks count down.
    NCCL_OK(ncclCommSplit(r.comm, rank % 2, -rank, &half, nullptr));
    int size = 0, me = -1;
    NCCL_OK(ncclCommCount(half, &size));
    NCCL_OK(ncclCommUserRank(half, &me));
    RANK_CHECK(size == 2 && me == (rank < 2 ? 1 : 0));
    int32_t* buffer = device_copy(std::vector<int32_t>(8, rank));
    NCCL_OK(ncclAllReduce(buffer, buffer, 8, ncclInt32, ncclSum, half, r.stream));
    cudaStreamSynchronize(r.stream);
    RANK_CHECK(host_copy(buffer, 8)[0] == (rank % 2 == 0 ? 0 + 2 : 1 + 3));
    ncclComm_t none = reinterpret_cast<ncclComm_t>(1);
    NCCL_OK(ncclCommSplit(r.comm, rank == 0 ? NCCL_SPLIT_NOCOLOR : 5, 0, &none, nullptr));
    RANK_CHECK((none == nullptr) == (rank == 0));
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

TEST(SimNccl, InvalidArgumentsAreRejectedBeforeAnythingRuns) {
  const auto status = run_ranks(1, [](int rank, int n, const ncclUniqueId& id) {
    Rank r;
    int failures = open_rank(rank, n, id, r);
    if (failures) return failures;
    float* buffer = device_copy(std::vector<float>(4, 1.0f));
    RANK_CHECK(ncclBroadcast(buffer, buffer, 4, ncclFloat32, 3, r.comm, r.stream) == ncclInvalidArgument);
    RANK_CHECK(ncclAllReduce(buffer, buffer, 4, ncclNumTypes, ncclSum, r.comm, r.stream) == ncclInvalidArgument);
    RANK_CHECK(ncclAllReduce(buffer, buffer, 4, ncclFloat32, ncclSum, nullptr, r.stream) == ncclInvalidArgument);
    RANK_CHECK(ncclGroupEnd() == ncclInvalidUsage);
    int version = 0;
    NCCL_OK(ncclGetVersion(&version));
    RANK_CHECK(version == NCCL_VERSION_CODE);
    RANK_CHECK(std::string(ncclGetErrorString(ncclRemoteError)).find("remote") != std::string::npos);
    return failures;
  });
  EXPECT_TRUE(all_ok(status)) << describe(status);
}

}  // namespace
