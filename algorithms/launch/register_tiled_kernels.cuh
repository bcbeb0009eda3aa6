// register_tiled's compiled kernels, listed in three files that compile apart (under a minute each
// on one core): register_tiled_natural_64x64.cu and register_tiled_natural_64x32.cu (warp tiles 64
// rows tall: the natural-A kernel) and register_tiled_quads.cu (32 rows: the quads kernel); and what
// its descriptor (register_tiled.cu) needs of each compiled point: the tile it implements, its
// launcher and its occupancy.
#pragma once

#include <vector>

#include "algorithms/kernels/register_tiled_natural.cuh"
#include "algorithms/kernels/register_tiled_quads.cuh"
#include "algorithms/launch/common.cuh"
#include "algorithms/launch/operands.hpp"
#include "algorithms/models/register_tiled_model.hpp"

namespace mmlab {

// A resolved (manual) configuration's kernel and split.
inline RegisterTile register_tile(const Params& q) {
  const Shape2 t = q.shape("tile"), w = q.shape("warp");
  return {t.x, t.y, q.integer("depth"), w.x, w.y, q.integer("stages"), q.integer("split")};
}
inline long register_tiled_threads(const RegisterTile& t) { return 32 * (t.bm / t.wm) * (t.bn / t.wn); }
inline std::size_t register_tiled_shared_bytes(const RegisterTile& t) {
  const long pitch_a = t.wm == 32 ? t.bm + 4 : t.bm;  // the quads kernel pads A's transposed rows
  return sizeof(float) * std::size_t(t.stages * (pitch_a * t.bk + t.bk * t.bn));
}

using RegisterTiledLauncher = void (*)(const RunArgs&, const Operands&, const LaunchConfig&, int per, bool split);

struct RegisterTiledPoint {
  KernelTable<RegisterTiledLauncher>::Entry entry;
  RegisterTile tile;        // split 1
  int (*blocks_per_sm)();  // its occupancy on this device (split 1)
};
std::vector<RegisterTiledPoint> register_tiled_natural_64x64_points();
std::vector<RegisterTiledPoint> register_tiled_natural_64x32_points();
std::vector<RegisterTiledPoint> register_tiled_quads_points();

namespace {  // each instance lives in the one file that lists its point

// The kernel of a compiled point: WM 32 the quads kernel, else natural-A (whose 8x8 tiles have a
// separate split-k epilogue).
using RegisterTiledKernel = void (*)(const float*, int, const float*, int, float*, int, int, int, int, int, bool);
template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages>
RegisterTiledKernel register_tiled_kernel_of(bool split) {
  if constexpr (kWM == 32)
    return register_tiled_quads_kernel<kBM, kBN, kBK, kStages, kWN / 32>;
  else if constexpr (kWN == 32)
    return split ? register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, true>
                 : register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
  else
    return register_tiled_kernel<kBM, kBN, kBK, kWN, kStages, false>;
}

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages>
void register_tiled_launch(const RunArgs& r, const Operands& o, const LaunchConfig& lc, int per, bool split) {
  const RegisterTiledKernel kernel = register_tiled_kernel_of<kBM, kBN, kBK, kWM, kWN, kStages>(split);
  allow_shared_bytes(kernel, lc.shared_bytes);
  kernel<<<dim(lc.grid), dim(lc.block), lc.shared_bytes, r.stream>>>(
      o.a, o.lda, o.b, o.ldb, r.c, int(r.problem.n), int(r.problem.m), int(r.problem.n), o.k, per, split);
}

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages>
int register_tiled_blocks_per_sm() {
  const RegisterTile t{kBM, kBN, kBK, kWM, kWN, kStages, 1};
  return resident_blocks(register_tiled_kernel_of<kBM, kBN, kBK, kWM, kWN, kStages>(false),
                         int(register_tiled_threads(t)), register_tiled_shared_bytes(t));
}

}  // namespace

// A compiled point (BM, BN, BK, WM, WN) with 2, 3 and 4 stages, as rows of a points list.
#define MMLAB_REGISTER_TILED_STAGE(BM, BN, BK, WM, WN, S)                                                  \
  {{{"manual", {{"tile", shape_text(BM, BN)}, {"warp", shape_text(WM, WN)}, {"depth", #BK}, {"stages", #S}}}, \
    register_tiled_launch<BM, BN, BK, WM, WN, S>},                                                           \
   {BM, BN, BK, WM, WN, S, 1},                                                                                \
   register_tiled_blocks_per_sm<BM, BN, BK, WM, WN, S>},
#define MMLAB_REGISTER_TILED_POINT(BM, BN, BK, WM, WN)                                               \
  MMLAB_REGISTER_TILED_STAGE(BM, BN, BK, WM, WN, 2) MMLAB_REGISTER_TILED_STAGE(BM, BN, BK, WM, WN, 3) \
  MMLAB_REGISTER_TILED_STAGE(BM, BN, BK, WM, WN, 4)

}  // namespace mmlab
