#include "harness/pipelines.hpp"

namespace mmlab {

namespace {

const Pipeline kDevice = [] {
  Pipeline p;
  p.name = "gpu", p.where = "GPU";
  p.gpu = true;
  p.verification = Verification::device;
  return p;
}();

const Pipeline kHost = [] {
  Pipeline p;
  p.name = "host", p.where = "host CPU";
  p.verification = Verification::host;
  return p;
}();

const Pipeline kStreamed = [] {
  Pipeline p;
  p.name = "streamed", p.where = "GPU, operands in host memory, timed host to host";
  p.gpu = true;
  p.end_to_end = true;
  p.verification = Verification::entries;
  return p;
}();

const Pipeline kDistributed = [] {
  Pipeline p;
  p.name = "distributed", p.where = "MPI ranks: GPUs over NCCL or the copy engines, or CPUs over MPI";
  p.gpu = true;
  p.by_engine = true;
  p.collective = true;
  p.verification = Verification::ranks;
  return p;
}();

}  // namespace

const Pipeline& pipeline_of(const Algorithm& a) {
  switch (a.backend) {
    case Backend::device: return kDevice;
    case Backend::host: return kHost;
    case Backend::streamed: return kStreamed;
    case Backend::distributed: return kDistributed;
  }
  return kDevice;
}

bool pipeline_uses_gpus(const Pipeline& p, const Algorithm& a, const Params& params) {
  if (!p.by_engine) return p.gpu;
  const Algorithm* engine = a.engine_of ? a.engine_of(params) : nullptr;
  return engine ? pipeline_of(*engine).gpu : p.gpu;
}

}  // namespace mmlab
