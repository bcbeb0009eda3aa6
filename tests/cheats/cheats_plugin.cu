// Kernels that try to fool the lab (issue #60), each beside an honest twin that does the same work the
// honest way. The lab must fail every cheat's row and pass every twin's (tests/cheats/cheats_test.sh).
// Each computes C = A B with one small kernel (one thread per entry); what differs is where and when.
//   GPU (run on the given stream unless said)
//     cheat_side_stream    on a stream of its own, not joined: the lab's timer never sees the work
//     honest_fork_join     on a stream of its own, joined both ways with events (waits for the lab's
//                          stream, the lab's stream waits for it)
//     cheat_legacy_stream  on the legacy default stream (0), which the lab's non-blocking stream does not
//                          wait for
//     cheat_per_thread     on the per-thread default stream
//     honest_per_thread    on the per-thread default stream, joined with events
//     cheat_late_thread    a host thread launches the product 1 ms after run() returned
//     cheat_right_once     computes on its first call for a problem only
//     cheat_zeros_after    computes on its first call, zeros C on later ones
//     cheat_half           computes on its first call, half of C's rows on later ones
//     honest_halves        two launches of half of C's rows each, every call
//     honest_plain         the product, every call
//     cheat_stored         computes on its first call and keeps C; later calls copy the kept C (same
//                          pointers, same shape: the same answer, at copy speed)
//     honest_through       the product into a buffer of its own, then copied into C, every call
//     cheat_poison_aware   computes only when C holds the verification's poison (all bits set at C[0]),
//                          as a kernel that wants to be right only when it is judged would
//     honest_reads_c       reads C[0] the same way first, then computes every call
//     cheat_past_stop      right on its first call; later, each call's product is enqueued on the lab's
//                          stream at the start of the next call: past the stop event of its own
//     honest_thread_joined a host thread enqueues the product on the lab's stream; run() joins it
//     cheat_tf32           TF32 tensor cores (WMMA, 10-bit mantissas) under an FP32 name; its honest
//                          counterpart is honest_plain (a plugin declares no precision: FP32)
//   issue #81: answers from memory (each keeps C per pointers and shape, and a signature of its inputs)
//     cheat_memo_sampled   keeps its first product (the verification's) and 64 sampled entries of its A and B;
//                          each call compares them with this call's (one small kernel, no host
//                          synchronisation), and where they match the product kernel returns at once and a
//                          copy kernel writes the kept C
//     honest_memo_sampled  the same kernels, the product every call
//     cheat_memo_checksum  the same with a checksum of every entry of A and B as the signature
//     honest_memo_checksum the same kernels, the product every call
//     cheat_count_calls    counts its calls: the product on the ones it guesses are judged (the first two and
//                          every seventh), the kept C copied on the others
//     honest_count_calls   counts its calls the same way, the product every call
//   host (C in host memory)
//     cheat_host_once      computes on its first call for a problem only
//     cheat_host_late      a host thread writes C 2 ms after run() returned
//     cheat_host_stored    computes on its first call and keeps C; copies it on later ones
//     cheat_host_poison_aware  computes only when C[0] holds the verification's poison (std::nanf's)
//     cheat_host_memo      a signature of 64 sampled entries of A and B; where it matches its first product's,
//                          that C copied in
//     honest_host_memo     the same signature and copy, the product every call
//     honest_host          the product, every call
#include <mma.h>
#include <mmlab/plugin.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>
#include <algorithm>
#include <string>

namespace {

__global__ void product(const float* a, const float* b, float* c, long m, long n, long k, long row0, long rows) {
  const long row = row0 + long(blockIdx.y) * blockDim.y + threadIdx.y,
             col = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= row0 + rows || row >= m || col >= n) return;
  float acc = 0.f;
  for (long l = 0; l < k; ++l) acc += a[row * k + l] * b[l * n + col];
  c[row * n + col] = acc;
}

// The product as above where *flag == when (flag null: always).
__global__ void product_if(const float* a, const float* b, float* c, long m, long n, long k, const int* flag,
                           int when) {
  if (flag && *flag != when) return;
  const long row = long(blockIdx.y) * blockDim.y + threadIdx.y, col = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (long l = 0; l < k; ++l) acc += a[row * k + l] * b[l * n + col];
  c[row * n + col] = acc;
}

// *go = C[0] holds the verification's poison (every bit set).
__global__ void poisoned(const float* c, int* go) { *go = __float_as_uint(c[0]) == 0xFFFFFFFFu; }

// One warp per 16 x 16 tile of C on TF32 tensor cores: A's and B's tiles staged through shared memory
// (zeros past the edges), rounded to TF32, multiplied with FP32 accumulation.
__global__ void product_tf32(const float* a, const float* b, float* c, long m, long n, long k) {
  using namespace nvcuda;
  __shared__ __align__(32) float as[16 * 8], bs[8 * 16], cs[16 * 16];
  const long row0 = long(blockIdx.y) * 16, col0 = long(blockIdx.x) * 16;
  const int lane = threadIdx.x;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.f);
  for (long l0 = 0; l0 < k; l0 += 8) {
    for (int i = lane; i < 128; i += 32) {
      const long r = row0 + i / 8, q = l0 + i % 8, qb = l0 + i / 16, cb = col0 + i % 16;
      as[i] = r < m && q < k ? a[r * k + q] : 0.f;
      bs[i] = qb < k && cb < n ? b[qb * n + cb] : 0.f;
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::load_matrix_sync(fa, as, 8);
    wmma::load_matrix_sync(fb, bs, 16);
    for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
    for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(cs, acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = lane; i < 256; i += 32) {
    const long r = row0 + i / 16, col = col0 + i % 16;
    if (r < m && col < n) c[r * n + col] = cs[i];
  }
}

int32_t say(char* out, size_t size, const char* text) {
  std::snprintf(out, size, "%s", text);
  return 1;
}

// Rows [row0, row0 + rows) of C on stream s.
int32_t launch(const mmlab_problem* p, const float* a, const float* b, float* c, cudaStream_t s, char* message,
               size_t size, long row0 = 0, long rows = -1) {
  if (rows < 0) rows = p->m;
  if (rows <= 0) return 0;
  const dim3 block(16, 16), grid(unsigned((p->n + 15) / 16), unsigned((rows + 15) / 16));
  product<<<grid, block, 0, s>>>(a, b, c, p->m, p->n, p->k, row0, rows);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : say(message, size, cudaGetErrorString(e));
}

int32_t supports(const mmlab_problem* p, const mmlab_params*, char* reason, size_t size) {
  if ((p->m + 15) / 16 > 65535) return say(reason, size, "m / 16 must be below 65536 (the grid's y)");
  if (double(p->m) * p->n * p->k > 1e11) return say(reason, size, "a test kernel: at most 1e11 multiply-adds");
  return 0;
}

// How many times run() has seen this problem (the first call is the lab's verification).
int calls(const char* who, const mmlab_problem* p) {
  static std::mutex lock;
  static std::map<std::tuple<std::string, long, long, long>, int> seen;
  std::lock_guard<std::mutex> hold(lock);
  return seen[{who, p->m, p->n, p->k}]++;
}

cudaStream_t own_stream() {
  static cudaStream_t s = [] {
    cudaStream_t t = nullptr;
    cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking);
    return t;
  }();
  return s;
}

// `from` waits for everything enqueued on `to` so far.
void join(cudaStream_t from, cudaStream_t to) {
  cudaEvent_t e = nullptr;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  cudaEventRecord(e, to);
  cudaStreamWaitEvent(from, e, 0);
  cudaEventDestroy(e);
}

// The late thread of the last call, joined before the next call and at exit.
struct Late {
  std::thread t;
  void run(std::thread next) {
    if (t.joinable()) t.join();
    t = std::move(next);
  }
  ~Late() {
    if (t.joinable()) t.join();
  }
};
Late& late() {
  static Late l;
  return l;
}

#define RUN_ARGS                                                                                           \
  const mmlab_problem *p, const mmlab_params *, const float *a, const float *b, float *c, void *, void *stream, \
      char *message, size_t size

int32_t side_stream(RUN_ARGS) { return launch(p, a, b, c, own_stream(), message, size); }

int32_t fork_join(RUN_ARGS) {
  const cudaStream_t lab = static_cast<cudaStream_t>(stream), side = own_stream();
  join(side, lab);
  if (launch(p, a, b, c, side, message, size)) return 1;
  join(lab, side);
  return 0;
}

int32_t legacy_stream(RUN_ARGS) { return launch(p, a, b, c, cudaStreamLegacy, message, size); }

int32_t per_thread(RUN_ARGS) { return launch(p, a, b, c, cudaStreamPerThread, message, size); }

int32_t per_thread_joined(RUN_ARGS) {
  const cudaStream_t lab = static_cast<cudaStream_t>(stream);
  join(cudaStreamPerThread, lab);
  if (launch(p, a, b, c, cudaStreamPerThread, message, size)) return 1;
  join(lab, cudaStreamPerThread);
  return 0;
}

int32_t late_thread(RUN_ARGS) {
  const mmlab_problem q = *p;
  late().run(std::thread([q, a, b, c] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    char ignored[8];
    launch(&q, a, b, c, own_stream(), ignored, sizeof ignored);
  }));
  return 0;
}

int32_t right_once(RUN_ARGS) {
  if (calls("right_once", p) > 0) return 0;
  return launch(p, a, b, c, static_cast<cudaStream_t>(stream), message, size);
}

int32_t zeros_after(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (calls("zeros_after", p) == 0) return launch(p, a, b, c, s, message, size);
  return cudaMemsetAsync(c, 0, sizeof(float) * p->m * p->n, s) == cudaSuccess ? 0 : say(message, size, "memset");
}

int32_t half(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return launch(p, a, b, c, s, message, size, 0, calls("half", p) == 0 ? p->m : p->m / 2);
}

int32_t halves(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return launch(p, a, b, c, s, message, size, 0, p->m / 2) || launch(p, a, b, c, s, message, size, p->m / 2, p->m - p->m / 2);
}

int32_t plain(RUN_ARGS) { return launch(p, a, b, c, static_cast<cudaStream_t>(stream), message, size); }

// A device buffer of `bytes` kept per (who, C's pointer, shape); `fresh` says it was just made.
void* kept(const char* who, const mmlab_problem* p, const void* c, size_t bytes, bool* fresh, bool device) {
  static std::mutex lock;
  static std::map<std::tuple<std::string, const void*, long, long, long>, void*> buffers;
  std::lock_guard<std::mutex> hold(lock);
  void*& b = buffers[{who, c, p->m, p->n, p->k}];
  *fresh = b == nullptr;
  if (!b) {
    if (device) cudaMalloc(&b, bytes);
    else b = std::malloc(bytes);
  }
  return b;
}

int32_t stored(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const size_t bytes = sizeof(float) * p->m * p->n;
  bool first = false;
  void* keep = kept("stored", p, c, bytes, &first, true);
  if (first) {
    if (launch(p, a, b, c, s, message, size)) return 1;
    return cudaMemcpyAsync(keep, c, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : say(message, size, "copy");
  }
  return cudaMemcpyAsync(c, keep, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : say(message, size, "copy");
}

// Issue #81's memoising kernels. Per (who, pointers, shape): the kept C, the signature of the inputs it
// is the product of, and the flag `same` (the signature of this call's inputs equals it), all on the GPU.
struct Memo {
  float* c = nullptr;
  float* signature = nullptr;        // 64 sampled entries (sampled) ...
  unsigned long long* sums = nullptr;  // ... or [this call's checksum, the kept one] (checksum)
  int* flags = nullptr;              // [same, valid]
};
Memo& memo(const char* who, const mmlab_problem* p, const void* a, const void* c) {
  static std::mutex lock;
  static std::map<std::tuple<std::string, const void*, const void*, long, long, long>, Memo> all;
  std::lock_guard<std::mutex> hold(lock);
  Memo& m = all[{who, a, c, p->m, p->n, p->k}];
  if (!m.c) {
    cudaMalloc(&m.c, sizeof(float) * std::max<long>(1, p->m * p->n));
    cudaMalloc(&m.signature, 2 * 64 * sizeof(float));
    cudaMalloc(&m.sums, 2 * sizeof(unsigned long long));
    cudaMalloc(&m.flags, 2 * sizeof(int));
    cudaMemset(m.flags, 0, 2 * sizeof(int));
    cudaMemset(m.sums, 0, 2 * sizeof(unsigned long long));
    cudaDeviceSynchronize();
  }
  return m;
}

__device__ unsigned long long sample_place(int t, unsigned long long count) {
  unsigned long long z = (t + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
  return (z ^ (z >> 29)) % count;
}

// One block of 64 threads: same = the 64 sampled entries (32 of A, 32 of B) equal the kept ones; the
// new ones staged behind them (signature[64..127]).
__global__ void sample_kernel(const float* a, const float* b, long m, long n, long k, float* signature, int* flags) {
  const int t = threadIdx.x;
  const float v = t < 32 ? a[sample_place(t, (unsigned long long)(m * k))] : b[sample_place(t, (unsigned long long)(k * n))];
  const bool eq = flags[1] && __float_as_uint(signature[t]) == __float_as_uint(v);
  signature[64 + t] = v;
  const int all = __syncthreads_and(eq);
  if (t == 0) flags[0] = all != 0;
}

__device__ unsigned long long mix_bits(unsigned long long i, unsigned bits) {
  const unsigned long long z = ((i << 32) ^ bits) * 0x9E3779B97F4A7C15ull;
  return z ^ (z >> 29);
}
__global__ void checksum_kernel(const float* a, long na, const float* b, long nb, unsigned long long* sums) {
  unsigned long long h = 0;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < na + nb; i += long(gridDim.x) * blockDim.x)
    h += mix_bits(i, __float_as_uint(i < na ? a[i] : b[i - na]));
  atomicAdd(&sums[0], h);
}
__global__ void decide_kernel(unsigned long long* sums, int* flags) { flags[0] = flags[1] && sums[0] == sums[1]; }

// Where `same` (and `memoise`): C = the kept C. The first product (the verification's inputs) is kept
// with its signature; later ones are not (a cache that would serve inputs it has seen). The checksum
// restarts from 0 for the next call.
__global__ void keep_kernel(float* c, float* kept, long count, bool memoise, float* signature,
                            unsigned long long* sums, int* flags) {
  const bool same = memoise && flags[0], keep = !flags[1];
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count; i += long(gridDim.x) * blockDim.x) {
    if (same) c[i] = kept[i];
    else if (keep) kept[i] = c[i];
  }
}
// After keep_kernel (stream-ordered, so every block of it saw the same flags): the first product's
// signature kept, the checksum restarted.
__global__ void close_kernel(float* signature, unsigned long long* sums, int* flags) {
  if (!flags[1]) {
    for (int t = 0; t < 64; ++t) signature[t] = signature[64 + t];
    sums[1] = sums[0], flags[1] = 1;
  }
  sums[0] = 0;
}

int32_t memoised(const char* who, bool checksum, bool memoise, RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  Memo& mm = memo(who, p, a, c);
  if (checksum) {
    checksum_kernel<<<256, 256, 0, s>>>(a, p->m * p->k, b, p->k * p->n, mm.sums);
    decide_kernel<<<1, 1, 0, s>>>(mm.sums, mm.flags);
  } else {
    sample_kernel<<<1, 64, 0, s>>>(a, b, p->m, p->n, p->k, mm.signature, mm.flags);
  }
  const dim3 block(16, 16), grid(unsigned((p->n + 15) / 16), unsigned((p->m + 15) / 16));
  if (p->m > 0 && p->n > 0) {
    // The cheat's product returns at once where the inputs are the kept ones; the twin's never does.
    product_if<<<grid, block, 0, s>>>(a, b, c, p->m, p->n, p->k, memoise ? mm.flags : nullptr, 0);  // not `same`
    keep_kernel<<<256, 256, 0, s>>>(c, mm.c, p->m * p->n, memoise, mm.signature, mm.sums, mm.flags);
  }
  close_kernel<<<1, 1, 0, s>>>(mm.signature, mm.sums, mm.flags);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : say(message, size, cudaGetErrorString(e));
}
int32_t memo_sampled(RUN_ARGS) { return memoised("memo_sampled", false, true, p, nullptr, a, b, c, nullptr, stream, message, size); }
int32_t honest_sampled(RUN_ARGS) { return memoised("honest_sampled", false, false, p, nullptr, a, b, c, nullptr, stream, message, size); }
int32_t memo_checksum(RUN_ARGS) { return memoised("memo_checksum", true, true, p, nullptr, a, b, c, nullptr, stream, message, size); }
int32_t honest_checksum(RUN_ARGS) { return memoised("honest_checksum", true, false, p, nullptr, a, b, c, nullptr, stream, message, size); }

// Calls counted per pointers and shape: the product on calls 0, 1 and every seventh (when it guesses it
// is judged) and the kept C copied on the others (cheat); the twin computes every call.
int32_t counted(const char* who, bool cheat, RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const int call = calls(who, p);
  const size_t bytes = sizeof(float) * p->m * p->n;
  bool first = false;
  void* keep = kept(who, p, c, bytes, &first, true);
  if (!cheat || call < 2 || call % 7 == 0) {
    if (launch(p, a, b, c, s, message, size)) return 1;
    return cudaMemcpyAsync(keep, c, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : say(message, size, "copy");
  }
  return cudaMemcpyAsync(c, keep, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : say(message, size, "copy");
}
int32_t count_calls(RUN_ARGS) { return counted("count_calls", true, p, nullptr, a, b, c, nullptr, stream, message, size); }
int32_t honest_count(RUN_ARGS) { return counted("honest_count", false, p, nullptr, a, b, c, nullptr, stream, message, size); }

int32_t through(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const size_t bytes = sizeof(float) * p->m * p->n;
  bool first = false;
  float* mine = static_cast<float*>(kept("through", p, c, bytes, &first, true));
  if (launch(p, a, b, mine, s, message, size)) return 1;
  return cudaMemcpyAsync(c, mine, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess ? 0 : say(message, size, "copy");
}

int* flag() {
  static int* f = [] {
    int* g = nullptr;
    cudaMalloc(&g, sizeof(int));
    return g;
  }();
  return f;
}

// The product behind the poison check: only where C held the verification's poison (`skip`), or always.
int32_t guarded(const mmlab_problem* p, const float* a, const float* b, float* c, cudaStream_t s, bool skip,
                char* message, size_t size) {
  poisoned<<<1, 1, 0, s>>>(c, flag());
  const dim3 block(16, 16), grid(unsigned((p->n + 15) / 16), unsigned((p->m + 15) / 16));
  product_if<<<grid, block, 0, s>>>(a, b, c, p->m, p->n, p->k, skip ? flag() : nullptr, 1);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : say(message, size, cudaGetErrorString(e));
}

int32_t poison_aware(RUN_ARGS) { return guarded(p, a, b, c, static_cast<cudaStream_t>(stream), true, message, size); }

int32_t reads_c(RUN_ARGS) { return guarded(p, a, b, c, static_cast<cudaStream_t>(stream), false, message, size); }

// Each call's product is enqueued at the start of the next call for the same C, on the lab's stream:
// after the stop event of the call it belongs to (a host thread enqueueing it later would do the same,
// but could outlive the lab's buffers and write freed memory). Right on its first call.
int32_t past_stop(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  static std::mutex lock;
  static std::map<const float*, std::tuple<long, long, long>> owed;  // C: the product it is owed
  std::lock_guard<std::mutex> hold(lock);
  const auto it = owed.find(c);
  if (it != owed.end() && it->second == std::make_tuple(p->m, p->n, p->k))
    if (launch(p, a, b, c, s, message, size)) return 1;
  if (calls("past_stop", p) == 0) {
    owed.erase(c);
    return launch(p, a, b, c, s, message, size);
  }
  owed[c] = {p->m, p->n, p->k};
  return 0;
}

int32_t thread_joined(RUN_ARGS) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const mmlab_problem q = *p;
  int32_t failed = 0;
  std::thread t([&] { failed = launch(&q, a, b, c, s, message, size); });
  t.join();
  return failed;
}

int32_t tf32(RUN_ARGS) {
  const dim3 grid(unsigned((p->n + 15) / 16), unsigned((p->m + 15) / 16));
  product_tf32<<<grid, 32, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c, p->m, p->n, p->k);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : say(message, size, cudaGetErrorString(e));
}

void host_product(const mmlab_problem* p, const float* a, const float* b, float* c) {
  for (long i = 0; i < p->m; ++i)
    for (long j = 0; j < p->n; ++j) {
      double acc = 0;
      for (long l = 0; l < p->k; ++l) acc += double(a[i * p->k + l]) * b[l * p->n + j];
      c[i * p->n + j] = float(acc);
    }
}

int32_t host_supports(const mmlab_problem* p, const mmlab_params*, char* reason, size_t size) {
  return double(p->m) * p->n * p->k > 1e9 ? say(reason, size, "a test product: at most 1e9 multiply-adds") : 0;
}

int32_t host_once(RUN_ARGS) {
  if (calls("host_once", p) == 0) host_product(p, a, b, c);
  return 0;
}

int32_t host_late(RUN_ARGS) {
  const mmlab_problem q = *p;
  late().run(std::thread([q, a, b, c] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    host_product(&q, a, b, c);
  }));
  return 0;
}

int32_t host_stored(RUN_ARGS) {
  const size_t bytes = sizeof(float) * p->m * p->n;
  bool first = false;
  void* keep = kept("host_stored", p, c, bytes, &first, false);
  if (first) {
    host_product(p, a, b, c);
    std::memcpy(keep, c, bytes);
  } else {
    std::memcpy(c, keep, bytes);
  }
  return 0;
}

int32_t host_poison_aware(RUN_ARGS) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, c, sizeof bits);
  if (bits == 0x7FC00000u) host_product(p, a, b, c);
  return 0;
}

// A signature of 64 sampled entries of A and B, per pointers and shape: where it matches the kept one,
// the kept C is copied in (cheat); the twin computes every call and keeps what it made.
int32_t host_memoised(const char* who, bool memoise, RUN_ARGS) {
  struct Kept {
    std::vector<float> c, signature;
  };
  static std::mutex lock;
  static std::map<std::tuple<std::string, const void*, const void*, long, long, long>, Kept> all;
  std::vector<float> now(64);
  const unsigned long long na = std::max<long>(1, p->m * p->k), nb = std::max<long>(1, p->k * p->n);
  for (int t = 0; t < 64; ++t) {
    unsigned long long z = (t + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 29;
    now[t] = p->m * p->k && p->k * p->n ? (t < 32 ? a[z % na] : b[z % nb]) : 0.f;
  }
  std::lock_guard<std::mutex> hold(lock);
  Kept& k = all[{who, a, c, p->m, p->n, p->k}];
  const size_t count = size_t(p->m) * p->n;
  if (memoise && k.signature.size() == 64 && std::memcmp(k.signature.data(), now.data(), 64 * sizeof(float)) == 0) {
    std::memcpy(c, k.c.data(), count * sizeof(float));
    return 0;
  }
  host_product(p, a, b, c);
  if (k.signature.empty()) k.c.assign(c, c + count), k.signature = now;  // the first product's (the verification's)
  return 0;
}
int32_t host_memo(RUN_ARGS) { return host_memoised("host_memo", true, p, nullptr, a, b, c, nullptr, stream, message, size); }
int32_t host_memo_honest(RUN_ARGS) { return host_memoised("host_memo_honest", false, p, nullptr, a, b, c, nullptr, stream, message, size); }

int32_t host_honest(RUN_ARGS) {
  host_product(p, a, b, c);
  return 0;
}

const mmlab_variant kDefault[] = {{"default", "as described"}};
constexpr mmlab_backend kGpu = MMLAB_BACKEND_DEVICE, kHost = MMLAB_BACKEND_HOST;

const mmlab_algorithm kAlgorithms[] = {
    {"cheat_side_stream", "a cheat: the product on a stream of its own, not joined", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, side_stream},
    {"honest_fork_join", "honest: the product on a stream of its own, joined with events", kGpu, kDefault, 1, nullptr,
     0, supports, nullptr, fork_join},
    {"cheat_legacy_stream", "a cheat: the product on the legacy default stream", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, legacy_stream},
    {"cheat_per_thread", "a cheat: the product on the per-thread default stream", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, per_thread},
    {"honest_per_thread", "honest: the product on the per-thread default stream, joined with events", kGpu, kDefault,
     1, nullptr, 0, supports, nullptr, per_thread_joined},
    {"cheat_late_thread", "a cheat: a host thread launches the product after run() returned", kGpu, kDefault, 1,
     nullptr, 0, supports, nullptr, late_thread},
    {"cheat_right_once", "a cheat: the product on its first call only", kGpu, kDefault, 1, nullptr, 0, supports,
     nullptr, right_once},
    {"cheat_zeros_after", "a cheat: the product on its first call, zeros after", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, zeros_after},
    {"cheat_half", "a cheat: the product on its first call, half of C's rows after", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, half},
    {"honest_halves", "honest: two launches of half of C's rows each", kGpu, kDefault, 1, nullptr, 0, supports,
     nullptr, halves},
    {"honest_plain", "honest: the product on the given stream", kGpu, kDefault, 1, nullptr, 0, supports, nullptr,
     plain},
    {"cheat_stored", "a cheat: the product on its first call, kept and copied on later ones", kGpu, kDefault, 1,
     nullptr, 0, supports, nullptr, stored},
    {"honest_through", "honest: the product into a buffer of its own, then copied into C", kGpu, kDefault, 1, nullptr,
     0, supports, nullptr, through},
    {"cheat_poison_aware", "a cheat: the product only where C holds the verification's poison", kGpu, kDefault, 1,
     nullptr, 0, supports, nullptr, poison_aware},
    {"honest_reads_c", "honest: reads C's first entry, then the product every call", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, reads_c},
    {"cheat_past_stop", "a cheat: right once; then each call's product enqueued at the start of the next call", kGpu, kDefault, 1, nullptr, 0, supports, nullptr, past_stop},
    {"honest_thread_joined", "honest: a host thread enqueues the product on the lab's stream, joined before return",
     kGpu, kDefault, 1, nullptr, 0, supports, nullptr, thread_joined},
    {"cheat_tf32", "a cheat: TF32 tensor cores under an FP32 name", kGpu, kDefault, 1, nullptr, 0, supports, nullptr,
     tf32},
    {"cheat_memo_sampled", "a cheat: the kept C where 64 sampled entries of A and B match its first product's", kGpu,
     kDefault, 1, nullptr, 0, supports, nullptr, memo_sampled},
    {"honest_memo_sampled", "honest: the same sampled signature and copies, the product every call", kGpu, kDefault, 1,
     nullptr, 0, supports, nullptr, honest_sampled},
    {"cheat_memo_checksum", "a cheat: the kept C where a checksum of all of A and B matches its first product's", kGpu,
     kDefault, 1, nullptr, 0, supports, nullptr, memo_checksum},
    {"honest_memo_checksum", "honest: the same checksum and copies, the product every call", kGpu, kDefault, 1,
     nullptr, 0, supports, nullptr, honest_checksum},
    {"cheat_count_calls", "a cheat: the product on the calls it guesses are judged, the kept C on the others", kGpu,
     kDefault, 1, nullptr, 0, supports, nullptr, count_calls},
    {"honest_count_calls", "honest: counts its calls, the product every call", kGpu, kDefault, 1, nullptr, 0,
     supports, nullptr, honest_count},
    {"cheat_host_memo", "a cheat: the kept host C where 64 sampled entries of A and B match its first product's", kHost,
     kDefault, 1, nullptr, 0, host_supports, nullptr, host_memo},
    {"honest_host_memo", "honest: the same sampled signature, the host product every call", kHost, kDefault, 1,
     nullptr, 0, host_supports, nullptr, host_memo_honest},
    {"cheat_host_stored", "a cheat: the host product on its first call, kept and copied on later ones", kHost, kDefault,
     1, nullptr, 0, host_supports, nullptr, host_stored},
    {"cheat_host_once", "a cheat: the host product on its first call only", kHost, kDefault, 1, nullptr, 0,
     host_supports, nullptr, host_once},
    {"cheat_host_late", "a cheat: a host thread writes C after run() returned", kHost, kDefault, 1, nullptr, 0,
     host_supports, nullptr, host_late},
    {"cheat_host_poison_aware", "a cheat: the host product only where C holds the verification's poison", kHost,
     kDefault, 1, nullptr, 0, host_supports, nullptr, host_poison_aware},
    {"honest_host", "honest: the host product", kHost, kDefault, 1, nullptr, 0, host_supports, nullptr, host_honest},
};

const mmlab_plugin_info kInfo = {MMLAB_PLUGIN_ABI_VERSION, "the lab's cheats and their honest twins", kAlgorithms,
                                 int32_t(sizeof kAlgorithms / sizeof kAlgorithms[0])};

}  // namespace

extern "C" MMLAB_PLUGIN_EXPORT const mmlab_plugin_info* mmlab_plugin(void) { return &kInfo; }
