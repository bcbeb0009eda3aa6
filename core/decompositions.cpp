// The decompositions' schedules as arithmetic (see decompositions.hpp); the algorithm files in
// distributed/ say where each comes from.
#include "core/decompositions.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace mmlab {

bool decomposition_of(const std::string& algorithm, Decomposition* d) {
  for (Decomposition x : {Decomposition::cannon, Decomposition::summa, Decomposition::dns})
    if (algorithm == decomposition_algorithm(x)) return *d = x, true;
  return false;
}

const char* decomposition_algorithm(Decomposition d) {
  return d == Decomposition::cannon ? "dist_cannon" : d == Decomposition::summa ? "dist_summa" : "dist_dns";
}

std::string grid_problem(Decomposition d, const Grid& g) {
  if (d == Decomposition::cannon && (g.rows != g.cols || g.rows % g.layers != 0))
    return "dist_cannon needs a grid q x q x c with c dividing q (c = 1: Cannon; c > 1: 2.5D); not " + g.text();
  if (d == Decomposition::summa && g.layers != 1) return "dist_summa runs on a 2D grid pr x pc; not " + g.text();
  return {};
}

CannonRank::CannonRank(const Grid& g, int rank)
    : q(g.rows), steps(g.rows / g.layers), l(rank / (q * q)), i(rank % (q * q) / q), j(rank % q) {}

namespace {

// The part of k (split over `parts`, the larger first) that holds index k0 < k.
int owner(long k, int parts, long k0) {
  const long base = k / parts, extra = k % parts;
  if (k0 < extra * (base + 1)) return int(k0 / (base + 1));
  return int(extra + (k0 - extra * (base + 1)) / base);
}

struct DnsRank {
  int i, j, l;
  DnsRank(const Grid& g, int r) : i((r / g.cols) % g.rows), j(r % g.cols), l(r / (g.cols * g.rows)) {}
};

}  // namespace

long cannon_slabs(const Decomposed& d) {
  const int q = d.grid.rows;
  return q > 1 ? std::max(1L, std::min(d.slabs, (d.by_rows ? d.problem.m : d.problem.k) / q)) : 1;
}

long dns_slabs(const Decomposed& d, long rows) {
  return d.grid.layers > 1 ? std::max(1L, std::min(d.slabs, rows)) : 1;
}

std::vector<SummaPanel> summa_panels(long k, int pr, int pc, long panel) {
  // Panel edges: both owners' edges, then cut to at most `panel` wide.
  std::vector<long> edges = {k};
  for (int c = 0; c < pc; ++c) edges.push_back(part(k, pc, c).offset);
  for (int r = 0; r < pr; ++r) edges.push_back(part(k, pr, r).offset);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<SummaPanel> out;
  for (std::size_t e = 0; e + 1 < edges.size(); ++e)
    for (long k0 = edges[e]; k0 < edges[e + 1]; k0 += panel)
      out.push_back({k0, std::min(panel, edges[e + 1] - k0), owner(k, pc, k0), owner(k, pr, k0)});
  return out;
}

Model Decomposed::model(int rank, int domain) const {
  const Problem& p = problem;
  // Whether ranks `first` ... `last` (a group listed in increasing order) span link domains.
  auto far = [&](int first, int last) { return domain > 0 && first / domain != last / domain; };
  Model m;
  if (kind == Decomposition::cannon && direct) {
    // Step s: k block (j + s) mod q (rows: (i + s) mod q); A's block from rank (i, that), B's from
    // (that, j), but its own.
    const int q = grid.rows, i = rank / q, j = rank % q;
    const Part rows = part(p.m, q, i), cols = part(p.n, q, j);
    m.pipelined = true;
    // pipelined: each step a slab at a time, as steps of the model; direct: the first step's in slabs.
    const long slabs = cannon_slabs(*this), each = every_step_in_slabs ? slabs : 1;
    m.first_step_slabs = int(every_step_in_slabs ? 1 : slabs);
    m.run_ahead_group = every_step_in_slabs ? int(slabs) : 0;
    for (int s = 0; s < q; ++s) {
      const int kb = ((by_rows ? i : j) + s) % q;
      const Part k = part(p.k, q, kb);
      for (long t = 0; t < each; ++t) {
        const long w = part(k.size, each, t).size;
        ModelStep step;
        step.flop = 2.0 * rows.size * cols.size * w;
        const double a = kb != j ? 4.0 * rows.size * w : 0, b = kb != i ? 4.0 * w * cols.size : 0;
        step.bytes_in = a + b;
        step.far_in = (a > 0 && far(std::min(rank, i * q + kb), std::max(rank, i * q + kb)) ? a : 0) +
                      (b > 0 && far(std::min(rank, kb * q + j), std::max(rank, kb * q + j)) ? b : 0);
        m.steps.push_back(step);
        // Its blocks go out as its row's and column's come in (a permutation within rows and columns).
        m.least.in_bytes += a + b, m.least.out_bytes += a + b;
      }
    }
    m.least.first_bytes = m.steps.front().bytes_in / double(m.first_step_slabs);
    m.least.c_rows = rows.size, m.least.c_cols = cols.size;
  } else if (kind == Decomposition::cannon) {
    const CannonRank c(grid, rank);
    const Part rows = part(p.m, c.q, c.i), cols = part(p.n, c.q, c.j);
    const int base = c.l * c.q * c.q, right = base + c.i * c.q + (c.j + 1) % c.q,
              down = base + ((c.i + 1) % c.q) * c.q + c.j, plane = c.q * c.q;
    const bool far_a = far(std::min(rank, right), std::max(rank, right)),
               far_b = far(std::min(rank, down), std::max(rank, down)),
               far_c = far(c.i * c.q + c.j, (grid.layers - 1) * plane + c.i * c.q + c.j);
    m.pipelined = true;
    m.first_step_slabs = int(cannon_slabs(*this));
    for (int s = 0; s < c.steps; ++s) {
      const Part k = c.kpart(p.k, s);
      ModelStep step;
      step.flop = 2.0 * rows.size * cols.size * k.size;
      if (s > 0) {
        const double a = 4.0 * rows.size * k.size, b = 4.0 * k.size * cols.size;
        step.bytes_in = a + b, step.far_in = (far_a ? a : 0) + (far_b ? b : 0);
      }
      if (s + 1 == c.steps && grid.layers > 1) {
        step.bytes_out = 4.0 * rows.size * cols.size;
        step.far_out = far_c ? step.bytes_out : 0;
      }
      m.steps.push_back(step);
      m.least.in_bytes += step.bytes_in, m.least.out_bytes += step.bytes_in;  // a shift: as much out as in
    }
    // The first product waits for a slab of the skew; the layers' reduction of C after the last
    // (its share: (c - 1) / c of the block in and out, on any reduction's schedule).
    m.least.first_waits_for_layout = true;
    m.least.c_rows = rows.size, m.least.c_cols = cols.size;
    const double share = grid.layers > 1 ? double(grid.layers - 1) / grid.layers * 4.0 * rows.size * cols.size : 0;
    m.least.in_bytes += share, m.least.out_bytes += share, m.least.last_bytes = share;
  } else if (kind == Decomposition::summa) {
    const int i = rank / grid.cols, j = rank % grid.cols;
    const Part rows = part(p.m, grid.rows, i), cols = part(p.n, grid.cols, j);
    const bool far_a = far(i * grid.cols, i * grid.cols + grid.cols - 1),
               far_b = far(j, (grid.rows - 1) * grid.cols + j);
    m.pipelined = true;
    double first = -1;
    for (const SummaPanel& pa : summa_panels(p.k, grid.rows, grid.cols, panel)) {
      ModelStep s;
      s.flop = 2.0 * rows.size * cols.size * pa.width;
      const double a = grid.cols > 1 ? 4.0 * rows.size * pa.width : 0, b = grid.rows > 1 ? 4.0 * pa.width * cols.size : 0;
      s.bytes_in = a + b, s.far_in = (far_a ? a : 0) + (far_b ? b : 0);
      m.steps.push_back(s);
      // What it lacks of the panel comes in; what it owns goes out at least once.
      const double need = (pa.a_owner != j ? a : 0) + (pa.b_owner != i ? b : 0);
      m.least.in_bytes += need;
      m.least.out_bytes += (pa.a_owner == j ? a : 0) + (pa.b_owner == i ? b : 0);
      first = first < 0 ? need : std::min(first, need);  // it may start on the panel it lacks least of
    }
    m.least.first_bytes = std::max(first, 0.0);
    m.least.c_rows = rows.size, m.least.c_cols = cols.size;
  } else {
    const DnsRank d(grid, rank);
    const Part rows = part(p.m, grid.rows, d.i), cols = part(p.n, grid.cols, d.j),
               k = part(p.k, grid.layers, d.l);
    const int plane = grid.rows * grid.cols, row0 = d.l * plane + d.i * grid.cols;
    const double a = grid.cols > 1 ? 4.0 * rows.size * k.size : 0, b = grid.rows > 1 ? 4.0 * k.size * cols.size : 0;
    const bool far_c = far(d.i * grid.cols + d.j, (grid.layers - 1) * plane + d.i * grid.cols + d.j);
    // With layers, the product in slabs of C's rows, each reduced while the next is made.
    const long slabs = dns_slabs(*this, rows.size);
    m.pipelined = m.outputs_overlap = slabs > 1;
    for (long t = 0; t < slabs; ++t) {
      const long slab = part(rows.size, slabs, t).size;
      ModelStep s;
      s.flop = 2.0 * slab * cols.size * k.size;
      if (t == 0) {
        s.bytes_in = a + b;
        s.far_in = (far(row0, row0 + grid.cols - 1) ? a : 0) +
                   (far(d.l * plane + d.j, d.l * plane + (grid.rows - 1) * grid.cols + d.j) ? b : 0);
      }
      s.bytes_out = grid.layers > 1 ? 4.0 * slab * cols.size : 0;
      s.far_out = far_c ? s.bytes_out : 0;
      m.steps.push_back(s);
    }
    // A from its row's root (j = 0), B from its column's (i = 0); the first slab needs its rows of A and
    // all of B. The layers' reduction: its share, (layers - 1) / layers of each slab in and out, the
    // last slab's after the last product.
    const double need_a = d.j != 0 ? a : 0, need_b = d.i != 0 ? b : 0;
    const double share = grid.layers > 1 ? double(grid.layers - 1) / grid.layers : 0;
    double reduced = 0;
    for (const ModelStep& s : m.steps) reduced += s.bytes_out;
    m.least.in_bytes = need_a + need_b + share * reduced;
    m.least.out_bytes = (d.j == 0 ? a : 0) + (d.i == 0 ? b : 0) + share * reduced;
    m.least.first_bytes = need_a / double(slabs) + need_b;
    m.least.last_bytes = share * m.steps.back().bytes_out;
    m.least.c_rows = rows.size, m.least.c_cols = cols.size;
  }
  add_layout_terms(m, layout(Operand::a), layout(Operand::b), layout(Operand::c), p, rank);
  return m;
}

void add_layout_terms(Model& m, const Layout& a, const Layout& b, const Layout& c, const Problem& p, int rank) {
  const int ranks = int(a.size());
  auto larger = [](const Redistribution& r) { return 4.0 * double(std::max(r.sent(), r.received())); };
  const Redistribution in_a = plan_redistribution(home_layout(p.m, p.k, ranks), a, rank),
                       in_b = plan_redistribution(home_layout(p.k, p.n, ranks), b, rank),
                       out_c = plan_redistribution(c, home_layout(p.m, p.n, ranks), rank);
  m.layout_in_bytes = larger(in_a) + larger(in_b);
  m.layout_out_bytes = larger(out_c);
  m.least.layout_in_received = 4.0 * double(in_a.received() + in_b.received());
  m.least.layout_received = m.least.layout_in_received + 4.0 * double(out_c.received());
  m.least.layout_sent = 4.0 * double(in_a.sent() + in_b.sent() + out_c.sent());
}

Layout Decomposed::layout(Operand which) const {
  const Problem& p = problem;
  const Grid& g = grid;
  const int ranks = g.volume();
  if (kind == Decomposition::cannon && direct)  // the starting layout itself: each block at (i, j)
    return block_layout(ranks, [&](int r) -> Rect {
      const int i = r / g.rows, j = r % g.rows;
      const Part rows = part(p.m, g.rows, i), cols = part(p.n, g.rows, j);
      if (which == Operand::a) return Rect{rows.offset, rows.size, part(p.k, g.rows, j).offset, part(p.k, g.rows, j).size};
      if (which == Operand::b) return Rect{part(p.k, g.rows, i).offset, part(p.k, g.rows, i).size, cols.offset, cols.size};
      return Rect{rows.offset, rows.size, cols.offset, cols.size};
    });
  if (kind == Decomposition::cannon)
    return block_layout(ranks, [&](int r) -> Rect {
      const CannonRank c(g, r);
      const Part rows = part(p.m, c.q, c.i), cols = part(p.n, c.q, c.j), k = c.kpart(p.k, 0);
      if (which == Operand::a) return {rows.offset, rows.size, k.offset, k.size};
      if (which == Operand::b) return {k.offset, k.size, cols.offset, cols.size};
      return c.l == 0 ? Rect{rows.offset, rows.size, cols.offset, cols.size} : Rect{};
    });
  if (kind == Decomposition::summa)
    return block_layout(ranks, [&](int r) -> Rect {
      const int i = r / g.cols, j = r % g.cols;
      const Part rows = part(p.m, g.rows, i), cols = part(p.n, g.cols, j);
      if (which == Operand::a) {
        const Part k = part(p.k, g.cols, j);
        return {rows.offset, rows.size, k.offset, k.size};
      }
      if (which == Operand::b) {
        const Part k = part(p.k, g.rows, i);
        return {k.offset, k.size, cols.offset, cols.size};
      }
      return {rows.offset, rows.size, cols.offset, cols.size};
    });
  return block_layout(ranks, [&](int r) -> Rect {
    const DnsRank d(g, r);
    const Part rows = part(p.m, g.rows, d.i), cols = part(p.n, g.cols, d.j), k = part(p.k, g.layers, d.l);
    if (which == Operand::a) return d.j == 0 ? Rect{rows.offset, rows.size, k.offset, k.size} : Rect{};
    if (which == Operand::b) return d.i == 0 ? Rect{k.offset, k.size, cols.offset, cols.size} : Rect{};
    return d.l == 0 ? Rect{rows.offset, rows.size, cols.offset, cols.size} : Rect{};
  });
}

std::vector<int> Decomposed::peers(int rank) const {
  std::set<int> out;
  if (kind == Decomposition::cannon && direct) {  // its row's A blocks and its column's B blocks
    const int q = grid.rows, i = rank / q, j = rank % q;
    for (int c = 0; c < q; ++c) out.insert(i * q + c), out.insert(c * q + j);
  } else if (kind == Decomposition::cannon) {
    const CannonRank c(grid, rank);
    const int base = c.l * c.q * c.q, q = c.q;
    if (c.steps > 1)
      for (int r : {c.i * q + (c.j + q - 1) % q, c.i * q + (c.j + 1) % q, ((c.i + q - 1) % q) * q + c.j,
                    ((c.i + 1) % q) * q + c.j})
        out.insert(base + r);
    if (grid.layers > 1)
      for (int l = 0; l < grid.layers; ++l) out.insert(l * q * q + c.i * q + c.j);
  } else if (kind == Decomposition::summa) {
    const int i = rank / grid.cols, j = rank % grid.cols;
    for (int c = 0; c < grid.cols; ++c) out.insert(i * grid.cols + c);
    for (int r = 0; r < grid.rows; ++r) out.insert(r * grid.cols + j);
  } else {
    const DnsRank d(grid, rank);
    const int plane = grid.rows * grid.cols;
    for (int c = 0; c < grid.cols; ++c) out.insert(d.l * plane + d.i * grid.cols + c);
    for (int r = 0; r < grid.rows; ++r) out.insert(d.l * plane + r * grid.cols + d.j);
    for (int l = 0; l < grid.layers; ++l) out.insert(l * plane + d.i * grid.cols + d.j);
  }
  out.erase(rank);
  return {out.begin(), out.end()};
}

std::size_t Decomposed::bytes_per_rank() const {
  const Problem& p = problem;
  const Grid& g = grid;
  // The starting layout's blocks (rank 0's, the largest), and the staging of their redistribution:
  // at most what a rank sends (its starting blocks) and receives (its schedule's first blocks).
  const Grid h = home_grid(g.volume());
  const double home = double(part(p.m, h.rows, 0).size) * part(p.k, h.cols, 0).size +
                      double(part(p.k, h.rows, 0).size) * part(p.n, h.cols, 0).size +
                      double(part(p.m, h.rows, 0).size) * part(p.n, h.cols, 0).size;
  double schedule = 0, first = 0;  // all the schedule holds; its A, B and C blocks
  if (kind == Decomposition::cannon) {
    const double rows = part(p.m, g.rows, 0).size, cols = part(p.n, g.rows, 0).size,
                 k = part(p.k, g.rows, 0).size;
    // A and B as they arrive, the shifts' buffers (two when a buffer is received twice), C
    const double shifts = g.rows / g.layers > 2 ? 2 : g.rows / g.layers > 1 ? 1 : 0;
    schedule = (1 + shifts) * (rows * k + k * cols) + (g.layers > 1 ? 2 : 1) * rows * cols;
    first = rows * k + k * cols + rows * cols;
    if (const long slabs = cannon_slabs(*this); slabs > 1)
      schedule += direct ? std::max(rows, cols) * k  // pipelined's packed A block, or columns' staged B block
                         : rows * part(long(k), slabs, 0).size;  // A's slab, contiguous
  } else if (kind == Decomposition::summa) {
    const double rows = part(p.m, g.rows, 0).size, cols = part(p.n, g.cols, 0).size;
    const double w = std::min<double>(double(panel), double(p.k));
    first = rows * part(p.k, g.cols, 0).size + part(p.k, g.rows, 0).size * cols + rows * cols;
    schedule = first + 2 * (rows + cols) * w;
  } else {
    const double rows = part(p.m, g.rows, 0).size, cols = part(p.n, g.cols, 0).size,
                 k = part(p.k, g.layers, 0).size;
    schedule = rows * k + k * cols + (g.layers > 1 ? 2 : 1) * rows * cols;
    first = rows * k + k * cols + rows * cols;
  }
  // Cannon's skew in slabs stages its slabs apart from the whole move's staging (held for both).
  const double staging = 2 * home + first;
  return std::size_t(4 * (schedule + staging * (kind == Decomposition::cannon && cannon_slabs(*this) > 1 ? 2 : 1)));
}

std::size_t Decomposed::padded_bytes(long align) const {
  if (align <= 1) return 0;
  const Problem& p = problem;
  const Grid& g = grid;
  // Every local extent of n and k is a multiple of `align` when n and k are multiples of it times
  // each grid extent (and SUMMA's panels are).
  const long every = std::lcm(std::lcm(long(g.rows), long(g.cols)), long(g.layers)) * align;
  if (p.n % every == 0 && p.k % every == 0 && (kind != Decomposition::summa || panel % align == 0)) return 0;
  // The largest local product (rank 0's), its rows padded by fewer than `align` floats.
  const long q = kind == Decomposition::cannon ? g.rows : g.cols;
  const long depth = kind == Decomposition::cannon ? part(p.k, g.rows, 0).size
                     : kind == Decomposition::summa ? std::min(panel, p.k)
                                                    : part(p.k, g.layers, 0).size;
  const double rows = double(part(p.m, g.rows, 0).size), cols = double(part(p.n, q, 0).size + align),
               k = double(depth + align);
  return std::size_t(4 * (rows * k + k * cols + rows * cols));
}

}  // namespace mmlab
