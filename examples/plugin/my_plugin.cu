// An mmlab plugin, out of tree: two algorithms in one shared library, described through the C ABI of
// <mmlab/plugin.h> (the SDK: find_package(mmlab), mmlab::plugin).
//   my_tiled  the shared-memory tiled kernel of the textbooks, on the GPU, with a `tile` axis
//   my_host   a cache-blocked product on the host CPU, with a `block` axis
// Build and run (README, "Your own kernel"):
//   cmake -S examples/plugin -B build-plugin -DCMAKE_PREFIX_PATH=$PWD/sdk && cmake --build build-plugin
//   build/bin/mmlab run --plugin build-plugin/libmy_plugin.so --algorithms my_tiled,cublas --size 1024,4096
#include <mmlab/plugin.h>

#include <cstdio>
#include <cstring>

namespace {

// C = A B for row-major float32; one thread per element of C, T x T tiles of A and B in shared memory.
template <int T>
__global__ void tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, long m,
                      long n, long k) {
  __shared__ float as[T][T], bs[T][T];
  const long row = long(blockIdx.y) * T + threadIdx.y, col = long(blockIdx.x) * T + threadIdx.x;
  float acc = 0.f;
  for (long k0 = 0; k0 < k; k0 += T) {
    as[threadIdx.y][threadIdx.x] = row < m && k0 + threadIdx.x < k ? a[row * k + k0 + threadIdx.x] : 0.f;
    bs[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < k && col < n ? b[(k0 + threadIdx.y) * n + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int q = 0; q < T; ++q) acc += as[threadIdx.y][q] * bs[q][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

// A parameter by name (null when absent): an integer axis's value is its number[0], a choice's its name.
const mmlab_param* param(const mmlab_params* p, const char* name) {
  for (int i = 0; i < p->count; ++i)
    if (std::strcmp(p->values[i].name, name) == 0) return &p->values[i];
  return nullptr;
}

// The tile axis is a choice, so only these are valid; its side is found by the choice's name.
const char* const kTiles[] = {"8", "16", "32"};
int tile_of(const mmlab_params* q) {
  const mmlab_param* t = param(q, "tile");
  for (int i = 0; t && i < 3; ++i)
    if (std::strcmp(t->value, kTiles[i]) == 0) return 8 << i;
  return 0;
}

int32_t say(char* out, size_t size, const char* text) {
  std::snprintf(out, size, "%s", text);
  return 1;
}

int32_t tiled_supports(const mmlab_problem* p, const mmlab_params* q, char* reason, size_t size) {
  const long tile = tile_of(q);
  if (tile == 0) return say(reason, size, "tile must be 8, 16 or 32");
  if ((p->m + tile - 1) / tile > 65535)
    return say(reason, size, "m / tile must be below 65536 (the grid's y)");
  return 0;
}

int32_t tiled_run(const mmlab_problem* p, const mmlab_params* q, const float* a, const float* b, float* c,
                  void*, void* stream, char* message, size_t size) {
  const int tile = tile_of(q);
  const dim3 grid(unsigned((p->n + tile - 1) / tile), unsigned((p->m + tile - 1) / tile));
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (tile) {
    case 8: tiled<8><<<grid, dim3(8, 8), 0, s>>>(a, b, c, p->m, p->n, p->k); break;
    case 16: tiled<16><<<grid, dim3(16, 16), 0, s>>>(a, b, c, p->m, p->n, p->k); break;
    case 32: tiled<32><<<grid, dim3(32, 32), 0, s>>>(a, b, c, p->m, p->n, p->k); break;
    default: return say(message, size, "tile must be 8, 16 or 32");
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return say(message, size, cudaGetErrorString(e));
  return 0;
}

// The host product, i-k-j in blocks of `block` columns of C so a row of B's block stays in cache.
int32_t host_run(const mmlab_problem* p, const mmlab_params* q, const float* a, const float* b, float* c,
                 void*, void*, char*, size_t) {
  const mmlab_param* given = param(q, "block");
  const long block = given ? long(given->number[0]) : 256;
  for (long j0 = 0; j0 < p->n; j0 += block) {
    const long j1 = j0 + block < p->n ? j0 + block : p->n;
    for (long i = 0; i < p->m; ++i) {
      float* ci = c + i * p->n;
      for (long j = j0; j < j1; ++j) ci[j] = 0.f;
      for (long l = 0; l < p->k; ++l) {
        const float x = a[i * p->k + l];
        const float* bl = b + l * p->n;
        for (long j = j0; j < j1; ++j) ci[j] += x * bl[j];
      }
    }
  }
  return 0;
}

const mmlab_variant kDefault[] = {{"default", "as described"}};
const char* const kBlocks[] = {"64", "256"};
const mmlab_axis kTileAxis[] = {{"tile", MMLAB_AXIS_CHOICE,
                                 "the side of the square thread block and of the shared-memory tiles", "16",
                                 kTiles, 3}};
const mmlab_axis kBlockAxis[] = {
    {"block", MMLAB_AXIS_INTEGER, "columns of C per pass over A's row", "256", kBlocks, 2}};

const mmlab_algorithm kAlgorithms[] = {
    {"my_tiled", "an example plugin: the shared-memory tiled kernel, T x T threads and tiles",
     MMLAB_BACKEND_DEVICE, kDefault, 1, kTileAxis, 1, tiled_supports, nullptr, tiled_run},
    {"my_host", "an example plugin: a cache-blocked product on the host CPU", MMLAB_BACKEND_HOST, kDefault, 1,
     kBlockAxis, 1, nullptr, nullptr, host_run},
};

const mmlab_plugin_info kInfo = {MMLAB_PLUGIN_ABI_VERSION, "example plugin", kAlgorithms, 2};

}  // namespace

extern "C" MMLAB_PLUGIN_EXPORT const mmlab_plugin_info* mmlab_plugin(void) { return &kInfo; }
