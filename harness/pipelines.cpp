#include "harness/pipelines.hpp"

namespace mmlab {

namespace {

// name, where, gpu, by_engine, collective, host_operands, end_to_end, kernel_only, own_memory,
// verification, device_timer, reports
constexpr Pipeline kDevice{"gpu", "GPU", true, false, false, false, false, false, false,
                           Verification::device, true, false};
constexpr Pipeline kHost{"host", "host CPU", false, false, false, true, false, true, false,
                         Verification::host, false, false};
constexpr Pipeline kStreamed{"streamed", "GPU, operands in host memory, timed host to host", true, false, false,
                             true, true, false, true, Verification::entries, false, true};
constexpr Pipeline kDistributed{"distributed", "MPI ranks: GPUs over NCCL or the copy engines, or CPUs over MPI",
                                true, true, true, false, false, false, false, Verification::ranks, false, false};

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

bool pipeline_uses_gpus(const Algorithm& a, const Params& params) {
  const Pipeline& p = pipeline_of(a);
  if (!p.by_engine) return p.gpu;
  const Algorithm* engine = a.engine_of ? a.engine_of(params) : nullptr;
  return engine ? pipeline_of(*engine).gpu : p.gpu;
}

}  // namespace mmlab
