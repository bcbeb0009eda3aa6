// tf32x3's cost model (tf32x3_model.hpp).
#include "algorithms/models/tf32x3_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"half3", "stages=3", "", 0.0281133, 0.00530929, 0.00392894, 0.000174694},
  {"wgmma3", "stages=3", "", 0.0103967, 0.00981622, 2.84054e-05, 0.004067},
};
// clang-format on
}  // namespace

ModelTerms tf32x3_model(const Problem& p, const Params& q, const LaunchConfig& launch, const DeviceInfo& d) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const Dim3 g = launch.grid;
  const double blocks = double(g.volume()), sms = model_sms(d);
  return {{2 * 128.0 * 128.0 * (k / g.z) * std::ceil(blocks / sms) * sms / 1e9, (m * k + k * n) / 1e6,
           ((p.k % 4 ? m * k : 0) + (p.n % 4 ? k * n : 0)) / 1e6},
          fit_of(kFits, q)};
}


}  // namespace mmlab
