// The local engines of the distributed algorithms: the `engine` axis's values and the spec each names
// (core/distributed.hpp's kEngineNames and kDistributedEngineValues), each run by runtime/engine.hpp's Engine (each product
// shape prepared once; C += A B the algorithm's own or through its partial product; rows padded where
// its variant wants them aligned): cublas (cublas:default, pure FP32), cublas_tf32 (cublas:tf32, TF32
// tensor cores, judged as TF32), register_tiled (its `tuned` choice), tensor_cores
// (flagship:tensor_cores, the FP32-accurate tensor-core dispatcher: tf32x3 half3 or wgmma3 for each
// product's shape, FP32-level error), and eigen on the host (the CPU backend).
#include <stdexcept>

#include "algorithms/registry.hpp"
#include "distributed/context.hpp"

namespace mmlab::dist {

EngineSpec engine_spec(const std::string& name) {
  const std::string spec = distributed_engine_spec(name);
  if (spec.empty()) throw std::invalid_argument("no distributed engine " + name);
  return EngineSpec::parse(spec, algorithms::single_process());
}

long engine_row_alignment(const std::string& name) { return Engine::row_alignment(engine_spec(name)); }

}  // namespace mmlab::dist
