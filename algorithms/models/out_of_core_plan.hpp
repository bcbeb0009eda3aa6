// How out_of_core (algorithms/composite/out_of_core.cu) cuts a product whose operands live in host memory
// into pieces that fit a device budget, and its model of the streamed run. CUDA-free, so the
// choice and the model are tested without a GPU.
//
// The schedule: C in panels of `rows` x `cols` (a panel stays on the device while it is computed);
// k in steps of `depth`; for each step, the panel's slice of A (rows x depth) comes in once and is
// used by every B tile of the step (depth x `tile`), each product C(panel, tile) += A B added into
// the panel. Two buffers of each kind, so the next copies overlap the current product and a panel
// goes back to the host while the next one computes. A is read ceil(n / cols) times, B ceil(m /
// rows) times, C written once:
//   bytes in  = 4 (m k ceil(n / cols) + k n ceil(m / rows)),   bytes out = 4 m n,
// and the model of a run is its first copies, then the slower of products and copies, then the last
// panel's copy out:
//   ms = first in + max(products, the other bytes in / rate in + out / rate out) + last out.
// The copies are summed, not overlapped with each other: measured on the H100 (PCIe 5), copies in and
// out running at once shared ~31 GB/s between them (docs/out-of-core-notes.md).
// With `rows` panels the traffic per FLOP falls as 1 / rows (A resident, B streamed): the panel is
// chosen as tall as the budget allows (homework report, question 6: blocks that fit, double-buffered).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace mmlab {

struct StreamPlan {
  long rows = 0, cols = 0, depth = 0, tile = 0;
  std::size_t device_bytes = 0;  // the buffers and the engine's workspace
  double bytes_in = 0, bytes_out = 0;
  long products = 0;  // engine calls over the whole product
};

// The engine's workspace for one product (m x n x k); and the rates the model takes.
using WorkspaceOf = std::function<std::size_t(long m, long n, long k)>;
struct StreamRates {
  double gflops = 0;      // the engine on a full tile, in device memory
  double in_gbs = 0;      // host to device
  double out_gbs = 0;     // device to host
  double launch_ms = 0;   // the cost of one engine call beyond its FLOPs
  // Nominal rates only: products of side s = min(tile, depth) run at gflops s / (s + side_cost).
  // On the H100 cuBLAS ran 2048-wide, 2048-deep tiles at 44 TFLOP/s and 4096 ones at 48-50
  // (side_cost ~ 256); the FP32-accurate flagship 118 and 166-170 (~ 512).
  double side_cost = 0;
};

// The plan of least modelled time (with `nominal` rates; within 1% of it, the one that copies
// least) among those whose buffers fit `budget`
// bytes per GPU, each of `gpus` taking every gpus-th panel; tiles and k steps of max_side, or its
// halves down to 64, panels at most four times that tall. Empty, with `why`, when not even
// 64-row panels of 64 x 64 tiles fit.
std::optional<StreamPlan> plan_stream(long m, long n, long k, std::size_t budget, int gpus, long max_side,
                                      const WorkspaceOf& workspace, const StreamRates& nominal, std::string* why);

// A plan of these pieces, its bytes and products counted (`workspace` may be null).
StreamPlan make_plan(long m, long n, long k, long rows, long cols, long depth, long tile, const WorkspaceOf& workspace);

// The model above for a plan, in ms.
double predict_stream_ms(const StreamPlan& plan, long m, long n, long k, int gpus, const StreamRates& rates);

}  // namespace mmlab
