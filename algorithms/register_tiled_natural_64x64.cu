// register_tiled's natural-A kernels with 64x64 warp tiles (8x16 per thread; A and B both by
// cp.async), compiled apart from the 64x32 ones (register_tiled_natural_64x32.cu) and the quads
// kernels (register_tiled_quads.cu) so that no file takes long; the descriptor is register_tiled.cu.
#include "algorithms/launch/register_tiled_kernels.cuh"

namespace mmlab {

std::vector<RegisterTiledPoint> register_tiled_natural_64x64_points() {
  // clang-format off
  return {
    MMLAB_REGISTER_TILED_POINT(128, 128, 8, 64, 64) MMLAB_REGISTER_TILED_POINT(128, 128, 16, 64, 64)
    MMLAB_REGISTER_TILED_POINT(128, 256, 16, 64, 64) MMLAB_REGISTER_TILED_POINT(256, 128, 16, 64, 64)
    MMLAB_REGISTER_TILED_POINT(128, 64, 16, 64, 64) MMLAB_REGISTER_TILED_POINT(64, 128, 16, 64, 64)};
  // clang-format on
}

}  // namespace mmlab
