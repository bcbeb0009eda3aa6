// The starting layout and the moves between layouts (core/layout.hpp): every entry of a layout is
// held once (or, where a layout replicates, everywhere it should), a Redistribution carried out on
// plain host buffers rebuilds the target layout exactly, sender and receiver agree on every message,
// and the decompositions' and cuBLASMp-like layouts move what the model says they move.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/decompositions.hpp"
#include "core/layout.hpp"

namespace mmlab {
namespace {

// Every rank's local buffer filled from a layout with entry (r, c) = r * cols + c + 1 (0: not held).
std::vector<std::vector<float>> fill(const Layout& l, long cols) {
  std::vector<std::vector<float>> out(l.size());
  for (std::size_t r = 0; r < l.size(); ++r) {
    out[r].assign(l[r].count(), 0.f);
    for (const Piece& p : l[r].pieces)
      for (long i = 0; i < p.global.rows; ++i)
        for (long j = 0; j < p.global.cols; ++j)
          out[r][std::size_t((p.local_row0 + i) * l[r].cols + p.local_col0 + j)] =
              float((p.global.row0 + i) * cols + p.global.col0 + j + 1);
  }
  return out;
}

// Each rank's Redistribution carried out by copying between the ranks' buffers (the messages as
// one stream of floats each, packed and unpacked in their rectangles' order).
std::vector<std::vector<float>> move(const Layout& from, const Layout& to, const std::vector<std::vector<float>>& in) {
  const int ranks = int(from.size());
  std::vector<Redistribution> plans;
  for (int r = 0; r < ranks; ++r) plans.push_back(plan_redistribution(from, to, r));
  std::vector<std::vector<float>> out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) out[r].assign(to[r].count(), 0.f);
  std::map<std::pair<int, int>, std::vector<float>> wire;  // (sender, receiver) -> message
  for (int r = 0; r < ranks; ++r)
    for (const auto& [peer, list] : plans[r].sends)
      for (const LocalCopy& c : list)
        for (long i = 0; i < c.rows; ++i)
          for (long j = 0; j < c.cols; ++j)
            wire[{r, peer}].push_back(in[r][std::size_t((c.src_row0 + i) * from[r].cols + c.src_col0 + j)]);
  for (int r = 0; r < ranks; ++r) {
    if (plans[r].in_place) out[r] = in[r];
    for (const LocalCopy& c : plans[r].local)
      for (long i = 0; i < c.rows; ++i)
        for (long j = 0; j < c.cols; ++j)
          out[r][std::size_t((c.dst_row0 + i) * to[r].cols + c.dst_col0 + j)] =
              in[r][std::size_t((c.src_row0 + i) * from[r].cols + c.src_col0 + j)];
    for (const auto& [peer, list] : plans[r].receives) {
      const std::vector<float>& message = wire.at({peer, r});
      std::size_t at = 0;
      for (const LocalCopy& c : list)
        for (long i = 0; i < c.rows; ++i)
          for (long j = 0; j < c.cols; ++j)
            out[r][std::size_t((c.dst_row0 + i) * to[r].cols + c.dst_col0 + j)] = message.at(at++);
      EXPECT_EQ(at, message.size()) << "rank " << r << " from " << peer << ": sender and receiver disagree";
    }
  }
  return out;
}

// How many ranks hold each entry.
std::vector<int> coverage(const Layout& l, long rows, long cols) {
  std::vector<int> n(std::size_t(rows * cols), 0);
  for (const Share& s : l)
    for (const Piece& p : s.pieces) {
      EXPECT_LE(p.local_row0 + p.global.rows, s.rows);
      EXPECT_LE(p.local_col0 + p.global.cols, s.cols);
      for (long i = 0; i < p.global.rows; ++i)
        for (long j = 0; j < p.global.cols; ++j) ++n[std::size_t((p.global.row0 + i) * cols + p.global.col0 + j)];
    }
  return n;
}

const long kRows[] = {1, 7, 17, 64, 129};
const long kCols[] = {1, 5, 33, 100};

TEST(Layout, HomeGridIsTheMostSquare) {
  EXPECT_EQ(home_grid(1).text(), "1x1");
  EXPECT_EQ(home_grid(2).text(), "1x2");
  EXPECT_EQ(home_grid(4).text(), "2x2");
  EXPECT_EQ(home_grid(6).text(), "2x3");
  EXPECT_EQ(home_grid(8).text(), "2x4");
  EXPECT_EQ(home_grid(9).text(), "3x3");
  EXPECT_EQ(home_grid(7).text(), "1x7");
}

TEST(Layout, HomeAndBlockCyclicHoldEveryEntryOnce) {
  for (long rows : kRows)
    for (long cols : kCols)
      for (int ranks : {1, 2, 4, 6, 9}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " over " + std::to_string(ranks));
        for (int n : coverage(home_layout(rows, cols, ranks), rows, cols)) EXPECT_EQ(n, 1);
        const Grid g = home_grid(ranks);
        for (long b : {1L, 3L, 64L}) {
          const Layout bc = block_cyclic_layout(rows, cols, b, b + 1, g.rows, g.cols,
                                                [&](int p, int q) { return p * g.cols + q; }, ranks);
          for (int n : coverage(bc, rows, cols)) EXPECT_EQ(n, 1);
          for (int r = 0; r < ranks; ++r) {  // the local buffer is numroc's count in each direction
            EXPECT_EQ(bc[r].rows, block_cyclic_count(rows, b, r / g.cols, g.rows));
            EXPECT_EQ(bc[r].cols, block_cyclic_count(cols, b + 1, r % g.cols, g.cols));
          }
        }
      }
}

TEST(Layout, OneBlockPerRankOfTwoIsTheHomeLayout) {
  // cuBLASMp's one block per rank (ceil-sized) on the 2 x 2 grid is the starting layout itself: nothing moves.
  for (long n : {4096L, 30001L, 7L}) {
    const Layout bc = block_cyclic_layout(n, n, (n + 1) / 2, (n + 1) / 2, 2, 2, [](int p, int q) { return p * 2 + q; }, 4);
    const Layout home = home_layout(n, n, 4);
    for (int r = 0; r < 4; ++r) EXPECT_TRUE(plan_redistribution(home, bc, r).in_place) << n << " rank " << r;
  }
}

TEST(Layout, RedistributionRebuildsTheTarget) {
  for (long rows : kRows)
    for (long cols : kCols)
      for (int ranks : {1, 2, 4, 8}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " over " + std::to_string(ranks));
        const Layout home = home_layout(rows, cols, ranks);
        const Grid g = home_grid(ranks);
        std::vector<Layout> targets = {
            // block-cyclic on the transposed grid, column-major ranks (cuBLASMp's), and 1D column slabs
            block_cyclic_layout(rows, cols, 2, 3, g.cols, g.rows, [&](int p, int q) { return q * g.cols + p; }, ranks),
            block_cyclic_layout(rows, cols, rows, (cols + ranks - 1) / ranks, 1, ranks, [](int, int q) { return q; },
                                ranks),
            // a replicated one: every rank holds the whole matrix
            block_layout(ranks, [&](int) { return Rect{0, rows, 0, cols}; }),
            // one rank holding all
            block_layout(ranks, [&](int r) { return r == ranks - 1 ? Rect{0, rows, 0, cols} : Rect{}; })};
        const auto in = fill(home, cols);
        for (const Layout& to : targets) {
          const auto want = fill(to, cols);
          EXPECT_EQ(move(home, to, in), want);
          // and back, from a partition (all but the replicated target)
          if (&to != &targets[2]) {
            EXPECT_EQ(move(to, home, want), in);
          }
        }
      }
}

// Cannon's skew in slabs of k: each rank's A block restricted to a band of its own k block, moved
// band by band into the same buffers, rebuilds the whole move; B likewise by rows. A band holds only
// what it should.
TEST(Layout, RestrictedBandsMoveTheWholeLayoutPieceByPiece) {
  for (const char* grid : {"2x2", "3x3", "2x2x2"})
    for (const Problem& p : {Problem{7, 5, 9}, Problem{64, 33, 100}, Problem{3, 3, 2}}) {
      SCOPED_TRACE(std::string(grid) + " " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                   std::to_string(p.k));
      const Decomposed d{Decomposition::cannon, p, parse_grid(grid)};
      const int ranks = d.grid.volume();
      for (const bool is_a : {true, false}) {
        const long rows = is_a ? p.m : p.k, cols = is_a ? p.k : p.n;
        const Layout home = home_layout(rows, cols, ranks), to = d.layout(is_a ? Operand::a : Operand::b);
        const auto in = fill(home, cols);
        std::vector<std::vector<float>> merged(static_cast<std::size_t>(ranks));
        for (int r = 0; r < ranks; ++r) merged[r].assign(to[r].count(), 0.f);
        const int slabs = 3;
        for (int t = 0; t < slabs; ++t) {
          const Layout band = restrict_layout(to, [&](int r) {
            const CannonRank c(d.grid, r);
            const Part k = c.kpart(p.k, 0), b = part(k.size, slabs, t);
            return is_a ? Rect{0, p.m, k.offset + b.offset, b.size} : Rect{k.offset + b.offset, b.size, 0, p.n};
          });
          for (int r = 0; r < ranks; ++r) EXPECT_EQ(band[r].count(), to[r].count());  // the same buffers
          const auto out = move(home, band, in);
          for (int r = 0; r < ranks; ++r)
            for (std::size_t i = 0; i < out[r].size(); ++i)
              if (out[r][i] != 0) {
                EXPECT_EQ(merged[r][i], 0.f) << "rank " << r << ": an entry moved twice";
                merged[r][i] = out[r][i];
              }
        }
        EXPECT_EQ(merged, fill(to, cols));
      }
    }
}

TEST(Layout, DecompositionsLayoutsMoveWhatTheModelSays) {
  struct Case {
    Decomposition kind;
    const char* grid;
  };
  for (const Case& c : {Case{Decomposition::cannon, "2x2"}, Case{Decomposition::cannon, "2x2x2"},
                        Case{Decomposition::cannon, "3x3"}, Case{Decomposition::summa, "2x2"},
                        Case{Decomposition::summa, "1x4"}, Case{Decomposition::dns, "2x2x1"},
                        Case{Decomposition::dns, "1x1x4"}, Case{Decomposition::dns, "2x1x2"}})
    for (const Problem& p : {Problem{128, 96, 64}, Problem{7, 9, 5}, Problem{1, 1, 1}}) {
      const Decomposed d{c.kind, p, parse_grid(c.grid), 4096};
      const int ranks = d.grid.volume();
      SCOPED_TRACE(std::string(decomposition_algorithm(c.kind)) + " " + c.grid + " " + std::to_string(p.m));
      const Layout a = d.layout(Operand::a), b = d.layout(Operand::b), cl = d.layout(Operand::c);
      // A and B arrive where the schedule reads them, C leaves every entry once
      for (int n : coverage(cl, p.m, p.n)) EXPECT_EQ(n, 1);
      EXPECT_EQ(move(home_layout(p.m, p.k, ranks), a, fill(home_layout(p.m, p.k, ranks), p.k)), fill(a, p.k));
      EXPECT_EQ(move(cl, home_layout(p.m, p.n, ranks), fill(cl, p.n)), fill(home_layout(p.m, p.n, ranks), p.n));
      for (int r = 0; r < ranks; ++r) {
        const Model m = d.model(r);
        const Redistribution in_a = plan_redistribution(home_layout(p.m, p.k, ranks), a, r),
                             in_b = plan_redistribution(home_layout(p.k, p.n, ranks), b, r);
        EXPECT_DOUBLE_EQ(m.layout_in_bytes, 4.0 * (std::max(in_a.sent(), in_a.received()) +
                                                   std::max(in_b.sent(), in_b.received())));
      }
    }
  // On the 2 x 2 torus Cannon's skew moves A on the second row of ranks and B on the second column,
  // one whole block each; SUMMA and DNS 2x2x1's C are the starting layout's blocks.
  const Problem p{64, 64, 64};
  const Decomposed cannon{Decomposition::cannon, p, parse_grid("2x2"), 4096};
  for (int r = 0; r < 4; ++r) {
    const Redistribution a = plan_redistribution(home_layout(64, 64, 4), cannon.layout(Operand::a), r);
    EXPECT_EQ(a.in_place, r < 2) << r;
    EXPECT_EQ(a.received(), r < 2 ? 0u : 32u * 32u) << r;
  }
  for (Decomposition k : {Decomposition::summa, Decomposition::dns}) {
    const Decomposed d{k, p, parse_grid("2x2"), 4096};
    for (int r = 0; r < 4; ++r)
      EXPECT_TRUE(plan_redistribution(d.layout(Operand::c), home_layout(64, 64, 4), r).in_place);
  }
}

}  // namespace
}  // namespace mmlab
