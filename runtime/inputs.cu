// Inputs, the float64 reference product and the comparison, on the GPU.
//
// The reference reads the float32 inputs and accumulates in float64, so the harness needs no
// float64 copies of A and B: device memory holds A, B, C and two m x n float64 buffers (A B and
// |A| |B|, the scale of each element's rounding error).
#include <math_constants.h>

#include <algorithm>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "core/random.hpp"

namespace mmlab {

namespace {

template <L2Keep keep>
__global__ void fill_input_kernel(float* x, long rows, long cols, Inputs kind, unsigned long long seed,
                                  unsigned long long id) {
  const std::size_t count = std::size_t(rows) * std::size_t(cols);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = input_value(kind, seed, id, i / cols, i % cols, rows, cols);
    if constexpr (keep == L2Keep::evict_first)
      __stcs(&x[i], v);
    else
      x[i] = v;
  }
}

// Reference tile: 64 x 64 outputs per 16 x 16-thread block, 4 x 4 per thread, k in steps of 16.
constexpr int kRefTile = 64, kRefDepth = 16, kRefThreads = 16, kRefPer = kRefTile / kRefThreads;

__global__ void __launch_bounds__(kRefThreads* kRefThreads)
    reference_kernel(const float* __restrict__ a, const float* __restrict__ b, double* __restrict__ c,
                     double* __restrict__ sumabs, long m, long n, long k) {
  __shared__ float as[kRefDepth][kRefTile + 1];  // (depth, rows): A's tile, transposed
  __shared__ float bs[kRefDepth][kRefTile];      // (depth, cols)
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kRefThreads + tx;
  const long row0 = long(blockIdx.y) * kRefTile, col0 = long(blockIdx.x) * kRefTile;
  double acc[kRefPer][kRefPer] = {}, mag[kRefPer][kRefPer] = {};
  for (long p0 = 0; p0 < k; p0 += kRefDepth) {
    for (int e = tid; e < kRefTile * kRefDepth; e += kRefThreads * kRefThreads) {
      const int i = e / kRefDepth, p = e % kRefDepth;
      const long gi = row0 + i, gp = p0 + p;
      as[p][i] = gi < m && gp < k ? a[gi * k + gp] : 0.f;
      const int q = e / kRefTile, j = e % kRefTile;
      const long gq = p0 + q, gj = col0 + j;
      bs[q][j] = gq < k && gj < n ? b[gq * n + gj] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kRefDepth; ++p) {
      double av[kRefPer], bv[kRefPer];
#pragma unroll
      for (int r = 0; r < kRefPer; ++r) {
        av[r] = as[p][ty + kRefThreads * r];
        bv[r] = bs[p][tx + kRefThreads * r];
      }
#pragma unroll
      for (int r = 0; r < kRefPer; ++r)
#pragma unroll
        for (int s = 0; s < kRefPer; ++s) {
          acc[r][s] = fma(av[r], bv[s], acc[r][s]);
          mag[r][s] = fma(fabs(av[r]), fabs(bv[s]), mag[r][s]);
        }
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kRefPer; ++r)
#pragma unroll
    for (int s = 0; s < kRefPer; ++s) {
      const long i = row0 + ty + kRefThreads * r, j = col0 + tx + kRefThreads * s;
      if (i < m && j < n) {
        c[i * n + j] = acc[r][s];
        sumabs[i * n + j] = mag[r][s];
      }
    }
}

struct Partial {
  double max_abs_err, sum_sq_err, max_abs_ref, max_sumabs_err, sum_sumabs_err;
  unsigned long long over_1e3, nonfinite;
};

constexpr int kCompareThreads = 256, kCompareBlocks = 1024;

__global__ void __launch_bounds__(kCompareThreads)
    compare_kernel(const float* __restrict__ c, const double* __restrict__ ref,
                   const double* __restrict__ sumabs, std::size_t count, Partial* __restrict__ out) {
  Partial p{0, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = c[i];
    if (!isfinite(v)) {
      ++p.nonfinite;
      continue;
    }
    const double d = fabs(double(v) - ref[i]);
    p.max_abs_err = fmax(p.max_abs_err, d);
    p.max_abs_ref = fmax(p.max_abs_ref, fabs(ref[i]));
    const double r = sumabs[i] > 0 ? d / sumabs[i] : d == 0 ? 0.0 : CUDART_INF;
    p.max_sumabs_err = fmax(p.max_sumabs_err, r);
    p.sum_sumabs_err += r;
    p.sum_sq_err += d * d;
    p.over_1e3 += d > 1e-3;
  }
  __shared__ Partial s[kCompareThreads];
  s[threadIdx.x] = p;
  __syncthreads();
  for (int half = kCompareThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      Partial& x = s[threadIdx.x];
      const Partial& y = s[threadIdx.x + half];
      x.max_abs_err = fmax(x.max_abs_err, y.max_abs_err);
      x.max_abs_ref = fmax(x.max_abs_ref, y.max_abs_ref);
      x.max_sumabs_err = fmax(x.max_sumabs_err, y.max_sumabs_err);
      x.sum_sumabs_err += y.sum_sumabs_err;
      x.sum_sq_err += y.sum_sq_err;
      x.over_1e3 += y.over_1e3;
      x.nonfinite += y.nonfinite;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

unsigned blocks_for(std::size_t count, int threads, unsigned cap) {
  return unsigned(std::min<std::size_t>((count + threads - 1) / threads, cap));
}

__global__ void fill_bits_kernel(std::uint32_t* x, std::size_t count, std::uint32_t bits) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = bits;
}

// Block b reads chunk c (256 floats) in pass p when c = b + p * stride (mod the grid), chunk c + grid
// with it, and so on: each chunk by `readers` blocks stride apart. Nothing is written: `sum_out` is null
// (the compiler cannot know it, so the loads stay).
template <L2Keep keep>
__global__ void read_kernel(const float* __restrict__ x, std::size_t count, int readers, unsigned stride,
                            float* sum_out) {
  float sum = 0;
  for (int pass = 0; pass < readers; ++pass) {
    const std::size_t first = (blockIdx.x + std::size_t(pass) * stride) % gridDim.x;
    for (std::size_t i = first * blockDim.x + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
      sum += keep == L2Keep::evict_first ? __ldcs(&x[i]) : x[i];
  }
  if (sum_out) *sum_out = sum;
}

}  // namespace

void read_from_blocks(const float* x, std::size_t count, int readers, CUstream_st* stream, L2Keep keep) {
  if (count == 0 || readers < 1) return;
  const unsigned grid = std::max(unsigned(readers), blocks_for(count, 256, 1024));
  const auto kernel = keep == L2Keep::evict_first ? read_kernel<L2Keep::evict_first> : read_kernel<L2Keep::normal>;
  kernel<<<grid, 256, 0, stream>>>(x, count, readers, grid / unsigned(readers), nullptr);
  MMLAB_CHECK_LAUNCH();
}

void fill_input_device(float* x, long rows, long cols, Inputs kind, unsigned long long seed,
                       unsigned long long id, CUstream_st* stream, L2Keep keep) {
  const std::size_t count = std::size_t(rows) * std::size_t(cols);
  if (count == 0) return;
  const auto kernel =
      keep == L2Keep::evict_first ? fill_input_kernel<L2Keep::evict_first> : fill_input_kernel<L2Keep::normal>;
  kernel<<<blocks_for(count, 256, 65535), 256, 0, stream>>>(x, rows, cols, kind, seed, id);
  MMLAB_CHECK_LAUNCH();
}

void poison_device(float* x, std::size_t count, CUstream_st* stream, std::uint32_t bits) {
  if (bits == 0xFFFFFFFFu) {  // a memset's bytes
    MMLAB_CHECK(cudaMemsetAsync(x, 0xFF, count * sizeof(float), stream));
    return;
  }
  if (count == 0) return;
  fill_bits_kernel<<<blocks_for(count, 256, 65535), 256, 0, stream>>>(reinterpret_cast<std::uint32_t*>(x), count, bits);
  MMLAB_CHECK_LAUNCH();
}

void reference_device(const float* a, const float* b, double* ref, double* sumabs, long m, long n, long k,
                      CUstream_st* stream) {
  const dim3 block(kRefThreads, kRefThreads);
  const dim3 grid(unsigned((n + kRefTile - 1) / kRefTile), unsigned((m + kRefTile - 1) / kRefTile));
  reference_kernel<<<grid, block, 0, stream>>>(a, b, ref, sumabs, m, n, k);
  MMLAB_CHECK_LAUNCH();
}

ErrorStats compare_device(const float* c, const double* ref, const double* sumabs, std::size_t count,
                          CUstream_st* stream) {
  const unsigned blocks = std::max(1u, blocks_for(count, kCompareThreads, kCompareBlocks));
  Buffer partials(blocks * sizeof(Partial), Buffer::Kind::device);
  compare_kernel<<<blocks, kCompareThreads, 0, stream>>>(c, ref, sumabs, count, partials.as<Partial>());
  MMLAB_CHECK_LAUNCH();
  std::vector<Partial> host(blocks);
  MMLAB_CHECK(cudaStreamSynchronize(stream));
  copy_to_host(host.data(), partials.get(), blocks * sizeof(Partial));
  ErrorStats e;
  e.count = count;
  for (const Partial& p : host) {
    ErrorStats x;
    x.max_abs_err = p.max_abs_err;
    x.sum_sq_err = p.sum_sq_err;
    x.max_abs_ref = p.max_abs_ref;
    x.max_sumabs_err = p.max_sumabs_err;
    x.sum_sumabs_err = p.sum_sumabs_err;
    x.over_1e3 = std::size_t(p.over_1e3);
    x.nonfinite = std::size_t(p.nonfinite);
    e.merge(x);
  }
  return e;
}

}  // namespace mmlab
