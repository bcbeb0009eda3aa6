// The four pipelines, one per backend: the facts of a device, host, streamed or distributed
// configuration that the sweep, the scheduling, the rows and the listing read (where it runs, whether
// every rank takes each step, how it is verified), chosen once per configuration from its algorithm's
// backend. What each backend does in the phases of pipeline.hpp is its class there (pipeline.cpp's
// Phases, distributed_pipeline.cpp), chosen by the same facts. CUDA-free.
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

// A pipeline: what one backend's configurations are, chosen once per configuration from its
// algorithm's backend (pipeline_of). Each fact is set by its name where a pipeline is made
// (pipelines.cpp); unset, it is false.
struct Pipeline {
  const char* name = "";   // as `mmlab list --format json` and the Python package name it
  const char* where = "";  // as `mmlab list` says where it runs
  // Needs a GPU of its own (a machine without one records its rows as skipped); `by_engine`: where its
  // products run is decided by its engine (Algorithm::engine_of), a GPU unless that is a host algorithm's.
  bool gpu = false, by_engine = false;
  bool collective = false;  // every rank of the job takes each step (its own trial loop, agreed over ranks)
  bool end_to_end = false;  // timed from host to host whatever the sweep's scope; no L2 flush
  Verification verification = Verification::device;  // and so its phases (pipeline.cpp's phases_of)
};
// An algorithm's pipeline, by its backend: asked once per configuration, when the configuration is
// made (sweep.hpp's Configuration holds it), and by the listing.
const Pipeline& pipeline_of(const Algorithm& a);

// Whether a configuration of `a` (whose pipeline is `p`) runs on GPUs: its pipeline's, or where its
// products run by its engine's algorithm (a distributed algorithm with a host engine runs on CPUs). A
// machine without one records it as skipped.
bool pipeline_uses_gpus(const Pipeline& p, const Algorithm& a, const Params& params);

}  // namespace mmlab
