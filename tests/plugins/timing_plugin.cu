// Plugins that test the clock (tests/gpu/harness_gpu_test.cpp, Clock.*): each computes C = A B
// correctly with one small kernel, but its run() does what a library call or a dispatcher may do on
// the host around the launch.
//   slow_host   sleeps 5 ms on the host before it launches: the GPU's time is a few microseconds,
//               and kernel scope must say so (the host's 5 ms go to host_ms)
//   syncing     waits for its own kernel inside run() (cudaStreamSynchronize): it cannot be timed
//               behind a blocking kernel; the harness must find that out by the timeout, not hang
#include <mmlab/plugin.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace {

// One thread per element of C; A (m, k), B (k, n), C (m, n) row-major.
__global__ void product(const float* a, const float* b, float* c, long m, long n, long k) {
  const long row = long(blockIdx.y) * blockDim.y + threadIdx.y, col = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (long l = 0; l < k; ++l) acc += a[row * k + l] * b[l * n + col];
  c[row * n + col] = acc;
}

int32_t say(char* out, size_t size, const char* text) {
  std::snprintf(out, size, "%s", text);
  return 1;
}

int32_t launch(const mmlab_problem* p, const float* a, const float* b, float* c, cudaStream_t s, char* message,
               size_t size) {
  const dim3 block(16, 16), grid(unsigned((p->n + 15) / 16), unsigned((p->m + 15) / 16));
  product<<<grid, block, 0, s>>>(a, b, c, p->m, p->n, p->k);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : say(message, size, cudaGetErrorString(e));
}

int32_t supports(const mmlab_problem* p, const mmlab_params*, char* reason, size_t size) {
  return (p->m + 15) / 16 > 65535 ? say(reason, size, "m / 16 must be below 65536 (the grid's y)") : 0;
}

int32_t slow_host_run(const mmlab_problem* p, const mmlab_params*, const float* a, const float* b, float* c, void*,
                      void* stream, char* message, size_t size) {
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return launch(p, a, b, c, static_cast<cudaStream_t>(stream), message, size);
}

int32_t syncing_run(const mmlab_problem* p, const mmlab_params*, const float* a, const float* b, float* c, void*,
                    void* stream, char* message, size_t size) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (launch(p, a, b, c, s, message, size)) return 1;
  const cudaError_t e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? 0 : say(message, size, cudaGetErrorString(e));
}

const mmlab_variant kDefault[] = {{"default", "as described"}};

const mmlab_algorithm kAlgorithms[] = {
    {"slow_host", "a clock test: 5 ms on the host, then a kernel of a few microseconds", MMLAB_BACKEND_DEVICE,
     kDefault, 1, nullptr, 0, supports, nullptr, slow_host_run},
    {"syncing", "a clock test: run() waits for its kernel before it returns", MMLAB_BACKEND_DEVICE, kDefault, 1,
     nullptr, 0, supports, nullptr, syncing_run},
};

const mmlab_plugin_info kInfo = {MMLAB_PLUGIN_ABI_VERSION, "clock tests", kAlgorithms, 2};

}  // namespace

extern "C" MMLAB_PLUGIN_EXPORT const mmlab_plugin_info* mmlab_plugin(void) { return &kInfo; }
