// The local engines of the distributed algorithms, behind dist::Engine: each a lab algorithm run by
// runtime/engine.hpp's Engine (each product shape prepared once; C += A B the algorithm's own or
// through its partial product). The `engine` axis's values and the spec each names
// (core/distributed.hpp's kDistributedEngines): cublas
// (cublas:default, pure FP32), cublas_tf32 (cublas:tf32, TF32 tensor cores, judged as TF32),
// register_tiled (its `tuned` choice), tensor_cores (flagship:tensor_cores, the FP32-accurate tensor-core
// dispatcher: tf32x3 half3 or wgmma3 for each product's shape, FP32-level error), and eigen on the
// host (the CPU backend).
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "algorithms/registry.hpp"
#include "distributed/context.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/engine.hpp"

namespace mmlab::dist {

namespace {

// Where the engine's variant wants rows of a multiple of `align` floats (Variant::row_alignment) and
// a product's are not (30001 over a 2 x 2 grid: rows of 15001), the product runs padded: A (m x k)
// into A' (m x k'), B into B' (k' x n'), C into C' (m x n'), k' and n' rounded up to the alignment,
// A's new columns and B's new rows zero (they add nothing), C's extra columns dropped. The copies
// are part of the product's time: with them a 15001^3 cuBLAS TF32 product ran at 245-265 TFLOP/s on an
// H100, unpadded at 122 (data/distributed/x4/sweep-2026-11-27c).
struct Padded {
  long m, n, k, n_pad, k_pad;
  std::size_t a() const { return std::size_t(m) * k_pad; }
  std::size_t b() const { return std::size_t(k_pad) * n_pad; }
  std::size_t c() const { return std::size_t(m) * n_pad; }
};

class LabEngine final : public Engine {
 public:
  LabEngine(CUstream_st** stream, const DeviceInfo& device, EngineSpec spec)
      : stream_(stream), engine_(std::move(spec), device, states_), align_(alignment(engine_.spec())) {}
  static long alignment(const EngineSpec& spec) {
    const Variant* v = spec.algorithm->find_variant(spec.params.variant());
    return spec.algorithm->backend == Backend::device && v ? std::max(v->row_alignment, 1) : 1;
  }
  void gemm(const float* a, long lda, const float* b, long ldb, float* c, long ldc, long m, long n, long k,
            bool accumulate) override {
    if (lda != k || ldb != n)
      throw std::logic_error(engine_.spec().text() + " engine: A and B must be contiguous");
    if (const auto pad = padded(m, n, k, ldc)) return gemm_padded(*pad, a, b, c, ldc, accumulate);
    Buffers io;
    io.a = a, io.b = b, io.c = c, io.ldc = ldc, io.accumulate = accumulate;
    engine_.run({m, n, k}, io, *stream_);
  }
  std::string resolved(long m, long n, long k) override {
    const auto pad = padded(m, n, k, n);
    const Problem p{std::max(m, 1L), std::max(pad ? pad->n_pad : n, 1L), std::max(pad ? pad->k_pad : k, 1L)};
    const PreparedRun& run = engine_.prepared(p);
    const std::string q = run.params().canonical();
    return run.algorithm().name + ":" + run.params().variant() + (q.empty() ? "" : ":" + q);
  }
  void release() override { staging_ = Buffer(); }

 private:
  std::optional<Padded> padded(long m, long n, long k, long ldc) const {
    if (align_ <= 1 || m <= 0 || n <= 0 || k <= 0 || (k % align_ == 0 && n % align_ == 0 && ldc % align_ == 0))
      return std::nullopt;
    const auto up = [&](long x) { return (x + align_ - 1) / align_ * align_; };
    return Padded{m, n, k, up(n), up(k)};
  }
  void gemm_padded(const Padded& p, const float* a, const float* b, float* c, long ldc, bool accumulate) {
    const std::size_t need = (p.a() + p.b() + p.c()) * sizeof(float);
    if (staging_.bytes() < need) staging_ = Buffer(need, Buffer::Kind::device);  // the warm-up's, not a trial's
    float* a2 = staging_.as<float>();
    float* b2 = a2 + p.a();
    float* c2 = b2 + p.b();
    CUstream_st* s = *stream_;
    const std::size_t f = sizeof(float);
    MMLAB_CHECK(cudaMemcpy2DAsync(a2, p.k_pad * f, a, p.k * f, p.k * f, p.m, cudaMemcpyDeviceToDevice, s));
    if (p.k_pad > p.k)
      MMLAB_CHECK(cudaMemset2DAsync(a2 + p.k, p.k_pad * f, 0, (p.k_pad - p.k) * f, p.m, s));
    MMLAB_CHECK(cudaMemcpy2DAsync(b2, p.n_pad * f, b, p.n * f, p.n * f, p.k, cudaMemcpyDeviceToDevice, s));
    if (p.k_pad > p.k) MMLAB_CHECK(cudaMemsetAsync(b2 + p.k * p.n_pad, 0, (p.k_pad - p.k) * p.n_pad * f, s));
    if (accumulate)
      MMLAB_CHECK(cudaMemcpy2DAsync(c2, p.n_pad * f, c, ldc * f, p.n * f, p.m, cudaMemcpyDeviceToDevice, s));
    Buffers io;
    io.a = a2, io.b = b2, io.c = c2, io.ldc = p.n_pad, io.accumulate = accumulate;
    engine_.run({p.m, p.n_pad, p.k_pad}, io, s);
    MMLAB_CHECK(cudaMemcpy2DAsync(c, ldc * f, c2, p.n_pad * f, p.n * f, p.m, cudaMemcpyDeviceToDevice, s));
  }

  CUstream_st** stream_;
  StateCache states_;
  mmlab::Engine engine_;
  long align_;
  Buffer staging_;  // A', B' and C' of the largest padded product; given back by release()
};

}  // namespace

EngineSpec engine_spec(const std::string& name) {
  const std::string spec = distributed_engine_spec(name);
  if (spec.empty()) throw std::invalid_argument("no distributed engine " + name);
  return EngineSpec::parse(spec, algorithms::single_process());
}

long engine_row_alignment(const std::string& name) { return LabEngine::alignment(engine_spec(name)); }

std::unique_ptr<Engine> make_engine(const std::string& name, CUstream_st** stream, const DeviceInfo& device) {
  return std::make_unique<LabEngine>(stream, device, engine_spec(name));
}

}  // namespace mmlab::dist
