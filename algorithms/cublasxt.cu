// cublasxt: cublasXtSgemm on host pointers, the vendor's out-of-core product and out_of_core's
// baseline: cuBLASXt cuts C into square blocks of `block_dim`, streams the blocks of A and B they
// need through the GPU and writes C's blocks back, overlapping copies and products on its own
// streams. It returns when C is in host memory.
//
// Row-major as in cublas.cu: C^T = B^T A^T, cublasXtSgemm(N, N, n, m, k, B, n, A, k, C, n).
// Math: cuBLASXt has no math-mode setter; its SGEMM runs cuBLAS's default math, FP32 (TF32 only when
// asked through NVIDIA_TF32_OVERRIDE, which the verification would catch). One GPU: the harness's.
// Example: mmlab run --algorithms cublasxt,out_of_core --size 32768 --cublasxt.block_dim 2048,4096,8192
#include <cublasXt.h>

#include <memory>

#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

struct Handle {
  cublasXtHandle_t h = nullptr;
  int device = -1;
  Handle() { MMLAB_CHECK(cublasXtCreate(&h)); }
  ~Handle() { cublasXtDestroy(h); }
};

void run(const RunArgs& r) {
  Handle& x = *static_cast<Handle*>(r.state);
  if (x.device != r.device->ordinal) {
    int devices[1] = {r.device->ordinal};
    MMLAB_CHECK(cublasXtDeviceSelect(x.h, 1, devices));
    x.device = r.device->ordinal;
  }
  MMLAB_CHECK(cublasXtSetBlockDim(x.h, int(r.params->integer("block_dim"))));
  const float one = 1.f, zero = 0.f;
  const Problem& p = r.problem;
  MMLAB_CHECK(cublasXtSgemm(x.h, CUBLAS_OP_N, CUBLAS_OP_N, std::size_t(p.n), std::size_t(p.m), std::size_t(p.k),
                            &one, r.b, std::size_t(p.n), r.a, std::size_t(p.k), &zero, r.c, std::size_t(p.n)));
}

}  // namespace

MMLAB_ALGORITHM(cublasxt) {
  a.summary = "cublasXtSgemm on host pointers: cuBLAS's own out-of-core product, block by block";
  a.backend = Backend::streamed;
  a.variants = {{"default", "cublasXtSgemm, one GPU, C in square blocks of block_dim"}};
  a.axes = {{"block_dim", AxisKind::integer, "the side of cuBLASXt's blocks of C", "4096", {"2048", "4096", "8192"},
             {}, 65536}};
  a.constraints = "m, n, k below 2^31; host memory for A, B and C";
  a.supports = supports_int_indexing;
  a.make_state = [] { return std::static_pointer_cast<void>(std::make_shared<Handle>()); };
  a.run = run;
  a.set_nondeterminism("default", "cuBLASXt's schedule of blocks over its streams is its own");
}

}  // namespace mmlab
