#include "algorithms/models/out_of_core_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mmlab {

namespace {

constexpr long kSmallest = 64;  // the smallest panel height and tile side a plan takes

long ceil_div(long a, long b) { return (a + b - 1) / b; }

// Device bytes: two C panels, two A slices, two B tiles, the product's own tile, the engine's workspace.
std::size_t device_bytes(long rows, long cols, long depth, long tile, const WorkspaceOf& workspace) {
  const double floats = 2.0 * rows * cols + 2.0 * rows * depth + 2.0 * depth * tile + double(rows) * tile;
  return std::size_t(4 * floats) + (workspace ? workspace(rows, tile, depth) : 0);
}

// B tiles over the whole width: each panel of `cols` columns takes ceil(its width / tile) of them.
long tiles_across(long n, long cols, long tile) {
  return (n / cols) * ceil_div(cols, tile) + (n % cols ? ceil_div(n % cols, tile) : 0);
}

}  // namespace

StreamPlan make_plan(long m, long n, long k, long rows, long cols, long depth, long tile, const WorkspaceOf& ws) {
  StreamPlan p;
  p.rows = rows, p.cols = cols, p.depth = depth, p.tile = tile;
  p.device_bytes = device_bytes(rows, cols, depth, tile, ws);
  p.bytes_in = 4.0 * (double(m) * k * ceil_div(n, cols) + double(k) * n * ceil_div(m, rows));
  p.bytes_out = 4.0 * double(m) * n;
  p.products = ceil_div(m, rows) * ceil_div(k, depth) * tiles_across(n, cols, tile);
  return p;
}

namespace {

std::string mib(double bytes) { return std::to_string(long(std::ceil(bytes / (1 << 20)))) + " MiB"; }

}  // namespace

double predict_stream_ms(const StreamPlan& p, long m, long n, long k, int gpus, const StreamRates& r) {
  const double panels = double(ceil_div(m, p.rows) * ceil_div(n, p.cols));
  const double share = std::ceil(panels / std::max(gpus, 1)) / panels;  // the busiest GPU's panels
  const double side = double(std::min(p.tile, p.depth)), rate = r.gflops * side / (side + r.side_cost);
  const double products = (2.0 * m * n * k / (rate * 1e6) + p.products * r.launch_ms) * share;
  // The first A slice and B tile come in before any product, the last panel goes out after all of
  // them; the other copies run under the products.
  const double first_bytes = 4.0 * (double(std::min(p.rows, m)) * std::min(p.depth, k) +
                                    double(std::min(p.depth, k)) * std::min(p.tile, n)),
               last_bytes = 4.0 * double(std::min(p.rows, m)) * std::min(p.cols, n);
  const double copies = (std::max(0.0, p.bytes_in * share - first_bytes) / (r.in_gbs * 1e6) +
                         std::max(0.0, p.bytes_out * share - last_bytes) / (r.out_gbs * 1e6));
  return first_bytes / (r.in_gbs * 1e6) + std::max(products, copies) + last_bytes / (r.out_gbs * 1e6);
}

std::optional<StreamPlan> plan_stream(long m, long n, long k, std::size_t budget, int gpus, long max_side,
                                      const WorkspaceOf& workspace, const StreamRates& nominal, std::string* why) {
  std::optional<StreamPlan> best;
  double best_ms = std::numeric_limits<double>::infinity();
  for (long side = std::max(max_side, kSmallest); side >= kSmallest; side /= 2) {
    const long tallest = std::min(m, 4 * side);
    const long tile = std::min(side, n), depth = std::min(side, k);
    // Panel widths: all of n, then halves (whole tiles), down to one tile.
    for (long tiles = ceil_div(n, tile);; tiles = ceil_div(tiles, 2)) {
      const long cols = std::min(n, tiles * tile);
      const auto fits = [&](long rows) { return device_bytes(rows, cols, depth, tile, workspace) <= budget; };
      const long lowest = std::min(m, kSmallest);
      if (fits(lowest)) {
        long rows = lowest;  // the tallest panel that fits: `tallest`, or a multiple of 64
        if (fits(tallest)) {
          rows = tallest;
        } else {
          long lo = 1, hi = tallest / kSmallest;  // multiples of 64: lo fits; above hi does not
          while (lo < hi) {
            const long mid = (lo + hi + 1) / 2;
            if (fits(mid * kSmallest)) lo = mid; else hi = mid - 1;
          }
          rows = lo * kSmallest;
        }
        const StreamPlan p = make_plan(m, n, k, rows, cols, depth, tile, workspace);
        // Within 1% of the best time (a compute-bound run), the plan that copies less.
        const double ms = predict_stream_ms(p, m, n, k, gpus, nominal);
        if (ms < best_ms * 0.99 || (ms <= best_ms * 1.01 && p.bytes_in < best->bytes_in))
          best_ms = std::min(ms, best_ms), best = p;
      }
      if (tiles == 1) break;
    }
  }
  if (!best && why)
    *why = "a device budget of " + mib(double(budget)) + " holds no plan: the smallest (" +
           std::to_string(std::min(m, kSmallest)) + "-row panels of " + std::to_string(std::min(n, kSmallest)) +
           " x " + std::to_string(std::min(k, kSmallest)) + " tiles) needs " +
           mib(double(device_bytes(std::min(m, kSmallest), std::min(n, kSmallest), std::min(k, kSmallest),
                                   std::min(n, kSmallest), workspace)));
  return best;
}

}  // namespace mmlab
