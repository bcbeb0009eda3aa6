// How out_of_core (algorithms/composite/out_of_core.cu) cuts a product whose operands live in host memory
// into pieces that fit a device budget, and its model of the streamed run. CUDA-free, so the
// choice and the model are tested without a GPU.
//
// The schedule: C in panels of `rows` x `cols` (a panel stays on the device while it is computed);
// k in steps of `depth`; for each step, the panel's slice of A (rows x depth) comes in once and is
// used by every B tile of the step (depth x `tile`). Each product accumulates into the panel in
// place (C(panel, tile) += A B, the panel as C with its leading dimension) where the engine can;
// otherwise it writes a tile that a pass adds into the panel, unless one product covers the panel
// (depth = k, tile = cols) and writes it directly. At the last k step each tile of C goes back to
// the host as soon as its product is done. Two buffers of each kind, so the next copies overlap the
// current product and a panel goes back while the next one computes. A is read ceil(n / cols)
// times, B ceil(m / rows) times, C written once:
//   bytes in  = 4 (m k ceil(n / cols) + k n ceil(m / rows)),   bytes out = 4 m n.
// The model of a run is its first copies, then the slower of products and copies, then the last
// panel's tiles out (one, or the queue that builds when a tile goes out slower than the next is made):
//   ms = first in + max(products, other copies) + last out,
//   other copies = slack x max(in / rate in, out / rate out, (in / rate in + out / rate out) / both),
// where a copy's rate depends on its rows' length (a pitched copy of short rows is slower than one of
// whole rows) and `both` is how much faster copies in both directions at once move the same bytes.
// Products run at the engine's rate for their output's side and depth. Every rate is measured on the GPU
// (out_of_core's calibration, once per process, GPU and engine), so with a larger budget, whose plans
// include every plan of a smaller one, the chosen plan is never modelled slower.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmlab {

struct StreamPlan {
  long rows = 0, cols = 0, depth = 0, tile = 0;
  bool in_place = false;  // products write into the panel: no tile buffer, no add pass
  long ramp = 0;          // the first panel's first k step split here (0: not), so the first copies are short
  std::size_t device_bytes = 0;  // the buffers and the engine's workspace
  double bytes_in = 0, bytes_out = 0;
  long products = 0;  // engine calls over the whole product
};

// A rate measured at several points and read between them: linear in log2 of the point, the ends held.
struct RateCurve {
  std::vector<std::pair<double, double>> points;  // (point, rate), ascending points
  double at(double x) const;
};

// The engine's workspace for one product (m x n x k); and the rates the model takes.
using WorkspaceOf = std::function<std::size_t(long m, long n, long k)>;
constexpr double kWholeRows = 1e15;  // the row length of a copy of contiguous memory, as a point of in, out
constexpr long kRateDepth = 4096;    // the depth `gflops` is measured at
// The copies beside the products take this much longer than their rates say: in the pipeline the
// A slices, the B tiles and C's tiles share the link in bursts (on the H100 a cuBLAS plan whose
// copies were modelled at 95% of its products ran 1.2x its model, its products waiting 28 ms).
constexpr double kCopySlack = 1.15;
struct StreamRates {
  // The engine's products, GFLOP/s: by the side of their output (the square root of rows x cols: cuBLAS
  // loses the last wave's idle share on small outputs) at depth kRateDepth; and by depth, as the rate
  // over the rate at kRateDepth (outputs of 8192 x 8192).
  RateCurve gflops, depth_gain;
  // Products measured at their exact shape (rows, cols, depth): a plan's candidate tiles.
  std::map<std::array<long, 3>, double> shapes;
  double product_gflops(long rows, long cols, long depth) const;
  RateCurve in_gbs;   // host to device, by the bytes of a row (kWholeRows: contiguous)
  RateCurve out_gbs;  // device to host, likewise
  // Copies in and out at once, by the bytes of a row: (time in alone + time out alone) / time together
  // (1: they share the link; 2: each runs as fast as alone).
  RateCurve both;
  double add_gbs = 0; // the add pass's device memory rate (read the tile and the panel, write the panel)
};

// The plan of least modelled time (within 0.3% of it, the one that copies least) among those whose
// buffers fit `budget` bytes per GPU, each of `gpus` taking every gpus-th panel: tiles and k steps
// of max_side or its halves down to 64, k whole, tiles as wide as the panel; panels as tall as fit.
// `accumulates`: the engine adds into a panel in place. Empty, with `why`, when not even 64-row
// panels of 64 x 64 tiles fit.
// `measure` (may be null): the engine's rate for a product shape, or nullopt; the chosen plan's
// product is measured at its shape and the plans weighed again, until the choice stands on a measured
// product (at most eight shapes).
using MeasureProduct = std::function<std::optional<double>(long m, long n, long k)>;
std::optional<StreamPlan> plan_stream(long m, long n, long k, std::size_t budget, int gpus, long max_side,
                                      bool accumulates, const WorkspaceOf& workspace, const StreamRates& rates,
                                      std::string* why, const MeasureProduct& measure = nullptr);

// A plan of these pieces, its bytes and products counted (`workspace` may be null).
StreamPlan make_plan(long m, long n, long k, long rows, long cols, long depth, long tile, bool accumulates,
                     const WorkspaceOf& workspace);

// The k steps of a panel, (k0, depth) each: `depth` deep, the last what is left; the first panel's
// first step split at the ramp.
std::vector<std::pair<long, long>> k_steps(const StreamPlan& plan, long k, bool first_panel);

// The model above for a plan, in ms; `phases` (if given) receives products and copies alone.
struct StreamModel {
  double ms = 0, products_ms = 0, copies_ms = 0, first_ms = 0, last_ms = 0;
};
StreamModel model_stream(const StreamPlan& plan, long m, long n, long k, int gpus, const StreamRates& rates);
inline double predict_stream_ms(const StreamPlan& plan, long m, long n, long k, int gpus, const StreamRates& rates) {
  return model_stream(plan, m, n, k, gpus, rates).ms;
}

// The rates of the H100 PCIe machine the lab was measured on (docs/out-of-core-notes.md), for a plan
// chosen without a GPU (a dry run) and the tests; `tensor`: the FP32-accurate engine's products.
StreamRates nominal_stream_rates(bool tensor);

}  // namespace mmlab
