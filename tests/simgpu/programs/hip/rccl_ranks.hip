// A two-rank RCCL job in one command: the process forks its second rank
// before touching the GPU, the ranks share RCCL's unique id through a pipe,
// and each runs --iterations steps of a kernel on its own stream followed by
// an all-reduce (and a broadcast at the end), checking nothing beyond RCCL's
// return codes (the simulator's kernels do not compute).
//
//   rccl_ranks [--iterations N]
//
// stdout: "rccl_ranks: rank R of 2: N iterations ok" from each rank.
//
// Debian 12 ships no RCCL headers; the declarations below are the subset of
// rccl.h (NCCL's API with HIP streams) this program calls.
#include <hip/hip_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
typedef struct ncclComm* ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef enum { ncclSuccess = 0 } ncclResult_t;
typedef enum { ncclFloat32 = 7 } ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, hipStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, hipStream_t stream);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char* ncclGetErrorString(ncclResult_t result);
}

#define CHECK_HIP(call)                                                                      \
  do {                                                                                       \
    hipError_t e_ = (call);                                                                  \
    if (e_ != hipSuccess) {                                                                  \
      std::fprintf(stderr, "rccl_ranks: %s: %s\n", #call, hipGetErrorName(e_));              \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)
#define CHECK_NCCL(call)                                                                     \
  do {                                                                                       \
    ncclResult_t r_ = (call);                                                                \
    if (r_ != ncclSuccess) {                                                                 \
      std::fprintf(stderr, "rccl_ranks: %s failed: %s\n", #call, ncclGetErrorString(r_));    \
      std::exit(3);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void compute(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

static int run_rank(int rank, const ncclUniqueId& id, int iterations) {
  constexpr int kCount = 1 << 16;
  CHECK_HIP(hipSetDevice(rank));
  hipStream_t stream;
  CHECK_HIP(hipStreamCreate(&stream));
  float *data, *sum;
  CHECK_HIP(hipMalloc(&data, kCount * sizeof(float)));
  CHECK_HIP(hipMalloc(&sum, kCount * sizeof(float)));
  CHECK_HIP(hipMemset(data, 0, kCount * sizeof(float)));
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, 2, id, rank));
  for (int i = 0; i < iterations; ++i) {
    compute<<<kCount / 256, 256, 0, stream>>>(data, kCount);
    CHECK_HIP(hipGetLastError());
    CHECK_NCCL(ncclAllReduce(data, sum, kCount, ncclFloat32, ncclSum, comm, stream));
  }
  CHECK_NCCL(ncclBroadcast(sum, data, kCount, ncclFloat32, 0, comm, stream));
  CHECK_HIP(hipStreamSynchronize(stream));
  CHECK_NCCL(ncclCommDestroy(comm));
  CHECK_HIP(hipFree(data));
  CHECK_HIP(hipFree(sum));
  CHECK_HIP(hipStreamDestroy(stream));
  std::printf("rccl_ranks: rank %d of 2: %d iterations ok\n", rank, iterations);
  std::fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  int iterations = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N]\n", argv[0]);
      return 64;
    }
  }
  int fds[2];
  if (pipe(fds) != 0) return 4;
  const pid_t child = fork();
  if (child < 0) return 4;
  ncclUniqueId id{};
  if (child == 0) {
    close(fds[1]);
    size_t got = 0;
    while (got < sizeof id) {
      const ssize_t n = read(fds[0], reinterpret_cast<char*>(&id) + got, sizeof id - got);
      if (n <= 0) _exit(5);
      got += static_cast<size_t>(n);
    }
    _exit(run_rank(1, id, iterations));
  }
  close(fds[0]);
  CHECK_NCCL(ncclGetUniqueId(&id));
  if (write(fds[1], &id, sizeof id) != static_cast<ssize_t>(sizeof id)) return 4;
  close(fds[1]);
  const int result = run_rank(0, id, iterations);
  int status = 0;
  waitpid(child, &status, 0);
  return result != 0 ? result : (WIFEXITED(status) ? WEXITSTATUS(status) : 6);
}
