// cublas: cublasSgemm in pure FP32, the vendor baseline every other algorithm is compared with, and
// cuBLAS's tensor-core paths for FP32 data, the other end of the accuracy/speed frontier.
//
// Source: the CUBLAS columns of the lecture notes (Table 18) and Gupta and Bhalla (2022) (Table 3).
// Split: cuBLAS chooses its own kernel, grid and blocks; they are not recorded (empty columns).
// Variants:
//   default  cublasSgemm under CUBLAS_PEDANTIC_MATH: no reduced-precision tensor-core shortcuts, so the
//            comparison with the lab's FP32 kernels is like for like.
//   tf32     cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: operands rounded to TF32 (10-bit
//            mantissa) on the tensor cores, FP32 accumulation; judged by the tf32 tolerance.
//   bf16x9   cublasGemmEx with CUBLAS_COMPUTE_32F_EMULATED_16BFX9 (each operand as three BF16 parts,
//            FP32 accuracy) under the eager emulation strategy. cuBLAS emulates only on Blackwell
//            (sm_100) and newer; elsewhere it would silently run plain FP32, so there it is skipped.
// Row-major: cuBLAS is column-major, and a row-major m x n matrix is its transpose in column-major,
// so C = A B is computed as C^T = B^T A^T: cublasSgemm(N, N, n, m, k, B, n, A, k, C, n).
// Constraints: m, n, k below 2^31.
// Accumulates: RunArgs::accumulate and ldc are cuBLAS's beta = 1 and ldc (out_of_core's products into its panels).
// tf32 and bf16x9 run on request (when named), so `--algorithms cublas` stays the FP32 baseline.
// Example: mmlab run --algorithms cublas --variant default,tf32 --size 1024:16384:1024
#include <memory>

#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;  // cuBLAS's advice for Hopper

enum class Kind { sgemm, tf32, bf16x9 };

// Two handles: the baseline's in pedantic FP32, the tensor-core variants' in the default math mode.
struct Handles {
  cublasHandle_t pedantic = nullptr, tensor = nullptr;
  Handles() {
    MMLAB_CHECK(cublasCreate(&pedantic));
    MMLAB_CHECK(cublasSetMathMode(pedantic, CUBLAS_PEDANTIC_MATH));
    MMLAB_CHECK(cublasCreate(&tensor));
    MMLAB_CHECK(cublasSetEmulationStrategy(tensor, CUBLAS_EMULATION_STRATEGY_EAGER));
  }
  ~Handles() {
    cublasDestroy(pedantic);
    cublasDestroy(tensor);
  }
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"default", "cublasSgemm, pure FP32 (CUBLAS_PEDANTIC_MATH): the kernel cuBLAS picks for the shape"},
      {"tf32", "cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores, FP32 accumulation",
       Precision::tf32, true, {}, 4},
      {"bf16x9", "cublasGemmEx, CUBLAS_COMPUTE_32F_EMULATED_16BFX9: FP32 emulated on BF16 tensor cores",
       Precision::fp32, true, {}, 4}};
  return v;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (Reason why = supports_int_indexing(p, q, d)) return why;
  if (variant_kind<Kind>(variants(), q) == Kind::bf16x9 && d.cc_major < 10)
    return "cuBLAS emulates FP32 with BF16x9 on Blackwell (sm_100) and newer only; on " + std::string("sm_") +
           std::to_string(d.cc_major) + std::to_string(d.cc_minor) + " it would run plain FP32 instead";
  return std::nullopt;
}

void run(const RunArgs& r) {
  auto& h = *static_cast<Handles*>(r.state);
  const Kind kind = variant_kind<Kind>(variants(), *r.params);
  const int m = int(r.problem.m), n = int(r.problem.n), k = int(r.problem.k);
  const float one = 1.f, beta = r.accumulate ? 1.f : 0.f;
  const int ldc = int(r.ldc ? r.ldc : r.problem.n);
  cublasHandle_t handle = kind == Kind::sgemm ? h.pedantic : h.tensor;
  MMLAB_CHECK(cublasSetStream(handle, r.stream));
  // A workspace of our own, so cuBLAS allocates nothing while a CUDA graph is being captured.
  MMLAB_CHECK(cublasSetWorkspace(handle, r.workspace, kWorkspaceBytes));
  if (kind == Kind::sgemm) {
    MMLAB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, r.b, n, r.a, k, &beta, r.c, ldc));
    return;
  }
  const cublasComputeType_t compute =
      kind == Kind::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
  MMLAB_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, r.b, CUDA_R_32F, n, r.a,
                           CUDA_R_32F, k, &beta, r.c, CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

MMLAB_ALGORITHM(cublas) {
  a.summary =
      "cublasSgemm, pure FP32 (CUBLAS_PEDANTIC_MATH), row-major via C^T = B^T A^T; TF32 and BF16x9 variants";
  a.variants = variants();
  a.constraints =
      "m, n, k below 2^31; bf16x9 on sm_100 and newer; launch dimensions are cuBLAS's own and not recorded";
  a.supports = supports;
  a.workspace_bytes = [](const Problem&, const Params&) { return kWorkspaceBytes; };
  a.make_state = [] { return std::shared_ptr<void>(std::make_shared<Handles>()); };
  a.run = run;
  a.accumulates = true;  // beta and ldc are cuBLAS's own
  a.arithmetic_by = [](const Params& q) {
    switch (variant_kind<Kind>(variants(), q)) {
      case Kind::tf32: return Arithmetic{MathUnit::tf32_tensor, 1};
      case Kind::bf16x9: return Arithmetic{MathUnit::fp16_tensor, 9};
      default: return Arithmetic{};
    }
  };
}

}  // namespace mmlab
