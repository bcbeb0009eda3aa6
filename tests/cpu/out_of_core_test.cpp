// out_of_core's plan and model (algorithms/models/out_of_core_plan.hpp), without a GPU.
#include <gtest/gtest.h>

#include <array>

#include "algorithms/models/out_of_core_plan.hpp"

namespace mmlab {
namespace {

const StreamRates kRates = nominal_stream_rates(false);
const WorkspaceOf kNoWorkspace = [](long, long, long) { return std::size_t(0); };

std::size_t buffers(const StreamPlan& p) {  // what the header says a plan holds
  return 4 * std::size_t(2 * p.rows * p.cols + 2 * p.rows * p.depth + 2 * p.depth * p.tile +
                         (p.in_place ? 0 : p.rows * p.tile));
}

// Every plan fits its budget, with the engine's workspace; a larger budget is never modelled slower
// and never copies more; a cuBLAS-like engine accumulates in place.
TEST(OutOfCorePlan, FitsTheBudgetAndALargerOneIsNeverSlower) {
  for (bool accumulates : {true, false})
    for (const auto& [m, n, k] : {std::tuple{49152L, 49152L, 49152L}, {32768L, 32768L, 32768L},
                                  {49152L, 16384L, 32768L}, {16384L, 16384L, 16384L}}) {
      const WorkspaceOf ws = [](long, long, long) { return std::size_t(32) << 20; };
      double last_ms = 1e300;
      for (std::size_t gib : {1, 2, 4, 8, 16, 32}) {
        std::string why;
        const auto p = plan_stream(m, n, k, gib << 30, 1, 65536, accumulates, ws, kRates, &why);
        ASSERT_TRUE(p) << why;
        EXPECT_LE(p->device_bytes, gib << 30);
        EXPECT_EQ(p->device_bytes, buffers(*p) + (std::size_t(32) << 20));
        if (accumulates) {
          EXPECT_TRUE(p->in_place);
        }
        const double ms = predict_stream_ms(*p, m, n, k, 1, kRates);
        EXPECT_LE(ms, last_ms * 1.01) << m << "x" << n << "x" << k << ", " << gib << " GiB";
        last_ms = std::min(ms, last_ms);
        // A read once per panel column, B once per panel row; C written once.
        EXPECT_DOUBLE_EQ(p->bytes_in,
                         4.0 * (double(m) * k * ((n + p->cols - 1) / p->cols) + double(k) * n * ((m + p->rows - 1) / p->rows)));
        EXPECT_DOUBLE_EQ(p->bytes_out, 4.0 * m * n);
      }
    }
}

// cuBLASXt's own plan (square blocks of 8192: panels, tiles and k steps of 8192) is a candidate, so
// the chosen plan is never modelled slower than it where it fits.
TEST(OutOfCorePlan, NeverWorseThanCublasXtsBlocks) {
  for (long n : {16384L, 32768L, 49152L}) {
    const StreamPlan xt = make_plan(n, n, n, 8192, 8192, 8192, 8192, true, kNoWorkspace);
    for (std::size_t gib : {2, 8, 32}) {
      const auto p = plan_stream(n, n, n, gib << 30, 1, 65536, true, kNoWorkspace, kRates, nullptr);
      ASSERT_TRUE(p);
      EXPECT_LE(predict_stream_ms(*p, n, n, n, 1, kRates), predict_stream_ms(xt, n, n, n, 1, kRates) * 1.01)
          << n << ", " << gib << " GiB";
    }
  }
}

// A problem that fits takes one panel, k whole, the panel one product; max_side bounds the tiles.
TEST(OutOfCorePlan, SmallProblemsAndTheSideLimit) {
  auto p = plan_stream(300, 200, 500, std::size_t(1) << 30, 1, 65536, false, kNoWorkspace, kRates, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rows, 300);
  EXPECT_EQ(p->cols, 200);
  EXPECT_EQ(p->tile, 200);
  EXPECT_EQ(p->depth, 500);
  EXPECT_TRUE(p->in_place);  // one product covers the panel: written directly
  EXPECT_EQ(p->products, 1);
  p = plan_stream(300, 200, 500, std::size_t(1) << 30, 1, 64, false, kNoWorkspace, kRates, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->tile, 64);
  EXPECT_EQ(p->depth, 64);
  EXPECT_FALSE(p->in_place);  // a tile buffer and the add pass
  EXPECT_EQ(p->products, ((300 + p->rows - 1) / p->rows) * 8 * 4);  // k steps 8, tiles across 4
}

// Too small a budget for one tile is a reason, not a plan.
TEST(OutOfCorePlan, ABudgetTooSmallSaysWhy) {
  std::string why;
  EXPECT_FALSE(plan_stream(4096, 4096, 4096, 64 << 10, 1, 8192, true, kNoWorkspace, kRates, &why));
  EXPECT_NE(why.find("holds no plan"), std::string::npos) << why;
  EXPECT_NE(why.find("64-row panels"), std::string::npos) << why;
  const WorkspaceOf huge = [](long, long, long) { return std::size_t(1) << 31; };
  EXPECT_FALSE(plan_stream(4096, 4096, 4096, std::size_t(1) << 30, 1, 8192, true, huge, kRates, &why));
}

// The chosen plan's product is measured at its exact shape and the plans weighed again (at most eight
// shapes): a shape measured slow is not chosen.
TEST(OutOfCorePlan, CandidateShapesAreMeasured) {
  const long n = 32768;
  const auto first = plan_stream(n, n, n, std::size_t(8) << 30, 1, 65536, true, kNoWorkspace, kRates, nullptr);
  ASSERT_TRUE(first);
  const std::array<long, 3> slow = {first->rows, first->tile, first->depth};
  int calls = 0;
  const MeasureProduct measure = [&](long r, long c, long d) -> std::optional<double> {
    ++calls;
    if (std::array<long, 3>{r, c, d} == slow) return 1000.0;
    return kRates.product_gflops(r, c, d);
  };
  const auto again = plan_stream(n, n, n, std::size_t(8) << 30, 1, 65536, true, kNoWorkspace, kRates, nullptr, measure);
  ASSERT_TRUE(again);
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 8);
  EXPECT_NE((std::array<long, 3>{again->rows, again->tile, again->depth}), slow);
  StreamRates known = kRates;
  known.shapes[slow] = 1000;
  EXPECT_DOUBLE_EQ(known.product_gflops(slow[0], slow[1], slow[2]), 1000);
}

// Rates between measured points: linear in log2 of the point, the ends held.
TEST(OutOfCorePlan, RateCurves) {
  const RateCurve c{{{1024, 10}, {4096, 30}}};
  EXPECT_DOUBLE_EQ(c.at(512), 10);
  EXPECT_DOUBLE_EQ(c.at(2048), 20);
  EXPECT_DOUBLE_EQ(c.at(1e9), 30);
  EXPECT_DOUBLE_EQ(RateCurve{}.at(5), 0);
}

// The model: the slower of products and copies between the first copies in and the last tile out;
// copies both ways at once as fast as `both` allows; the add pass where the products are not in
// place; GPUs share the panels.
TEST(OutOfCorePlan, TheModel) {
  StreamRates r;
  r.gflops.points = {{1000, 1000}};  // 1 TFLOP/s
  r.in_gbs.points = {{kWholeRows, 1}};
  r.out_gbs.points = {{kWholeRows, 2}};
  r.add_gbs = 12;
  StreamPlan p = make_plan(1000, 1000, 1000, 1000, 1000, 1000, 1000, true, nullptr);
  EXPECT_EQ(p.ramp, 192);  // the first step split at a quarter (a multiple of 64)
  EXPECT_EQ(k_steps(p, 1000, true), (std::vector<std::pair<long, long>>{{0, 192}, {192, 808}}));
  EXPECT_EQ(k_steps(p, 1000, false), (std::vector<std::pair<long, long>>{{0, 1000}}));
  EXPECT_NEAR(model_stream(p, 1000, 1000, 1000, 1, r).first_ms, 8 * 0.192, 1e-9);
  p.ramp = 0;  // the arithmetic below without it
  // first in: A slice and B tile, 4 + 4 ms; products 2 ms (no other copies); the one tile out, 2 ms
  EXPECT_NEAR(predict_stream_ms(p, 1000, 1000, 1000, 1, r), 8 + 2 + 2, 1e-9);
  StreamPlan q = make_plan(1000, 1000, 1000, 500, 1000, 1000, 1000, true, nullptr);  // two panels, two GPUs
  q.ramp = 0;
  EXPECT_NEAR(q.bytes_in, 12e6, 1e-3);  // A once, B twice
  // first in 2 + 4 ms; the rest (6 ms of 12 in, shared) 0 ms beyond; last out: 500 rows, 1 ms
  EXPECT_NEAR(predict_stream_ms(q, 1000, 1000, 1000, 2, r), 6 + 1 + 1, 1e-9);
  // Pitched copies of short rows are slower: 500-float B tiles at half the rate.
  r.in_gbs.points = {{2000, 0.5}, {kWholeRows, 1}};
  r.out_gbs.points = {{2000, 1}, {kWholeRows, 2}};
  StreamPlan t = make_plan(1000, 1000, 1000, 1000, 1000, 1000, 500, true, nullptr);
  t.ramp = 0;
  const StreamModel tm = model_stream(t, 1000, 1000, 1000, 1, r);
  EXPECT_NEAR(tm.first_ms, 4 + 4, 1e-9);  // A slice whole rows 4 MB at 1; B tile 2 MB at 0.5
  EXPECT_NEAR(tm.last_ms, 2 + 2 - 1, 1e-9);  // two tiles of 2 MB at 1, the second made 1 ms after the first
  // The other copies: in, A 4 ms and B 8 ms less the first 8; out, 4 ms less the last 3; sharing
  // the link (both = 1) they take 4 + 1 ms; twice as fast both ways at once, the longer one, 4; with
  // the slack the pipeline needs.
  EXPECT_NEAR(tm.copies_ms, 5 * kCopySlack, 1e-9);
  r.both.points = {{kWholeRows, 2}};
  EXPECT_NEAR(model_stream(t, 1000, 1000, 1000, 1, r).copies_ms, 4 * kCopySlack, 1e-9);
  // Not in place: each k step's add pass reads the tile and panel, writes the panel (12 bytes an entry).
  const StreamPlan add = make_plan(1000, 1000, 1000, 1000, 1000, 500, 1000, false, nullptr);
  EXPECT_FALSE(add.in_place);
  EXPECT_EQ(make_plan(1000, 1000, 1000, 1000, 1000, 1000, 1000, false, nullptr).ramp, 0);  // one product a panel
  EXPECT_NEAR(model_stream(add, 1000, 1000, 1000, 1, r).products_ms, 2 + 2 * 12e6 / 12e6, 1e-9);
}

}  // namespace
}  // namespace mmlab
