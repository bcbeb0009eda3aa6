#include "algorithms/models/out_of_core_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace mmlab {

namespace {

constexpr long kSmallest = 64;     // the smallest panel height and tile side a plan takes
constexpr long kLongRows = 8192;  // the shortest tile and k step taken where longer ones fit

long ceil_div(long a, long b) { return (a + b - 1) / b; }

bool writes_in_place(long k, long cols, long depth, long tile, bool accumulates) {
  return accumulates || (depth >= k && tile >= cols);
}

// Device floats that grow with the panel's height, and those that do not: two C panels, two A
// slices, the product's own tile unless it writes in place; two B tiles.
double floats_per_row(long cols, long depth, long tile, bool in_place) {
  return 2.0 * cols + 2.0 * depth + (in_place ? 0.0 : double(tile));
}

std::size_t device_bytes(long rows, long cols, long depth, long tile, bool in_place, const WorkspaceOf& workspace) {
  const double floats = double(rows) * floats_per_row(cols, depth, tile, in_place) + 2.0 * depth * tile;
  return std::size_t(4 * floats) + (workspace ? workspace(rows, tile, depth) : 0);
}

// B tiles over the whole width: each panel of `cols` columns takes ceil(its width / tile) of them.
long tiles_across(long n, long cols, long tile) {
  return (n / cols) * ceil_div(cols, tile) + (n % cols ? ceil_div(n % cols, tile) : 0);
}

// The heights a panel may take up to `tallest`: it, and a ladder of eight steps an octave from 64
// (64, 72, 80, ..., 128, 144, ...; each a multiple of 64 above 512) below it.
std::vector<long> heights(long tallest) {
  std::vector<long> out = {tallest};
  for (long octave = kSmallest; octave < tallest; octave *= 2)
    for (long step = 0; step < 8; ++step) {
      const long h = octave + octave / 8 * step;
      if (h < tallest && (h <= 512 || h % kSmallest == 0)) out.push_back(h);
    }
  return out;
}

std::string mib(double bytes) { return std::to_string(long(std::ceil(bytes / (1 << 20)))) + " MiB"; }

}  // namespace

double RateCurve::at(double x) const {
  if (points.empty()) return 0;
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  const auto hi = std::lower_bound(points.begin(), points.end(), x,
                                   [](const std::pair<double, double>& p, double v) { return p.first < v; });
  const auto lo = hi - 1;
  const double t = std::log2(x / lo->first) / std::log2(hi->first / lo->first);
  return lo->second + t * (hi->second - lo->second);
}

double StreamRates::product_gflops(long rows, long cols, long depth) const {
  if (const auto it = shapes.find({rows, cols, depth}); it != shapes.end()) return it->second;
  const double gain = depth_gain.points.empty() ? 1.0 : depth_gain.at(double(depth));
  return gflops.at(std::sqrt(double(rows) * double(cols))) * gain;
}

StreamPlan make_plan(long m, long n, long k, long rows, long cols, long depth, long tile, bool accumulates,
                     const WorkspaceOf& ws) {
  StreamPlan p;
  p.rows = rows, p.cols = cols, p.depth = depth, p.tile = tile;
  p.in_place = writes_in_place(k, cols, depth, tile, accumulates);
  p.device_bytes = device_bytes(rows, cols, depth, tile, p.in_place, ws);
  p.bytes_in = 4.0 * (double(m) * k * ceil_div(n, cols) + double(k) * n * ceil_div(m, rows));
  p.bytes_out = 4.0 * double(m) * n;
  p.products = ceil_div(m, rows) * ceil_div(k, depth) * tiles_across(n, cols, tile);
  // The first step split at a quarter of it where products accumulate (not the one product of a panel).
  const long step = std::min(depth, k);
  if (!(p.in_place && !accumulates) && step >= 4 * kSmallest) p.ramp = step / 4 / kSmallest * kSmallest;
  return p;
}

std::vector<std::pair<long, long>> k_steps(const StreamPlan& plan, long k, bool first_panel) {
  std::vector<std::pair<long, long>> out;
  for (long k0 = 0; k0 < k; k0 += plan.depth) {
    const long depth = std::min(plan.depth, k - k0);
    if (k0 == 0 && first_panel && plan.ramp > 0 && plan.ramp < depth) {
      out.push_back({0, plan.ramp});
      out.push_back({plan.ramp, depth - plan.ramp});
    } else {
      out.push_back({k0, depth});
    }
  }
  return out;
}

StreamModel model_stream(const StreamPlan& p, long m, long n, long k, int gpus, const StreamRates& r) {
  const double panels = double(ceil_div(m, p.rows) * ceil_div(n, p.cols));
  const double share = std::ceil(panels / std::max(gpus, 1)) / panels;  // the busiest GPU's panels
  const long rows = std::min(p.rows, m), tile = std::min(p.tile, n), depth = std::min(p.depth, k);
  const double rate = r.product_gflops(rows, tile, depth);
  StreamModel out;
  out.products_ms = 2.0 * m * n * k / (rate * 1e6);
  if (!p.in_place)  // per k step, the add pass reads each tile and panel entry and writes it back
    out.products_ms += 12.0 * m * n * ceil_div(k, p.depth) / (r.add_gbs * 1e6);
  out.products_ms *= share;
  // A slice rows are `depth` long in host memory unless depth is all of k; B's and C's tiles `tile`.
  const double a_row = depth >= k ? kWholeRows : 4.0 * depth, b_row = tile >= n ? kWholeRows : 4.0 * tile;
  const double in_a = r.in_gbs.at(a_row) * 1e6, in_b = r.in_gbs.at(b_row) * 1e6, out_c = r.out_gbs.at(b_row) * 1e6;
  const double in_ms = (4.0 * m * k * ceil_div(n, p.cols) / in_a + 4.0 * k * n * ceil_div(m, p.rows) / in_b) * share;
  const double out_ms = p.bytes_out / out_c * share;
  // The first A slice and B tile come in before any product, the last tile goes out after all of
  // them; the other copies run under the products, in both directions at once.
  // The last panel's tiles go out one by one as their products finish: when a tile goes out slower
  // than the next is multiplied, the queue of copies out grows over the panel's width.
  const double first_depth = p.ramp > 0 && p.ramp < depth ? double(p.ramp) : double(depth);
  out.first_ms = 4.0 * rows * first_depth / in_a + 4.0 * first_depth * tile / in_b;
  const double tile_out = 4.0 * rows * tile / out_c, tile_product = out.products_ms / share / double(p.products);
  const double across = double(ceil_div(std::min(p.cols, n), tile));
  out.last_ms = std::max(tile_out, across * tile_out - (across - 1) * tile_product);
  const double other_in = std::max(0.0, in_ms - out.first_ms), other_out = std::max(0.0, out_ms - out.last_ms);
  const double both = r.both.points.empty() ? 1.0 : std::max(1.0, r.both.at(std::min(a_row, b_row)));
  out.copies_ms = kCopySlack * std::max({other_in, other_out, (other_in + other_out) / both});
  out.ms = out.first_ms + std::max(out.products_ms, out.copies_ms) + out.last_ms;
  return out;
}

std::optional<StreamPlan> plan_stream(long m, long n, long k, std::size_t budget, int gpus, long max_side,
                                      bool accumulates, const WorkspaceOf& workspace, const StreamRates& given,
                                      std::string* why, const MeasureProduct& measure) {
  StreamRates rates = given;
  std::map<std::tuple<long, long, long>, std::size_t> known;  // the engine's workspace, asked once a shape
  const WorkspaceOf ws = [&](long rows, long tile, long depth) -> std::size_t {
    if (!workspace) return 0;
    auto [it, fresh] = known.try_emplace({rows, tile, depth});
    if (fresh) it->second = workspace(rows, tile, depth);
    return it->second;
  };
  std::vector<std::pair<double, StreamPlan>> candidates;  // modelled ms, plan
  // Tiles and k steps of max_side and its halves, capped by n and k, first tiles down to kLongRows and
  // k steps down to a quarter of it (a copy of rows shorter than 8 KiB beside the products moved less
  // than half the link's rate on the H100 and slowed the products); shorter, down to 64, only where
  // nothing else fits.
  const long top = std::max(max_side, kSmallest);
  for (long shortest : {std::min(top, kLongRows), kSmallest}) {
    if (!candidates.empty()) break;
    std::set<long> depths, tiles;  // k steps from a quarter as long (A's slices are read far fewer times)
    for (long side = top; side >= shortest; side /= 2) tiles.insert(std::min(side, n));
    for (long side = top; side >= std::max(shortest / 4, kSmallest); side /= 2) depths.insert(std::min(side, k));
    for (long depth : depths)
      for (long tile : tiles)
        // Panel widths: all of n, then halves (whole tiles), down to one tile.
        for (long across = ceil_div(n, tile);; across = ceil_div(across, 2)) {
          const long cols = std::min(n, across * tile);
          const bool in_place = writes_in_place(k, cols, depth, tile, accumulates);
          const auto fits = [&](long rows) {
            return device_bytes(rows, cols, depth, tile, in_place, ws) <= budget;
          };
          // Panel heights: the tallest that fits (m, or a multiple of 64), and the heights of a fixed
          // ladder below it (a smaller budget's tallest is near one of them, so a larger budget keeps its
          // choices). The buffers grow linearly with the height; the workspace as the engine says, taken
          // at the tallest height without it (an upper bound where it grows with the height), then
          // lowered while it does not fit.
          const double per_row = 4 * floats_per_row(cols, depth, tile, in_place), fixed = 8.0 * depth * tile;
          const auto height = [&](double bytes) {
            const long rows = long(std::max(0.0, (double(budget) - fixed - bytes) / per_row));
            return rows >= m ? m : rows / kSmallest * kSmallest;
          };
          long tallest = height(0);
          if (tallest > 0) tallest = height(double(ws(tallest, tile, depth)));
          for (int lower = 0; lower < 16 && tallest >= kSmallest && !fits(tallest); ++lower)
            tallest = (tallest - 1) / kSmallest * kSmallest;
          if (tallest < std::min(m, kSmallest) || !fits(tallest)) {
            if (across == 1) break;
            continue;
          }
          const std::size_t most = ws(tallest, tile, depth);  // the workspace taken for every lower height
          const WorkspaceOf bound = [&](long, long, long) { return most; };
          for (long rows : heights(tallest)) {
            const StreamPlan p = make_plan(m, n, k, rows, cols, depth, tile, accumulates, bound);
            if (p.device_bytes > budget) continue;
            candidates.push_back({0.0, p});
          }
          if (across == 1) break;
        }
  }
  // The least modelled time; among plans within 0.3% of it, the one that copies least (the most slack
  // for the copies; a larger budget is then modelled at most 0.3% slower than a smaller one). With
  // `measure`, the chosen plan's product is measured at its shape and the plans weighed again, until
  // the choice stands on a measured product (at most eight shapes).
  const auto choose = [&] {
    double least = std::numeric_limits<double>::infinity();
    for (auto& [ms, p] : candidates) least = std::min(least, ms = predict_stream_ms(p, m, n, k, gpus, rates));
    std::optional<StreamPlan> best;
    for (const auto& [ms, p] : candidates)
      if (ms <= least * 1.003 && (!best || p.bytes_in < best->bytes_in)) best = p;
    return best;
  };
  std::optional<StreamPlan> best = choose();
  for (int round = 0; measure && best && round < 8; ++round) {
    const std::array<long, 3> shape = {std::min(best->rows, m), std::min(best->tile, n), std::min(best->depth, k)};
    if (rates.shapes.count(shape)) break;
    const std::optional<double> g = measure(shape[0], shape[1], shape[2]);
    rates.shapes[shape] = g ? *g : rates.product_gflops(shape[0], shape[1], shape[2]);
    best = choose();
  }
  if (!best && why) {
    const long r = std::min(m, kSmallest), c = std::min(n, kSmallest), d = std::min(k, kSmallest);
    *why = "a device budget of " + mib(double(budget)) + " holds no plan: the smallest (" + std::to_string(r) +
           "-row panels of " + std::to_string(c) + " x " + std::to_string(d) + " tiles) needs " +
           mib(double(device_bytes(r, c, d, c, writes_in_place(k, c, d, c, accumulates), ws)));
  }
  return best;
}

StreamRates nominal_stream_rates(bool tensor) {
  StreamRates r;
  // Products (GFLOP/s by output side at depth 4096, and the gain by depth): cuBLAS pure FP32 and the
  // FP32-accurate flagship on the H100 (data/out-of-core/round2: the log's rates).
  r.gflops.points = tensor ? std::vector<std::pair<double, double>>{{1024, 50000}, {2048, 120000}, {4096, 175000},
                                                                    {8192, 190000}, {16384, 195000}}
                           : std::vector<std::pair<double, double>>{{1024, 37000}, {2048, 50000}, {4096, 51500},
                                                                    {8192, 52000}, {16384, 52500}};
  r.depth_gain.points = {{512, 0.8}, {1024, 0.9}, {4096, 1.0}, {16384, 1.01}};
  // Copies beside products, by row bytes (rows 128 KiB apart; 16 KiB rows at 33 GB/s, 32 KiB at 48),
  // whole rows at 54 GB/s; both directions at once: short rows share the link, whole rows 1.6 times one.
  r.in_gbs.points = {{2048, 10}, {8192, 22}, {16384, 33}, {32768, 48}, {kWholeRows, 54}};
  r.out_gbs = r.in_gbs;
  r.both.points = {{16384, 1.0}, {kWholeRows, 1.6}};
  r.add_gbs = 2500;
  return r;
}

}  // namespace mmlab
