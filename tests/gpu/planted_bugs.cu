// Deliberately wrong algorithms: verification must fail each of them (a test that can fail), and
// one that kills the CUDA context, which the runner must record and stop at.
#include <atomic>

#include "algorithms/launch/common.cuh"
#include "tests/gpu/planted_bugs.hpp"

namespace mmlab::test {
namespace {

enum class Bug { none, skip_last_term, leave_corner, reduced_precision, trap };

__device__ float round_to_10_bits(float x) {  // keep 10 explicit mantissa bits, as reduced-precision units do
  return __uint_as_float(__float_as_uint(x) & 0xFFFFE000u);
}

template <Bug kBug>
__global__ void buggy_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  if (kBug == Bug::trap) __trap();  // a sticky error: the context is lost
  if (kBug == Bug::leave_corner && row == m - 1 && col == n - 1) return;
  const int terms = kBug == Bug::skip_last_term ? k - 1 : k;
  float acc = 0.f;
  for (int p = 0; p < terms; ++p) {
    float x = a[long(row) * k + p], y = b[long(p) * n + col];
    if (kBug == Bug::reduced_precision) x = round_to_10_bits(x), y = round_to_10_bits(y);
    acc = fmaf(x, y, acc);
  }
  c[long(row) * n + col] = acc;
}

// Right on its first call (the verification) and on most later ones, wrong on every third: as a
// kernel that races now and then. Each algorithm made with it counts its own calls.
std::atomic<long> g_calls[2];
template <int kTag>
void now_and_then(const RunArgs& r) {
  std::atomic<long>& calls = g_calls[kTag];
  const dim3 block(16, 16), grid(ceil_div(r.problem.n, 16), ceil_div(r.problem.m, 16));
  const int m = int(r.problem.m), n = int(r.problem.n), k = int(r.problem.k);
  if (++calls % 3 == 0)
    buggy_kernel<Bug::skip_last_term><<<grid, block, 0, r.stream>>>(r.a, r.b, r.c, m, n, k);
  else
    buggy_kernel<Bug::none><<<grid, block, 0, r.stream>>>(r.a, r.b, r.c, m, n, k);
  MMLAB_CHECK_LAUNCH();
}

template <Bug kBug>
Algorithm make(const char* name) {
  Algorithm a;
  a.name = name;
  a.variants = {{"default", "planted bug"}};
  a.launch_config = [](const Problem& p, const Params&, const DeviceInfo&) {
    LaunchConfig lc;
    lc.block = {16, 16, 1};
    lc.grid = {ceil_div(p.n, 16), ceil_div(p.m, 16), 1};
    return lc;
  };
  a.run = [](const RunArgs& r) {
    const dim3 block(16, 16), grid(ceil_div(r.problem.n, 16), ceil_div(r.problem.m, 16));
    buggy_kernel<kBug>
        <<<grid, block, 0, r.stream>>>(r.a, r.b, r.c, int(r.problem.m), int(r.problem.n), int(r.problem.k));
    MMLAB_CHECK_LAUNCH();
  };
  return a;
}

}  // namespace

const Algorithm& skips_last_term() {
  static const Algorithm a = make<Bug::skip_last_term>("skips_last_term");
  return a;
}
const Algorithm& leaves_corner() {
  static const Algorithm a = make<Bug::leave_corner>("leaves_corner");
  return a;
}
const Algorithm& reduced_precision() {
  static const Algorithm a = make<Bug::reduced_precision>("reduced_precision");
  return a;
}
const Algorithm& wrong_now_and_then() {
  static const Algorithm a = [] {
    Algorithm x = make<Bug::none>("wrong_now_and_then");
    x.run = now_and_then<0>;
    return x;
  }();
  return a;
}
const Algorithm& wrong_now_and_then_nondeterministic() {
  static const Algorithm a = [] {
    Algorithm x = make<Bug::none>("wrong_now_and_then_nondeterministic");
    x.run = now_and_then<1>;
    x.set_nondeterminism("default", "planted: judged by sampled entries, as split-k's atomics are");
    x.is_nondeterministic = [](const Problem&, const Params&) { return true; };
    return x;
  }();
  return a;
}
void restart_now_and_then() { g_calls[0] = 0, g_calls[1] = 0; }

const Algorithm& traps() {
  static const Algorithm a = make<Bug::trap>("traps");
  return a;
}

}  // namespace mmlab::test
