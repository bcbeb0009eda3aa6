// register_tiled's quads kernels (warp tiles 32x64 and 32x128: 4x4 quads, A transposed in shared
// memory), compiled apart from the natural-A kernels (register_tiled_natural_64x64.cu,
// register_tiled_natural_64x32.cu) so that no file takes long; the descriptor is register_tiled.cu.
#include "algorithms/launch/register_tiled_kernels.cuh"

namespace mmlab {

std::vector<RegisterTiledPoint> register_tiled_quads_points() {
  // clang-format off
  return {
    MMLAB_REGISTER_TILED_POINT(128, 128, 8, 32, 64) MMLAB_REGISTER_TILED_POINT(128, 128, 16, 32, 64)
    MMLAB_REGISTER_TILED_POINT(128, 64, 16, 32, 64) MMLAB_REGISTER_TILED_POINT(128, 128, 8, 32, 128)
    MMLAB_REGISTER_TILED_POINT(128, 128, 16, 32, 128) MMLAB_REGISTER_TILED_POINT(128, 256, 16, 32, 128)
    MMLAB_REGISTER_TILED_POINT(64, 128, 16, 32, 64) MMLAB_REGISTER_TILED_POINT(64, 256, 16, 32, 64)};
  // clang-format on
}

}  // namespace mmlab
