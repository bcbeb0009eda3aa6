// cublas: cublasSgemm in pure FP32, the vendor baseline every other algorithm is compared with.
//
// Source: the CUBLAS columns of the lecture notes (Table 18) and Gupta and Bhalla (2022) (Table 3).
// Split: cuBLAS chooses its own kernel, grid and blocks; they are not recorded (empty columns).
// Math mode CUBLAS_PEDANTIC_MATH: no reduced-precision tensor-core shortcuts, so the comparison
// with the lab's FP32 kernels is like for like.
// Row-major: cuBLAS is column-major, and a row-major m x n matrix is its transpose in column-major,
// so C = A B is computed as C^T = B^T A^T: cublasSgemm(N, N, n, m, k, B, n, A, k, C, n).
// Constraints: m, n, k below 2^31.
// Example: mmlab run --algorithms cublas --size 1024:16384:1024
#include <memory>

#include "algorithms/common.cuh"

namespace mmlab {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;  // cuBLAS's advice for Hopper

std::shared_ptr<void> make_handle() {
  cublasHandle_t h = nullptr;
  MMLAB_CHECK(cublasCreate(&h));
  MMLAB_CHECK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
  return std::shared_ptr<void>(h, [](void* p) { cublasDestroy(static_cast<cublasHandle_t>(p)); });
}

void run(const RunArgs& r) {
  auto h = static_cast<cublasHandle_t>(r.state);
  const int m = int(r.problem.m), n = int(r.problem.n), k = int(r.problem.k);
  const float one = 1.f, zero = 0.f;
  MMLAB_CHECK(cublasSetStream(h, r.stream));
  // A workspace of our own, so cuBLAS allocates nothing while a CUDA graph is being captured.
  MMLAB_CHECK(cublasSetWorkspace(h, r.workspace, kWorkspaceBytes));
  MMLAB_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, r.b, n, r.a, k, &zero, r.c, n));
}

}  // namespace

MMLAB_ALGORITHM(cublas) {
  a.summary = "cublasSgemm, pure FP32 (CUBLAS_PEDANTIC_MATH), row-major via C^T = B^T A^T";
  a.variants = {{"default", "the kernel cuBLAS picks for the shape"}};
  a.constraints = "m, n, k below 2^31; launch dimensions are cuBLAS's own and not recorded";
  a.supports = supports_int_indexing;
  a.workspace_bytes = [](const Problem&, const Params&) { return kWorkspaceBytes; };
  a.make_state = make_handle;
  a.run = run;
}

}  // namespace mmlab
