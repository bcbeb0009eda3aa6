// The local engines of the distributed algorithms: cuBLAS (pure FP32), the lab's register_tiled,
// and Eigen on the host (the CPU backend), behind dist::Engine.
#include <Eigen/Core>
#include <algorithm>

#include "algorithms/registry.hpp"
#include "distributed/context.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"

namespace mmlab::dist {

namespace {

class CublasEngine final : public Engine {
 public:
  explicit CublasEngine(cudaStream_t* stream)
      : stream_(stream), workspace_(std::size_t(32) << 20, Buffer::Kind::device) {
    MMLAB_CHECK(cublasCreate(&handle_));
    MMLAB_CHECK(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH));  // pure FP32, as the lab's baseline
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

// The lab's flagship as the local engine: its `tuned` choice for each product's shape.
class RegisterTiledEngine final : public Engine {
 public:
  RegisterTiledEngine(cudaStream_t* stream, const DeviceInfo& device)
      : stream_(stream), device_(device), alg_(algorithms::register_tiled()) {}
  void gemm(const float* a, long lda, const float* b, long ldb, float* c, long ldc, long m, long n, long k,
            bool accumulate) override {
    if (lda != k || ldb != n || ldc != n)
      throw std::logic_error("register_tiled engine: operands must be contiguous");
    const Problem p{m, n, k};
    const Params q = alg_.resolve(p, Params("tuned"), device_);
    grow(workspace_, alg_.workspace(p, q));
    if (accumulate) grow(partial_, sizeof(float) * std::size_t(m * n));
    RunArgs r;
    r.a = a, r.b = b, r.c = accumulate ? partial_.as<float>() : c;
    r.problem = p, r.params = &q, r.workspace = workspace_.get(), r.stream = *stream_, r.device = &device_;
    alg_.run(r);
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
  const Algorithm& alg_;
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
  if (name == "cublas") return std::make_unique<CublasEngine>(stream);
  if (name == "register_tiled") return std::make_unique<RegisterTiledEngine>(stream, device);
  return std::make_unique<EigenEngine>();
}

}  // namespace mmlab::dist
