// out_of_core's plan and model (algorithms/models/out_of_core_plan.hpp), without a GPU.
#include <gtest/gtest.h>

#include "algorithms/models/out_of_core_plan.hpp"

namespace mmlab {
namespace {

const StreamRates kRates{50000, 50, 50, 0.01};
const WorkspaceOf kNoWorkspace = [](long, long, long) { return std::size_t(0); };

std::size_t buffers(const StreamPlan& p) {  // what the header says a plan holds
  return 4 * std::size_t(2 * p.rows * p.cols + 2 * p.rows * p.depth + 2 * p.depth * p.tile + p.rows * p.tile);
}

// Every plan fits its budget, with the engine's workspace, and a larger budget buys taller panels,
// so B is read fewer times.
TEST(OutOfCorePlan, FitsTheBudgetAndGrowsWithIt) {
  const long n = 49152;
  const WorkspaceOf ws = [](long, long, long) { return std::size_t(32) << 20; };
  double last_in = 1e300;
  for (std::size_t gib : {2, 8, 32}) {
    std::string why;
    const auto p = plan_stream(n, n, n, gib << 30, 1, 8192, ws, kRates, &why);
    ASSERT_TRUE(p) << why;
    EXPECT_LE(p->device_bytes, gib << 30);
    EXPECT_EQ(p->device_bytes, buffers(*p) + (std::size_t(32) << 20));
    EXPECT_LE(p->tile, 8192);
    EXPECT_LE(p->rows, 4 * 8192);
    EXPECT_LT(p->bytes_in, last_in) << gib << " GiB";
    last_in = p->bytes_in;
    // A read once per panel column, B once per panel row; C written once.
    EXPECT_DOUBLE_EQ(p->bytes_in, 4.0 * (double(n) * n * ((n + p->cols - 1) / p->cols) +
                                         double(n) * n * ((n + p->rows - 1) / p->rows)));
    EXPECT_DOUBLE_EQ(p->bytes_out, 4.0 * n * n);
  }
}

// A problem that fits takes one panel (its k steps overlap the first copies); max_side bounds the
// tiles and the panels' height.
TEST(OutOfCorePlan, SmallProblemsAndTheSideLimit) {
  auto p = plan_stream(300, 200, 500, std::size_t(1) << 30, 1, 8192, kNoWorkspace, kRates, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rows, 300);
  EXPECT_EQ(p->cols, 200);
  EXPECT_EQ(p->tile, 200);
  EXPECT_EQ(p->products, (500 + p->depth - 1) / p->depth);
  p = plan_stream(300, 200, 500, std::size_t(1) << 30, 1, 64, kNoWorkspace, kRates, nullptr);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->tile, 64);
  EXPECT_EQ(p->depth, 64);
  EXPECT_LE(p->rows, 256);
  EXPECT_EQ(p->products, ((300 + p->rows - 1) / p->rows) * 8 * 4);  // k steps 8, tiles across 4
}

// Too small a budget for one tile is a reason, not a plan.
TEST(OutOfCorePlan, ABudgetTooSmallSaysWhy) {
  std::string why;
  EXPECT_FALSE(plan_stream(4096, 4096, 4096, 64 << 10, 1, 8192, kNoWorkspace, kRates, &why));
  EXPECT_NE(why.find("holds no plan"), std::string::npos) << why;
  EXPECT_NE(why.find("64-row panels"), std::string::npos) << why;
  const WorkspaceOf huge = [](long, long, long) { return std::size_t(1) << 31; };
  EXPECT_FALSE(plan_stream(4096, 4096, 4096, std::size_t(1) << 30, 1, 8192, huge, kRates, &why));
}

// The model: the slower of products and copies (in and out summed) between the first copies in and
// the last copy out; GPUs share the panels; nominal rates discount narrow tiles.
TEST(OutOfCorePlan, TheModel) {
  StreamPlan p;
  p.rows = 1000, p.cols = 1000, p.depth = 1000, p.tile = 1000, p.products = 1;
  p.bytes_in = 8e6, p.bytes_out = 4e6;
  const StreamRates r{1000, 1, 2, 0};  // 1 TFLOP/s, 1 GB/s in, 2 GB/s out
  // first in: the A slice and B tile, 8 ms; products 2 ms under the other copies (16e6 - 8e6 bytes
  // in, 8 ms; none out but the last panel); the last panel out, 2 ms
  p.bytes_in = 16e6;
  EXPECT_NEAR(predict_stream_ms(p, 1000, 1000, 1000, 1, r), 8 + 8 + 2, 1e-9);
  StreamRates narrow = r;
  narrow.side_cost = 1000;  // 1000-wide tiles at half the rate: products 4 ms, the copies all but free
  narrow.in_gbs = narrow.out_gbs = 1e9;
  EXPECT_NEAR(predict_stream_ms(p, 1000, 1000, 1000, 1, narrow), 4, 1e-3);
  StreamPlan q = p;
  q.rows = 500, q.bytes_in = 6e6;  // two panels, one for each of two GPUs: first in 4 + 2 ms, the rest
  EXPECT_NEAR(predict_stream_ms(q, 1000, 1000, 1000, 2, r), 6 + 1 + 1, 1e-9);  // (1 ms) under products
}

}  // namespace
}  // namespace mmlab
