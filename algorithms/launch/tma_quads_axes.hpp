// The axes of the TMA-fed quads product, which tma_tiled and streamk share (each adds its own):
// the block tile, the warp tile, the k step and the shared-memory stages.
#pragma once

#include <vector>

#include "core/params.hpp"

namespace mmlab {

inline std::vector<Axis> tma_quads_axes(const char* tile, const char* warp) {
  return {{"tile", AxisKind::shape, "block tile BMxBN", tile, {}, {}},
          {"warp", AxisKind::shape, "warp tile: 32x64 (8x8 per thread) or 32x128 (8x16), in 4x4 quads", warp, {}, {}},
          {"depth", AxisKind::integer, "k step BK of a shared-memory tile", "32", {}, {}},
          {"stages", AxisKind::integer, "shared-memory stages, each filled by two TMA loads", "3", {}, {}}};
}

}  // namespace mmlab
