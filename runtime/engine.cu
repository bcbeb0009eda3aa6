// Engines: an algorithm another one runs, each product shape prepared once (runtime/engine.hpp).
#include "runtime/engine.hpp"

#include <algorithm>
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
    : spec_(std::move(spec)), device_(device), invocation_(*spec_.algorithm, device_), states_(&states), adds_(adds) {}

const PreparedRun& Engine::prepared(const Problem& p) {
  std::lock_guard<std::mutex> hold(lock_);
  const auto key = std::make_tuple(p.m, p.n, p.k, inputs_name(p.inputs));
  auto it = runs_.find(key);
  if (it == runs_.end()) {
    const AddPartial add = !adds_ ? nullptr : spec_.algorithm->backend == Backend::host ? host_add : device_add;
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
    if (spec_.algorithm->backend == Backend::host) {
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
