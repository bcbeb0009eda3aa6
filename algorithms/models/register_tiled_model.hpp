// register_tiled's `tuned` choice: every fitted kernel x k split priced by a cost model of waves
// over the device's SMs, the cheapest chosen (docs/flagship-notes.md, round two). Host code only.
//
// A kernel holds `o` blocks per SM (its occupancy on this device); B blocks of S k steps (16 deep)
// run as full waves of o blocks per SM and a last wave of j < o. A wave costs
// S x (a (1 - l) + o b l), l = (j - 1) / (o - 1): a is a step with one block on the SM, o b a step
// with o of them. Plus a launch cost t0, the split's zeroing and atomic adds (per element of C and
// split), and the padded copies of unaligned operands (per element). a, b and the rest were fitted
// on the H100 (relative least squares) to experiments/flagship-shape-model.ini (40 random shapes x
// every kernel below x split 1...16; the 64-row tiles in a run of their own, data/flagship/64-row/)
// and experiments/flagship-tuning.ini; the held-out check is experiments/random-shapes.ini (steps
// 11-13 of the notes). Where several candidates are within 8% of the cheapest, the 8x16 quads kernel
// (the highest FFMA share) is taken if it fills at least one wave: the model prices steady state no
// better than that.
#pragma once

#include <vector>

#include "algorithms/models/linear_fit.hpp"
#include "core/algorithm.hpp"

namespace mmlab {

// A register_tiled kernel and split: block tile bm x bn, k tile bk, warp tile wm x wn, stages.
struct RegisterTile {
  long bm, bn, bk, wm, wn, stages, split;
};

// The fitted kernels, each X(BM, BN, WM, WN, stages, blocks per SM on the H100, a, b): a and b in
// ms per 16-deep k step of a wave, with one block per SM and per block at full occupancy.
// clang-format off
#define MMLAB_REGISTER_TILED_FITTED(X)                      \
  X(64, 64, 64, 32, 3, 8, 0.0009360, 0.0004389)             \
  X(64, 128, 32, 64, 3, 4, 0.0007997, 0.0006656)            \
  X(64, 256, 32, 64, 3, 2, 0.0015168, 0.0013914)            \
  X(128, 64, 32, 64, 4, 4, 0.0010443, 0.0007208)            \
  X(128, 64, 64, 32, 3, 4, 0.0011168, 0.0008086)            \
  X(128, 64, 64, 64, 3, 4, 0.0025566, 0.0008557)            \
  X(128, 128, 32, 64, 2, 2, 0.0015832, 0.0013686)           \
  X(128, 128, 32, 128, 2, 2, 0.0027763, 0.0014138)          \
  X(128, 128, 64, 32, 3, 2, 0.0017438, 0.0016224)           \
  X(128, 128, 64, 64, 3, 2, 0.0025326, 0.0016123)           \
  X(128, 256, 32, 128, 2, 1, 0.0029992, 0.0)                \
  X(128, 256, 64, 64, 3, 1, 0.0032469, 0.0)
// clang-format on

// The fitted kernels' occupancies on the H100, in the list's order (used without a GPU).
std::vector<int> fitted_occupancies();

// The cheapest fitted kernel and split for `p` on `sms` SMs, the kernels holding `occupancy` (in the
// list's order) blocks per SM there.
// `ms`, when given, receives the model's time of the choice.
RegisterTile cheapest_register_tile(const Problem& p, double sms, const std::vector<int>& occupancy,
                                    double* ms = nullptr);

// The model's time of one kernel and split (the tuned choice's is the `ms` above); NaN for a kernel
// not in the fitted list.
double register_tile_ms(const RegisterTile& tile, const Problem& p, double sms, const std::vector<int>& occupancy);

// As a linear model (linear_fit.hpp): f1 = register_tile_ms, calibrated to the flagship's training run
// (the model above holds a launch time of an older clock, 22.9 us), for every `manual` configuration
// (what `tuned` resolves to).
ModelTerms register_tiled_model(const RegisterTile& tile, const Params& q, const Problem& p, double sms,
                                const std::vector<int>& occupancy);

}  // namespace mmlab
