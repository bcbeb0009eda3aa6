// Engines: an algorithm another one runs, each product shape prepared once (runtime/engine.hpp).
#include "runtime/engine.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "runtime/cuda_check.hpp"

namespace mmlab {

namespace {

__global__ void add_kernel(float* __restrict__ c, long ldc, const float* __restrict__ t, long m, long n,
                           bool accumulate) {
  const long count = m * n;
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    float* to = c + (e / n) * ldc + e % n;
    *to = accumulate ? *to + t[e] : t[e];
  }
}

}  // namespace

void device_add(float* c, long ldc, const float* t, long m, long n, bool accumulate, CUstream_st* stream) {
  if (m <= 0 || n <= 0) return;
  const long blocks = std::min<long>((m * n + 255) / 256, 4096);
  add_kernel<<<unsigned(blocks), 256, 0, stream>>>(c, ldc, t, m, n, accumulate);
  MMLAB_CHECK_LAUNCH();
}

Engine::Engine(EngineSpec spec, const DeviceInfo& device, StateCache& states, bool adds)
    : spec_(std::move(spec)),
      device_(device),
      invocation_(*spec_.algorithm, device_),
      states_(&states),
      adds_(adds),
      align_(row_alignment(spec_)) {}

bool Engine::on_host(const EngineSpec& spec) { return spec.algorithm->backend == Backend::host; }

long Engine::row_alignment(const EngineSpec& spec) {
  const Variant* v = spec.algorithm->find_variant(spec.params.variant());
  return !on_host(spec) && v ? std::max(v->row_alignment, 1) : 1;
}

namespace {

// A product's shape padded to the engine's alignment (Engine::gemm), or none.
struct Padded {
  long m, n, k, n_pad, k_pad;
  std::size_t a() const { return std::size_t(m) * k_pad; }
  std::size_t b() const { return std::size_t(k_pad) * n_pad; }
  std::size_t c() const { return std::size_t(m) * n_pad; }
};

std::optional<Padded> padded(long align, long m, long n, long k, long ldc) {
  if (align <= 1 || m <= 0 || n <= 0 || k <= 0 || (k % align == 0 && n % align == 0 && ldc % align == 0))
    return std::nullopt;
  const auto up = [&](long x) { return (x + align - 1) / align * align; };
  return Padded{m, n, k, up(n), up(k)};
}

}  // namespace

void Engine::gemm(const float* a, const float* b, float* c, long ldc, long m, long n, long k, bool accumulate,
                  CUstream_st* s) {
  const auto pad = padded(align_, m, n, k, ldc);
  if (!pad) {
    Buffers io;
    io.a = a, io.b = b, io.c = c, io.ldc = ldc, io.accumulate = accumulate;
    return run({m, n, k}, io, s);
  }
  const Padded& p = *pad;
  const std::size_t need = (p.a() + p.b() + p.c()) * sizeof(float);
  if (staging_.bytes() < need) staging_ = Buffer(need, Buffer::Kind::device);  // the warm-up's, not a trial's
  float* a2 = staging_.as<float>();
  float* b2 = a2 + p.a();
  float* c2 = b2 + p.b();
  const std::size_t f = sizeof(float);
  MMLAB_CHECK(cudaMemcpy2DAsync(a2, p.k_pad * f, a, p.k * f, p.k * f, p.m, cudaMemcpyDeviceToDevice, s));
  if (p.k_pad > p.k) MMLAB_CHECK(cudaMemset2DAsync(a2 + p.k, p.k_pad * f, 0, (p.k_pad - p.k) * f, p.m, s));
  MMLAB_CHECK(cudaMemcpy2DAsync(b2, p.n_pad * f, b, p.n * f, p.n * f, p.k, cudaMemcpyDeviceToDevice, s));
  if (p.k_pad > p.k) MMLAB_CHECK(cudaMemsetAsync(b2 + p.k * p.n_pad, 0, (p.k_pad - p.k) * p.n_pad * f, s));
  if (accumulate)
    MMLAB_CHECK(cudaMemcpy2DAsync(c2, p.n_pad * f, c, ldc * f, p.n * f, p.m, cudaMemcpyDeviceToDevice, s));
  Buffers io;
  io.a = a2, io.b = b2, io.c = c2, io.ldc = p.n_pad, io.accumulate = accumulate;
  run({p.m, p.n_pad, p.k_pad}, io, s);
  MMLAB_CHECK(cudaMemcpy2DAsync(c, ldc * f, c2, p.n_pad * f, p.n * f, p.m, cudaMemcpyDeviceToDevice, s));
}

std::string Engine::resolved(long m, long n, long k) {
  const auto pad = padded(align_, m, n, k, n);
  const Problem p{std::max(m, 1L), std::max(pad ? pad->n_pad : n, 1L), std::max(pad ? pad->k_pad : k, 1L)};
  const PreparedRun& run = prepared(p);
  const std::string q = run.params().canonical();
  return run.algorithm().name + ":" + run.params().variant() + (q.empty() ? "" : ":" + q);
}

const PreparedRun& Engine::prepared(const Problem& p) {
  std::lock_guard<std::mutex> hold(lock_);
  const auto key = std::make_tuple(p.m, p.n, p.k, inputs_name(p.inputs));
  auto it = runs_.find(key);
  if (it == runs_.end()) {
    const AddPartial add = !adds_ ? nullptr : on_host(spec_) ? host_add : device_add;
    it = runs_.emplace(key, invocation_.prepare(p, spec_.params, *states_, add)).first;
  }
  return it->second;  // std::map: the entry stays where it is
}

void Engine::run(const Problem& p, Buffers io, CUstream_st* stream) {
  const PreparedRun& run = prepared(p);
  if (!run.ready())
    throw std::runtime_error("engine " + spec_.text() + " cannot run " + std::to_string(p.m) + "x" +
                             std::to_string(p.n) + "x" + std::to_string(p.k) + ": " + *run.skip());
  if (!io.workspace && run.workspace_bytes()) {
    if (on_host(spec_)) {
      if (host_workspace_.size() < run.workspace_bytes()) host_workspace_.resize(run.workspace_bytes());
      io.workspace = host_workspace_.data();
    } else {
      if (device_workspace_.bytes() < run.workspace_bytes())
        device_workspace_ = Buffer(run.workspace_bytes(), Buffer::Kind::device);
      io.workspace = device_workspace_.get();
    }
  }
  run.run(io, stream);
}

}  // namespace mmlab
