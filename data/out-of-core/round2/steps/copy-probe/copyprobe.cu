// A throwaway probe (not built by the lab; kept with its output): H2D/D2H pitched copies alone and beside SGEMMs.
// throwaway: what slows pitched H2D copies inside out_of_core runs
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { auto e = (x); if (e) { printf("err %d line %d\n", int(e), __LINE__); exit(1);} } while (0)
float ms_of(cudaStream_t s, void (*f)(void*), void* arg) { return 0; }
int main() {
  cublasHandle_t h; CK(cublasCreate(&h)); CK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
  cudaStream_t cs, is, os; CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&is, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&os, cudaStreamNonBlocking));
  CK(cublasSetStream(h, cs));
  const long N = 8192; float *A, *B, *C; CK(cudaMalloc(&A, 4*N*N)); CK(cudaMalloc(&B, 4*N*N)); CK(cudaMalloc(&C, 4*N*N));
  CK(cudaMemset(A, 0, 4*N*N)); CK(cudaMemset(B, 0, 4*N*N));
  const size_t big = size_t(12) << 30, small = size_t(512) << 20;
  float *hbig, *hsmall; CK(cudaHostAlloc((void**)&hbig, big, 0)); CK(cudaHostAlloc((void**)&hsmall, small, 0));
  memset(hbig, 1, big); memset(hsmall, 1, small);
  float* hreg = (float*)aligned_alloc(4096, big); memset(hreg, 1, big); CK(cudaHostRegister(hreg, big, cudaHostRegisterPortable));
  float* d; CK(cudaMalloc(&d, size_t(512) << 20));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const float one = 1, zero = 0;
  auto gemms = [&](int n) { for (int i = 0; i < n; ++i) CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, A, N, B, N, &zero, C, N)); };
  struct Case { const char* mem; float* host; long row; long pitch; };
  std::vector<Case> cases;
  for (long row : {16384L, 32768L, 131072L})
    for (long pitch : {2 * row, 131072L, 196608L}) {
      if (pitch < row) continue;
      cases.push_back({"alloc-small", hsmall, row, pitch});
      cases.push_back({"alloc-big", hbig, row, pitch});
      cases.push_back({"registered", hreg, row, pitch});
    }
  for (int load = 0; load < 2; ++load)
    for (auto& c : cases) {
      const long bytes = 64 << 20, rows = bytes / c.row;
      if (rows * c.pitch > (long)(c.host == hsmall ? small : big)) continue;
      float best = 1e9, tot = 0;
      if (load) gemms(3);
      for (int r = 0; r < 5; ++r) {
        CK(cudaEventRecord(e0, is));
        CK(cudaMemcpy2DAsync(d, c.row, c.host, c.pitch, c.row, rows, cudaMemcpyHostToDevice, is));
        CK(cudaEventRecord(e1, is)); CK(cudaEventSynchronize(e1));
        float ms; cudaEventElapsedTime(&ms, e0, e1); best = ms < best ? ms : best; tot += ms;
      }
      CK(cudaDeviceSynchronize());
      printf("%s load=%d mem=%-12s row=%6ld pitch=%6ld  best %.1f GB/s  mean %.1f GB/s\n", "H2D", load, c.mem, c.row, c.pitch,
             bytes / best / 1e6, bytes / (tot / 5) / 1e6);
    }
  // D2H under load into big
  for (int load = 0; load < 2; ++load) for (long row : {16384L, 32768L}) {
    const long bytes = 64 << 20, rows = bytes / row; float best = 1e9;
    if (load) gemms(3);
    for (int r = 0; r < 5; ++r) { CK(cudaEventRecord(e0, os)); CK(cudaMemcpy2DAsync(hbig, 131072, d, row, row, rows, cudaMemcpyDeviceToHost, os)); CK(cudaEventRecord(e1, os)); CK(cudaEventSynchronize(e1)); float ms; cudaEventElapsedTime(&ms, e0, e1); best = ms < best ? ms : best; }
    CK(cudaDeviceSynchronize());
    printf("D2H load=%d big row=%ld pitch=131072 best %.1f GB/s\n", load, row, bytes / best / 1e6);
  }
  return 0;
}
