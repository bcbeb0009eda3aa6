// dram_probe: the DRAM bound the GEMV-like problems are judged against (issue #61): how fast a plain
// kernel moves bytes between DRAM and the SMs on this GPU, with nothing else to do.
//   copy   dst = src, 16-byte loads and stores, grid-stride: bytes read + bytes written per second
//   read   the sum of src (16-byte loads, one store per block): bytes read per second
// Each over buffers of 1 GiB (20x the H100's 50 MiB L2, so neither is served from it), the L2
// overwritten by another 256 MiB before each launch; the median of 20 launches timed with events,
// at 2, 4 and 8 blocks of 512 threads per SM. Prints CSV: device, kind, blocks_per_sm, gbytes, median_ms,
// GB/s.
// Run: build/bin/mmlab-dram-probe
#include <algorithm>
#include <cstdio>
#include <vector>

#include "runtime/cuda_check.hpp"

namespace {

constexpr int kThreads = 512, kLaunches = 20;
constexpr size_t kBytes = size_t(1) << 30, kFlushBytes = size_t(256) << 20;

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void read_kernel(const float4* __restrict__ src, size_t count, float* __restrict__ sink) {
  float s = 0.f;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const float4 v = src[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 1234.5f) sink[blockIdx.x] = s;  // never true on the zeros it reads: keeps the loads
}

}  // namespace

int main() {
  int device = 0, sms = 0;
  MMLAB_CHECK(cudaGetDevice(&device));
  MMLAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop{};
  MMLAB_CHECK(cudaGetDeviceProperties(&prop, device));
  float4 *src = nullptr, *dst = nullptr;
  float* sink = nullptr;
  char* flush = nullptr;
  MMLAB_CHECK(cudaMalloc(&src, kBytes));
  MMLAB_CHECK(cudaMalloc(&dst, kBytes));
  MMLAB_CHECK(cudaMalloc(&sink, sizeof(float) * 65536));
  MMLAB_CHECK(cudaMalloc(&flush, kFlushBytes));
  MMLAB_CHECK(cudaMemset(src, 0, kBytes));
  cudaEvent_t start, stop;
  MMLAB_CHECK(cudaEventCreate(&start));
  MMLAB_CHECK(cudaEventCreate(&stop));
  const size_t count = kBytes / sizeof(float4);
  std::printf("device,kind,blocks_per_sm,gbytes,median_ms,gb_per_s\n");
  for (const bool copy : {true, false})
    for (const int per_sm : {2, 4, 8}) {
      std::vector<float> ms;
      for (int i = 0; i < kLaunches + 1; ++i) {
        MMLAB_CHECK(cudaMemsetAsync(flush, i, kFlushBytes));
        MMLAB_CHECK(cudaEventRecord(start));
        if (copy)
          copy_kernel<<<sms * per_sm, kThreads>>>(src, dst, count);
        else
          read_kernel<<<sms * per_sm, kThreads>>>(src, count, sink);
        MMLAB_CHECK(cudaGetLastError());
        MMLAB_CHECK(cudaEventRecord(stop));
        MMLAB_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        MMLAB_CHECK(cudaEventElapsedTime(&t, start, stop));
        if (i > 0) ms.push_back(t);  // the first launch warms up
      }
      std::sort(ms.begin(), ms.end());
      const double median = ms[ms.size() / 2], gbytes = double(copy ? 2 * kBytes : kBytes) / 1e9;
      std::printf("%s (%d SMs),%s,%d,%.3f,%.4f,%.1f\n", prop.name, sms, copy ? "copy" : "read", per_sm, gbytes, median,
                  gbytes / (median / 1e3));
    }
  return 0;
}
