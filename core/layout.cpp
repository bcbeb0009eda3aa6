// Layouts and the messages between them (layout.hpp).
#include "core/layout.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/decompositions.hpp"

namespace mmlab {

Rect intersect(const Rect& a, const Rect& b) {
  const long r0 = std::max(a.row0, b.row0), r1 = std::min(a.row0 + a.rows, b.row0 + b.rows);
  const long c0 = std::max(a.col0, b.col0), c1 = std::min(a.col0 + a.cols, b.col0 + b.cols);
  if (r1 <= r0 || c1 <= c0) return {};
  return {r0, r1 - r0, c0, c1 - c0};
}

Grid home_grid(int ranks) {
  Grid g;
  for (int r = 1; r * r <= ranks; ++r)
    if (ranks % r == 0) g.rows = r;
  g.cols = ranks / g.rows;
  return g;
}

Layout block_layout(int ranks, const std::function<Rect(int rank)>& block) {
  Layout out(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const Rect b = block(r);
    if (b.empty()) continue;
    out[r].pieces.push_back({b, 0, 0});
    out[r].rows = b.rows, out[r].cols = b.cols;
  }
  return out;
}

Layout home_layout(long rows, long cols, int ranks) {
  const Grid g = home_grid(ranks);
  return block_layout(ranks, [&](int r) {
    const Part i = part(rows, g.rows, r / g.cols), j = part(cols, g.cols, r % g.cols);
    return Rect{i.offset, i.size, j.offset, j.size};
  });
}

long block_cyclic_count(long n, long nb, int p, int procs) {
  const long blocks = n / nb, extra = n % nb;  // whole blocks, and the last one's size
  long count = (blocks / procs) * nb;
  const long rest = blocks % procs;
  if (p < rest)
    count += nb;
  else if (p == rest)
    count += extra;
  return count;
}

Layout block_cyclic_layout(long rows, long cols, long rb, long cb, int pr, int pc,
                           const std::function<int(int p, int q)>& rank_of, int ranks) {
  if (rb < 1 || cb < 1) throw std::invalid_argument("block_cyclic_layout: block sizes must be positive");
  Layout out(static_cast<std::size_t>(ranks));
  for (int p = 0; p < pr; ++p)
    for (int q = 0; q < pc; ++q) {
      Share& s = out.at(std::size_t(rank_of(p, q)));
      s.rows = block_cyclic_count(rows, rb, p, pr), s.cols = block_cyclic_count(cols, cb, q, pc);
      for (long I = p, lr = 0; I * rb < rows; I += pr, lr += rb)
        for (long J = q, lc = 0; J * cb < cols; J += pc, lc += cb)
          s.pieces.push_back({{I * rb, std::min(rb, rows - I * rb), J * cb, std::min(cb, cols - J * cb)}, lr, lc});
    }
  return out;
}

std::size_t Redistribution::sent() const {
  std::size_t n = 0;
  for (const auto& [peer, list] : sends)
    for (const LocalCopy& c : list) n += std::size_t(c.count());
  return n;
}

std::size_t Redistribution::received() const {
  std::size_t n = 0;
  for (const auto& [peer, list] : receives)
    for (const LocalCopy& c : list) n += std::size_t(c.count());
  return n;
}

namespace {

// The rectangles that move from rank s's `from` share to rank d's `to` share, in the order both
// list them: s's pieces in order, and within each d's pieces in order.
std::vector<LocalCopy> between(const Share& from, const Share& to) {
  std::vector<LocalCopy> out;
  for (const Piece& p : from.pieces)
    for (const Piece& q : to.pieces) {
      const Rect g = intersect(p.global, q.global);
      if (g.empty()) continue;
      out.push_back({p.local_row0 + g.row0 - p.global.row0, p.local_col0 + g.col0 - p.global.col0,
                     q.local_row0 + g.row0 - q.global.row0, q.local_col0 + g.col0 - q.global.col0, g.rows, g.cols});
    }
  return out;
}

}  // namespace

Layout restrict_layout(const Layout& layout, const std::function<Rect(int rank)>& band) {
  Layout out(layout.size());
  for (std::size_t r = 0; r < layout.size(); ++r) {
    const Share& s = layout[r];
    out[r].rows = s.rows, out[r].cols = s.cols;
    const Rect b = band(int(r));
    for (const Piece& p : s.pieces) {
      const Rect g = intersect(p.global, b);
      if (g.empty()) continue;
      out[r].pieces.push_back(
          {g, p.local_row0 + (g.row0 - p.global.row0), p.local_col0 + (g.col0 - p.global.col0)});
    }
  }
  return out;
}

Redistribution plan_redistribution(const Layout& from, const Layout& to, int rank) {
  if (from.size() != to.size() || rank < 0 || std::size_t(rank) >= from.size())
    throw std::invalid_argument("plan_redistribution: layouts of different jobs, or a rank outside them");
  Redistribution r;
  const int ranks = int(from.size());
  r.in_place = from[rank] == to[rank];
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == rank) {
      if (!r.in_place) r.local = between(from[rank], to[rank]);
      continue;
    }
    if (std::vector<LocalCopy> out = between(from[rank], to[peer]); !out.empty()) r.sends[peer] = std::move(out);
    if (std::vector<LocalCopy> in = between(from[peer], to[rank]); !in.empty()) r.receives[peer] = std::move(in);
  }
  return r;
}

}  // namespace mmlab
