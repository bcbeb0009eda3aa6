// The local engines of the distributed algorithms, behind dist::Engine: each a lab algorithm run by
// runtime/engine.hpp's Engine (each product shape prepared once; C += A B the algorithm's own or
// through its partial product). The `engine` axis's values and the spec each names
// (core/distributed.hpp's kDistributedEngines): cublas
// (cublas:default, pure FP32), cublas_tf32 (cublas:tf32, TF32 tensor cores, judged as TF32),
// register_tiled (its `tuned` choice), tf32x3 (flagship:tensor_cores, the FP32-accurate tensor-core
// dispatcher: tf32x3 half3 or wgmma3 for each product's shape, FP32-level error), and eigen on the
// host (the CPU backend).
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "algorithms/registry.hpp"
#include "distributed/context.hpp"
#include "runtime/engine.hpp"

namespace mmlab::dist {

namespace {

class LabEngine final : public Engine {
 public:
  LabEngine(CUstream_st** stream, const DeviceInfo& device, EngineSpec spec)
      : stream_(stream), engine_(std::move(spec), device, states_) {}
  void gemm(const float* a, long lda, const float* b, long ldb, float* c, long ldc, long m, long n, long k,
            bool accumulate) override {
    if (lda != k || ldb != n)
      throw std::logic_error(engine_.spec().text() + " engine: A and B must be contiguous");
    Buffers io;
    io.a = a, io.b = b, io.c = c, io.ldc = ldc, io.accumulate = accumulate;
    engine_.run({m, n, k}, io, *stream_);
  }
  std::string resolved(long m, long n, long k) override {
    const PreparedRun& run = engine_.prepared({std::max(m, 1L), std::max(n, 1L), std::max(k, 1L)});
    const std::string q = run.params().canonical();
    return run.algorithm().name + ":" + run.params().variant() + (q.empty() ? "" : ":" + q);
  }

 private:
  CUstream_st** stream_;
  StateCache states_;
  mmlab::Engine engine_;
};

}  // namespace

EngineSpec engine_spec(const std::string& name) {
  const std::string spec = distributed_engine_spec(name);
  if (spec.empty()) throw std::invalid_argument("no distributed engine " + name);
  return EngineSpec::parse(spec, algorithms::single_process());
}

std::unique_ptr<Engine> make_engine(const std::string& name, CUstream_st** stream, const DeviceInfo& device) {
  return std::make_unique<LabEngine>(stream, device, engine_spec(name));
}

}  // namespace mmlab::dist
