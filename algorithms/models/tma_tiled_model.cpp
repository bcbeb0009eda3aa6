// tma_tiled's cost model (tma_tiled_model.hpp).
#include "algorithms/models/tma_tiled_model.hpp"

#include <cmath>

namespace mmlab {

namespace {
// clang-format off
const LinearFits kFits = {
  {"tma", "tile=128x256;warp=32x128;depth=32;stages=3;split=1", "", 0.0135899, 0.00515711, 0.00513824, 0},
};
// clang-format on
}  // namespace

ModelTerms tma_tiled_model(const Problem& p, const Params& q, const DeviceInfo& d) {
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  const Shape2 tile = q.shape("tile");
  const double tiles = std::ceil(m / tile.x) * std::ceil(n / tile.y);
  return {{std::ceil(tiles / model_sms(d)) * std::ceil(k / q.integer("depth")), m * k / 1e6, 0}, fit_of(kFits, q)};
}

}  // namespace mmlab
