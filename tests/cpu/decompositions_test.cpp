// The decompositions' arithmetic (core/decompositions.hpp): every product term is computed once,
// SUMMA's panels tile k, peers are mutual, and the models' terms and memory are those the schedules
// move and hold.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/decompositions.hpp"
#include "core/layout.hpp"
#include "core/params.hpp"

namespace mmlab {
namespace {

const Problem kShapes[] = {{1, 1, 1}, {7, 7, 7}, {17, 33, 65}, {127, 129, 131}, {300, 260, 1028}, {2, 9, 3}};

struct Case {
  Decomposition kind;
  const char* grid;
};
const Case kCases[] = {{Decomposition::cannon, "1x1"},   {Decomposition::cannon, "2x2"},
                       {Decomposition::cannon, "3x3"},   {Decomposition::cannon, "2x2x2"},
                       {Decomposition::cannon, "4x4x2"}, {Decomposition::summa, "1x4"},
                       {Decomposition::summa, "2x2"},    {Decomposition::summa, "3x2"},
                       {Decomposition::dns, "2x1x2"},    {Decomposition::dns, "1x1x4"},
                       {Decomposition::dns, "2x2x2"},    {Decomposition::dns, "3x1x1"}};

TEST(Decompositions, EveryProductTermOnce) {
  for (const Case& c : kCases)
    for (const Problem& p : kShapes)
      for (long panel : {1L, 7L, 4096L}) {
        const Decomposed d{c.kind, p, parse_grid(c.grid), panel};
        SCOPED_TRACE(std::string(decomposition_algorithm(c.kind)) + " " + c.grid + " " + std::to_string(p.m) + "x" +
                     std::to_string(p.n) + "x" + std::to_string(p.k) + " panel " + std::to_string(panel));
        EXPECT_TRUE(grid_problem(c.kind, d.grid).empty());
        double flop = 0;
        for (int r = 0; r < d.grid.volume(); ++r)
          for (const ModelStep& s : d.model(r).steps) flop += s.flop;
        EXPECT_DOUBLE_EQ(flop, 2.0 * p.m * p.n * p.k);
      }
}

TEST(Decompositions, CannonWalksEveryKBlockOncePerRank) {
  const Grid g = parse_grid("4x4x2");
  for (int r = 0; r < g.volume(); ++r) {
    const CannonRank c(g, r);
    std::vector<int> seen;  // the blocks of both layers of (i, j)
    for (int l = 0; l < g.layers; ++l) {
      const CannonRank other(g, l * 16 + c.i * 4 + c.j);
      for (int s = 0; s < other.steps; ++s) seen.push_back(int(other.kpart(100, s).offset));
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 25, 50, 75})) << "rank " << r;
  }
}

TEST(Decompositions, SummaPanelsTileKAndRespectOwners) {
  for (long k : {1L, 7L, 131L, 1028L})
    for (long panel : {1L, 7L, 64L, 4096L}) {
      const auto panels = summa_panels(k, 3, 2, panel);
      long next = 0;
      for (const SummaPanel& pa : panels) {
        EXPECT_EQ(pa.k0, next);
        EXPECT_GE(pa.width, 1);
        EXPECT_LE(pa.width, panel);
        const Part a = part(k, 2, pa.a_owner), b = part(k, 3, pa.b_owner);  // inside both owners' slices
        EXPECT_TRUE(pa.k0 >= a.offset && pa.k0 + pa.width <= a.offset + a.size) << k << " " << panel;
        EXPECT_TRUE(pa.k0 >= b.offset && pa.k0 + pa.width <= b.offset + b.size) << k << " " << panel;
        next = pa.k0 + pa.width;
      }
      EXPECT_EQ(next, k);
    }
}

TEST(Decompositions, PeersAreMutual) {
  for (const Case& c : kCases) {
    const Decomposed d{c.kind, {64, 64, 64}, parse_grid(c.grid), 16};
    for (int r = 0; r < d.grid.volume(); ++r)
      for (int q : d.peers(r)) {
        EXPECT_NE(q, r);
        const auto back = d.peers(q);
        EXPECT_TRUE(std::find(back.begin(), back.end(), r) != back.end()) << c.grid << ": " << r << " -> " << q;
      }
  }
  // Cannon 3x3: the four torus neighbours; DNS 1x1x4: the other layers (the reduction).
  EXPECT_EQ((Decomposed{Decomposition::cannon, {9, 9, 9}, parse_grid("3x3")}.peers(4)), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ((Decomposed{Decomposition::dns, {9, 9, 9}, parse_grid("1x1x4")}.peers(2)), (std::vector<int>{0, 1, 3}));
}

TEST(Decompositions, ModelTermsAndMemory) {
  // Cannon 2x2 at 1000: two steps of 500^3 products; the second needs one A and one B block.
  const Decomposed cannon{Decomposition::cannon, {1000, 1000, 1000}, parse_grid("2x2")};
  const Model m = cannon.model(3);
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_TRUE(m.pipelined);
  EXPECT_DOUBLE_EQ(m.steps[0].bytes_in, 0);
  EXPECT_DOUBLE_EQ(m.steps[1].bytes_in, 4.0 * 2 * 500 * 500);
  // A and B where they land and the shift's buffers, C; the starting layout's A, B and C; the moves'
  // staging at most (those three again, and the first blocks received).
  EXPECT_EQ(cannon.bytes_per_rank(), std::size_t(4) * (5 + 3 + 3 + 3) * 500 * 500);
  // Rows of 500 floats are 16-byte rows: nothing to pad. At 1002 (rows of 501) an engine that wants
  // them pads its product: A' 501 x 505, B' 505 x 505, C' 501 x 505 at most.
  EXPECT_EQ(cannon.padded_bytes(4), 0u);
  EXPECT_EQ(cannon.padded_bytes(1), 0u);
  const Decomposed odd{Decomposition::cannon, {1002, 1002, 1002}, parse_grid("2x2")};
  EXPECT_EQ(odd.padded_bytes(4), std::size_t(4) * (501 * 505 + 505 * 505 + 501 * 505));
  // SUMMA's panels of 300 (and the pieces of them on each rank) are whole 16-byte rows; of 7, not.
  EXPECT_EQ((Decomposed{Decomposition::summa, {1024, 1024, 1024}, parse_grid("2x2"), 300}.padded_bytes(4)), 0u);
  EXPECT_GT((Decomposed{Decomposition::summa, {1024, 1024, 1024}, parse_grid("2x2"), 7}.padded_bytes(4)), 0u);
  // The skew from the starting layout: rank (1, 1) takes one block of A and one of B, rank (0, 0) none.
  EXPECT_DOUBLE_EQ(m.layout_in_bytes, 4.0 * 2 * 500 * 500);
  EXPECT_DOUBLE_EQ(m.layout_out_bytes, 0);
  EXPECT_DOUBLE_EQ(cannon.model(0).layout_in_bytes, 0);
  // DNS 1x1x4: no broadcast, a reduction of the whole C.
  const Decomposed dns{Decomposition::dns, {1000, 1000, 1000}, parse_grid("1x1x4")};
  EXPECT_DOUBLE_EQ(dns.model(1).steps.at(0).bytes_in, 0);
  EXPECT_DOUBLE_EQ(dns.model(1).steps.at(0).bytes_out, 4.0 * 1000 * 1000);
  // A pipelined model: the skew's 2 MB, the first step's data, then the larger of each product and the
  // next transfer. 2.5e8 flop at 1 TFLOP/s: 0.25 ms; 2 MB at 1 GB/s: 2 ms, under the first product
  EXPECT_DOUBLE_EQ(m.predict_ms(1000, 1), 2.0 + 0 + std::max(0.25, 2.0) + 0.25);
  // A message's latency, once per phase that moves data: the skew and the shift.
  EXPECT_DOUBLE_EQ(m.predict_ms(1000, 1, 0, 0.01), 2.01 + std::max(0.25, 2.01) + 0.25);
}

// DNS in slabs: the same flops and reduced bytes in `slabs` steps, each slab's reduction moving while
// the next slab is made; at most one slab a row; none without layers to reduce over.
TEST(Decompositions, DnsSlabsReduceWhileTheNextIsMade) {
  const Decomposed one{Decomposition::dns, {1000, 1000, 1000}, parse_grid("1x1x4")},
      four{Decomposition::dns, {1000, 1000, 1000}, parse_grid("1x1x4"), 4096, 4};
  const Model a = one.model(1), b = four.model(1);
  ASSERT_EQ(a.steps.size(), 1u);
  ASSERT_EQ(b.steps.size(), 4u);
  EXPECT_TRUE(b.pipelined && b.outputs_overlap);
  double flop = 0, out = 0;
  for (const ModelStep& s : b.steps) flop += s.flop, out += s.bytes_out;
  EXPECT_DOUBLE_EQ(flop, a.steps[0].flop);
  EXPECT_DOUBLE_EQ(out, a.steps[0].bytes_out);
  // 5e8 flop at 1 TFLOP/s: 0.5 ms of products; 4 MB at 4 GB/s: 1 ms of reduction. In one piece they
  // add up (plus the moves from the starting layout, the same in both); in four the reduction of
  // each quarter hides behind the next quarter's product but for the last: 0.125 + 3 x max(0.125,
  // 0.25) + 0.25.
  const double moves = a.predict_ms(1000, 4) - 1.5;
  EXPECT_NEAR(b.predict_ms(1000, 4) - moves, 0.125 + 3 * 0.25 + 0.25, 1e-9);
  // One slab a row at most; with one layer nothing to overlap.
  EXPECT_EQ((Decomposed{Decomposition::dns, {3, 5, 7}, parse_grid("1x1x4"), 4096, 100}.model(0).steps.size()), 3u);
  EXPECT_EQ((Decomposed{Decomposition::dns, {64, 64, 64}, parse_grid("2x2x1"), 4096, 4}.model(0).steps.size()), 1u);
}

// Cannon's skew in slabs: the first step's product of each slab follows it while the next moves.
TEST(Decompositions, CannonSkewInSlabsHidesBehindTheFirstProduct) {
  const Decomposed whole{Decomposition::cannon, {1000, 1000, 1000}, parse_grid("2x2")},
      slabs{Decomposition::cannon, {1000, 1000, 1000}, parse_grid("2x2"), 4096, 4};
  const Model a = whole.model(3), b = slabs.model(3);  // rank (1, 1): a block of A and one of B skewed
  EXPECT_EQ(a.first_step_slabs, 1);
  EXPECT_EQ(b.first_step_slabs, 4);
  // 100 GFLOP/s: 2.5 ms a step; 1 GB/s: the skew's 2 MB in 2 ms, the shift's 2 MB in 2 ms. Whole: the
  // skew, then step 0 (the shift behind it), step 1. In four slabs of 0.5 ms and 0.625 ms of product
  // each, step 0 ends at 3 ms, the shift (after the last slab) at 4 ms; then step 1.
  EXPECT_DOUBLE_EQ(a.predict_ms(100, 1), 2.0 + std::max(2.5, 2.0) + 2.5);
  EXPECT_DOUBLE_EQ(b.predict_ms(100, 1), std::max(3.0, 2.0 + 2.0) + 2.5);
  // A rank with nothing to skew, and a torus of one, have nothing to slab.
  EXPECT_DOUBLE_EQ(slabs.model(0).predict_ms(100, 1), whole.model(0).predict_ms(100, 1));
  EXPECT_EQ((Decomposed{Decomposition::cannon, {9, 9, 9}, parse_grid("1x1"), 4096, 4}.model(0).first_step_slabs), 1);
  // At most the smallest first k block's width: k = 5 on 2 x 2 gives blocks of 3 and 2.
  EXPECT_EQ(cannon_slabs(Decomposed{Decomposition::cannon, {9, 9, 5}, parse_grid("2x2"), 4096, 4}), 2);
}

// Cannon `direct`: no skew (its layouts are the starting ones); rank (0, 1) fetches B(1, 1) for its
// first step and A(0, 0) for its second, rank (1, 1) nothing first and A(1, 0), B(0, 1) second.
TEST(Decompositions, CannonDirectFetchesFromWhereBlocksStart) {
  Decomposed d{Decomposition::cannon, {1000, 1000, 1000}, parse_grid("2x2")};
  d.direct = true;
  const double block = 4.0 * 500 * 500;
  for (int r = 0; r < 4; ++r) {
    const Model m = d.model(r);
    EXPECT_DOUBLE_EQ(m.layout_in_bytes, 0) << r;
    EXPECT_DOUBLE_EQ(m.layout_out_bytes, 0) << r;
    double in = 0;
    for (const ModelStep& s : m.steps) in += s.bytes_in;
    EXPECT_DOUBLE_EQ(in, 2 * block) << r;  // two blocks received, where Cannon's rank (1, 1) takes four
  }
  EXPECT_DOUBLE_EQ(d.model(1).steps[0].bytes_in, block);
  EXPECT_DOUBLE_EQ(d.model(3).steps[0].bytes_in, 0);
  EXPECT_DOUBLE_EQ(d.model(3).steps[1].bytes_in, 2 * block);
  // 1 TFLOP/s, 1 GB/s: rank (0, 1) waits 1 ms for B(1, 1), then 0.25 ms of product beside 1 ms of A(0, 0)
  EXPECT_DOUBLE_EQ(d.model(1).predict_ms(1000, 1), 1.0 + std::max(0.25, 1.0) + 0.25);
  // Its first fetch in four slabs at 100 GFLOP/s (2.5 ms a step): rank (0, 1)'s B block in 0.25 ms
  // slabs, each followed by 0.625 ms of product: step 0 ends at 2.75 ms, A(0, 0) is in at 2 ms.
  EXPECT_DOUBLE_EQ(d.model(1).predict_ms(100, 1), 1.0 + 2.5 + 2.5);
  d.slabs = 4;
  EXPECT_EQ(d.model(1).first_step_slabs, 4);
  EXPECT_DOUBLE_EQ(d.model(1).predict_ms(100, 1), 2.75 + 2.5);
  EXPECT_EQ(d.layout(Operand::a), home_layout(1000, 1000, 4));
  EXPECT_EQ(d.layout(Operand::b), home_layout(1000, 1000, 4));
  EXPECT_EQ(d.layout(Operand::c), home_layout(1000, 1000, 4));
}

// The bound is a least time: never above what the model predicts for the schedule at the same rates
// (the slowest rank's of each), for every decomposition, grid, shape, panel and slab count.
TEST(Decompositions, LeastTimeIsBelowTheSchedulesOwnPrediction) {
  for (const Case& c : kCases)
    for (const Problem& p : kShapes)
      for (long slabs : {1L, 3L})
        for (const std::string variant : {"default", "direct", "pipelined"}) {
          const bool direct = variant != "default";
          if (direct && (c.kind != Decomposition::cannon || parse_grid(c.grid).layers != 1)) continue;
          const Decomposed d = with_variant({c.kind, p, parse_grid(c.grid), 7, slabs}, variant);
          double flop = 0;
          for (int r = 0; r < d.grid.volume(); ++r)
            for (const ModelStep& s : d.model(r).steps) flop += s.flop;
          EXPECT_DOUBLE_EQ(flop, 2.0 * p.m * p.n * p.k);
          SCOPED_TRACE(std::string(decomposition_algorithm(c.kind)) + " " + c.grid + " " + variant + " " +
                       std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " slabs " +
                       std::to_string(slabs));
          for (const double gbs : {0.001, 1.0, 1000.0}) {
            double least = 0, predicted = 0;
            for (int r = 0; r < d.grid.volume(); ++r) {
              const Model m = d.model(r);
              EXPECT_GE(m.least_ms(1, gbs, 0.01), 0);
              least = std::max(least, m.least_ms(1, gbs, 0.01));
              predicted = std::max(predicted, m.predict_ms(1, gbs, 0, 0.01));
            }
            EXPECT_LE(least, predicted * (1 + 1e-12)) << gbs << " GB/s";
          }
        }
}

TEST(Decompositions, LeastTimeCountsFirstInputPortAndReduction) {
  // Cannon direct 2 x 2, 1000^3, 1 GFLOP/s and 1 GB/s: rank (0, 1) waits for B(1, 1) (1 ms) in four
  // slabs (0.25 ms), then computes for 500 ms; its port carries two blocks in and out (2 ms).
  Decomposed d{Decomposition::cannon, {1000, 1000, 1000}, parse_grid("2x2"), 4096, 4};
  d.direct = true;
  const Model m = d.model(1);
  EXPECT_DOUBLE_EQ(m.least.c_rows, 500);
  EXPECT_DOUBLE_EQ(m.least_ms(1, 1, 0), 0.25 + 500.0);
  EXPECT_DOUBLE_EQ(m.least_ms(1e6, 1, 0), std::max(0.25 + 500e-6, 2.0));  // the port's words
  EXPECT_DOUBLE_EQ(d.model(3).least_ms(1, 1, 0.5), 500.0);                // the diagonal waits for nothing
  // DNS 1 x 1 x 4: each rank's share of the reduction of C (4 MB) is 3 MB in and out; slabs of 4: the
  // last 1 MB slab's share leaves after the last product.
  const Decomposed dns{Decomposition::dns, {1000, 1000, 1000}, parse_grid("1x1x4"), 4096, 4};
  const Model r = dns.model(2);
  EXPECT_DOUBLE_EQ(r.least.in_bytes, 3e6);
  EXPECT_DOUBLE_EQ(r.least.last_bytes, 0.75e6);
  EXPECT_GT(r.least.layout_received + r.least.layout_sent, 0);  // C back to the 2 x 2 starting layout
  // SUMMA 2 x 2 with one panel per owner: rank (0, 0) may start on the panel it owns both halves of.
  const Decomposed summa{Decomposition::summa, {1000, 1000, 1000}, parse_grid("2x2"), 500};
  EXPECT_DOUBLE_EQ(summa.model(0).least.first_bytes, 0);
  EXPECT_DOUBLE_EQ(summa.model(3).least.first_bytes, 0);
  EXPECT_DOUBLE_EQ(summa.model(1).least.first_bytes, 4.0 * 500 * 500);  // one half of a panel
  EXPECT_DOUBLE_EQ(summa.model(1).least.in_bytes, 2 * 4.0 * 500 * 500);
}

TEST(Decompositions, PipelinedWaitsForOneSlabOfEachStep) {
  // 2 x 2, 1000^3, four slabs: rank (0, 1)'s first product waits for a quarter of B(1, 1); the diagonal's
  // for nothing, and its step 1 (A(1, 0) and B(0, 1)) in four moves of a quarter of both.
  const Decomposed d = with_variant({Decomposition::cannon, {1000, 1000, 1000}, parse_grid("2x2"), 4096, 4}, "pipelined");
  const double block = 4.0 * 500 * 500;
  EXPECT_EQ(d.model(1).steps.size(), 8u);
  EXPECT_DOUBLE_EQ(d.model(1).steps[0].bytes_in, block / 4);
  EXPECT_DOUBLE_EQ(d.model(1).least.first_bytes, block / 4);
  EXPECT_DOUBLE_EQ(d.model(3).least.first_bytes, 0);
  EXPECT_DOUBLE_EQ(d.model(3).steps[4].bytes_in, 2 * block / 4);
  // 200 GFLOP/s (1.25 ms a step) and 1 GB/s: direct's diagonal waits for both whole blocks of step 1
  // (2 ms), then computes (3.25 ms); pipelined's step 1 slabs (0.5 ms each) arrive as its products go
  // (the last at 2 ms, its product 2.1875 to 2.5 ms).
  const Decomposed direct = with_variant(d, "direct");
  EXPECT_DOUBLE_EQ(direct.model(3).predict_ms(200, 1), 3.25);
  EXPECT_DOUBLE_EQ(d.model(3).predict_ms(200, 1), 2.5);
  EXPECT_EQ(with_variant(d, "default").direct, false);
  // columns: direct's model (its first block in slabs; the slabs cut columns, not k)
  EXPECT_TRUE(with_variant(d, "columns").direct);
  EXPECT_FALSE(with_variant(d, "columns").every_step_in_slabs);
  // rows: k blocks in the row's order, so rank (0, 1)'s first step waits for A(0, 0) (a quarter of it
  // with 4 slabs) and owns its B block; its second fetches B(1, 1). The diagonal waits for nothing.
  const Decomposed rows = with_variant(d, "rows");
  EXPECT_TRUE(rows.direct && rows.by_rows && !rows.every_step_in_slabs);
  EXPECT_EQ(rows.model(1).steps.size(), 2u);
  EXPECT_DOUBLE_EQ(rows.model(1).steps[0].bytes_in, block);
  EXPECT_DOUBLE_EQ(rows.model(1).least.first_bytes, block / 4);
  EXPECT_DOUBLE_EQ(rows.model(0).least.first_bytes, 0);
  EXPECT_DOUBLE_EQ(rows.model(0).steps[1].bytes_in, 2 * block);
  // Its slabs cut m: at most m / q of them (direct's cut k: k / q).
  const Decomposed flat = with_variant({Decomposition::cannon, {6, 1000, 1000}, parse_grid("2x2"), 4096, 4}, "rows");
  EXPECT_EQ(cannon_slabs(flat), 3);
  EXPECT_EQ(cannon_slabs(with_variant(flat, "direct")), 4);
}

TEST(Decompositions, GridsEachAdmits) {
  EXPECT_FALSE(grid_problem(Decomposition::cannon, parse_grid("1x4")).empty());
  EXPECT_FALSE(grid_problem(Decomposition::cannon, parse_grid("4x4x3")).empty());
  EXPECT_FALSE(grid_problem(Decomposition::summa, parse_grid("2x1x2")).empty());
  EXPECT_TRUE(grid_problem(Decomposition::dns, parse_grid("5x1x3")).empty());
  Decomposition d;
  EXPECT_TRUE(decomposition_of("dist_summa", &d) && d == Decomposition::summa);
  EXPECT_FALSE(decomposition_of("cublas", &d));
}

TEST(Params, OnRequestValuesAreAcceptedNotSwept) {
  Axis a{"engine", AxisKind::choice, "", "x", {"x", "y"}};
  a.on_request = {"z"};
  EXPECT_EQ(canonical_value(a, "Z"), "z");
  try {
    canonical_value(a, "w");
    FAIL() << "w accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("z (on request)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mmlab
