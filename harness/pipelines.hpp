// The four pipelines, one per backend: what a device, host, streamed or distributed configuration
// does in each phase of pipeline.hpp (check, prepare, verify, time) and in its row, as facts chosen
// once per configuration from its algorithm's backend. CUDA-free: the sweep and the listing read them too.
#pragma once

#include "core/algorithm.hpp"

namespace mmlab {

// How a configuration's output is verified (and each timed trial's audited, as it was verified).
enum class Verification {
  device,   // the whole C on the device against float64, each trial's against the verified one's hash
  host,     // the whole C as run() left it in host memory against float64, each trial's alike
  entries,  // C in host memory, perhaps too large for a whole reference: entries against float64
  ranks,    // every rank's block of C (distributed_pipeline.cpp)
};

// A pipeline: what one backend's configurations do in the phases above, chosen once per
// configuration from its algorithm's backend (pipeline_of). The harness tells the backends apart here
// only: every other step asks its configuration's pipeline.
struct Pipeline {
  const char* name;   // as `mmlab list --format json` and the Python package name it
  const char* where;  // as `mmlab list` says where it runs
  // Needs a GPU of its own (a machine without one records its rows as skipped); `by_engine`: where its
  // products run is decided by its engine (Algorithm::engine_of), a GPU unless that is a host algorithm's.
  bool gpu, by_engine;
  bool collective;      // every rank of the job takes each step (its own trial loop, agreed over ranks)
  bool host_operands;   // A, B and C in (pinned) host memory
  bool end_to_end;      // timed from host to host whatever the sweep's scope; no L2 flush
  bool kernel_only;     // the scopes other than kernel and the L2 flush do not apply (a skipped row)
  bool own_memory;      // the algorithm allocates its device memory itself (device_bytes: its workspace)
  Verification verification;
  bool device_timer;    // timed on the GPU (the blocking kernel, events, graphs); else the host's clock
  bool reports;         // the algorithm reports phases per trial (Algorithm::streamed_report)
};
const Pipeline& pipeline_of(const Algorithm& a);

// Whether a configuration runs on GPUs: its pipeline's, or where its products run by its engine's
// algorithm (a distributed algorithm with a host engine runs on CPUs). A machine without one records
// it as skipped.
bool pipeline_uses_gpus(const Algorithm& a, const Params& params);

}  // namespace mmlab
