// The local engines of the distributed algorithms, behind dist::Engine: cuBLAS in pure FP32
// (cublas) or with TF32 tensor cores (cublas_tf32, judged as TF32), the lab's register_tiled (its
// `tuned` choice), tf32x3 (the FP32-accurate tensor-core dispatcher, flagship tensor_cores: tf32x3
// half3 or wgmma3 for each product's shape, FP32-level error), and Eigen on the host (the CPU backend).
#include <Eigen/Core>
#include <algorithm>
#include <map>
#include <tuple>

#include "algorithms/registry.hpp"
#include "core/invocation.hpp"
#include "distributed/context.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"

namespace mmlab::dist {

namespace {

class CublasEngine final : public Engine {
 public:
  CublasEngine(cudaStream_t* stream, cublasMath_t math)
      : stream_(stream), workspace_(std::size_t(32) << 20, Buffer::Kind::device) {
    MMLAB_CHECK(cublasCreate(&handle_));
    MMLAB_CHECK(cublasSetMathMode(handle_, math));
    MMLAB_CHECK(cublasSetWorkspace(handle_, workspace_.get(), workspace_.bytes()));
  }
  ~CublasEngine() override { cublasDestroy(handle_); }
  void gemm(const float* a, long lda, const float* b, long ldb, float* c, long ldc, long m, long n, long k,
            bool accumulate) override {
    const float one = 1.f, beta = accumulate ? 1.f : 0.f;
    MMLAB_CHECK(cublasSetStream(handle_, *stream_));
    // Row-major C = A B is column-major C^T = B^T A^T.
    MMLAB_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &one, b, int(ldb), a,
                            int(lda), &beta, c, int(ldc)));
  }

 private:
  cudaStream_t* stream_;
  cublasHandle_t handle_ = nullptr;
  Buffer workspace_;
};

__global__ void add_kernel(float* __restrict__ c, const float* __restrict__ t, long count) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x)
    c[e] += t[e];
}

// One of the lab's own algorithms as the local engine: its variant's choice for each product's
// shape (the invocation resolves it once per shape), accumulation through a partial product and an add.
class LabEngine final : public Engine {
 public:
  LabEngine(cudaStream_t* stream, const DeviceInfo& device, const Algorithm& alg, const std::string& variant)
      : stream_(stream), device_(device), invocation_(alg, device_), asked_(default_params(alg, variant)) {}
  void gemm(const float* a, long lda, const float* b, long ldb, float* c, long ldc, long m, long n, long k,
            bool accumulate) override {
    if (lda != k || ldb != n || ldc != n)
      throw std::logic_error(invocation_.algorithm().name + " engine: operands must be contiguous");
    const Problem p{m, n, k};
    const Params q = invocation_.resolve(p, asked_);
    grow(workspace_, invocation_.workspace(p, q));
    if (accumulate) grow(partial_, sizeof(float) * std::size_t(m * n));
    RunArgs r;
    r.a = a, r.b = b, r.c = accumulate ? partial_.as<float>() : c;
    r.problem = p, r.params = &q, r.workspace = workspace_.get(), r.stream = *stream_;
    invocation_.run(r, states_);
    if (accumulate) {
      add_kernel<<<std::max<long>(1, std::min<long>((m * n + 255) / 256, 4096)), 256, 0, *stream_>>>(
          c, partial_.as<float>(), m * n);
      MMLAB_CHECK_LAUNCH();
    }
  }

 private:
  static void grow(Buffer& b, std::size_t bytes) {
    if (b.bytes() < bytes) b = Buffer(bytes, Buffer::Kind::device);
  }
  cudaStream_t* stream_;
  DeviceInfo device_;
  Invocation invocation_;
  Params asked_;
  StateCache states_;
  Buffer workspace_, partial_;
};

class EigenEngine final : public Engine {
 public:
  void gemm(const float* a, long lda, const float* b, long ldb, float* c, long ldc, long m, long n, long k,
            bool accumulate) override {
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Stride = Eigen::OuterStride<>;
    Eigen::Map<const Matrix, 0, Stride> A(a, m, k, Stride(lda));
    Eigen::Map<const Matrix, 0, Stride> B(b, k, n, Stride(ldb));
    Eigen::Map<Matrix, 0, Stride> C(c, m, n, Stride(ldc));
    if (accumulate)
      C.noalias() += A * B;
    else
      C.noalias() = A * B;
  }
};

}  // namespace

std::unique_ptr<Engine> make_engine(const std::string& name, CUstream_st** stream, const DeviceInfo& device) {
  if (name == "cublas") return std::make_unique<CublasEngine>(stream, CUBLAS_PEDANTIC_MATH);  // pure FP32
  if (name == "cublas_tf32") return std::make_unique<CublasEngine>(stream, CUBLAS_TF32_TENSOR_OP_MATH);
  if (name == "register_tiled")
    return std::make_unique<LabEngine>(stream, device, algorithms::register_tiled(), "tuned");
  if (name == "tf32x3")
    return std::make_unique<LabEngine>(stream, device, algorithms::flagship(), "tensor_cores");
  return std::make_unique<EigenEngine>();
}

}  // namespace mmlab::dist
