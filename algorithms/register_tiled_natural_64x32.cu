// register_tiled's natural-A kernels with 64x32 warp tiles (8x8 per thread, each with its split-k
// epilogue as a second instance), compiled apart from the 64x64 ones (register_tiled_natural_64x64.cu)
// and the quads kernels (register_tiled_quads.cu) so that no file takes long; the descriptor is
// register_tiled.cu.
#include "algorithms/launch/register_tiled_kernels.cuh"

namespace mmlab {

std::vector<RegisterTiledPoint> register_tiled_natural_64x32_points() {
  // clang-format off
  return {
    MMLAB_REGISTER_TILED_POINT(128, 128, 16, 64, 32) MMLAB_REGISTER_TILED_POINT(128, 128, 32, 64, 32)
    MMLAB_REGISTER_TILED_POINT(256, 128, 16, 64, 32) MMLAB_REGISTER_TILED_POINT(128, 64, 16, 64, 32)
    MMLAB_REGISTER_TILED_POINT(64, 64, 16, 64, 32) MMLAB_REGISTER_TILED_POINT(64, 64, 32, 64, 32)};
  // clang-format on
}

}  // namespace mmlab
