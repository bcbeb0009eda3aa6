// The three decompositions of the distributed algorithms as arithmetic, written once: how each
// rank's blocks are cut, the steps of its schedule (the model's terms), the ranks it exchanges data
// with, and the memory it holds. The runs (distributed/) execute these schedules and report these
// models; mmlab-analyze model evaluates them for machines and grids no job ran. No CUDA, no MPI.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/distributed.hpp"
#include "core/layout.hpp"

namespace mmlab {

// Part i of n split over p: sizes differ by at most one, the larger first.
struct Part {
  long offset = 0, size = 0;
};
inline Part part(long n, long p, long i) {
  const long base = n / p, extra = n % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

enum class Decomposition { cannon, summa, dns };
// dist_cannon, dist_summa, dist_dns; false for any other name.
bool decomposition_of(const std::string& algorithm, Decomposition* d);
const char* decomposition_algorithm(Decomposition d);
// Why `grid` cannot carry the decomposition (the algorithm's own words), or empty.
std::string grid_problem(Decomposition d, const Grid& grid);

// Cannon on a q x q x c grid: rank r's coordinates, and the k block of its step s.
struct CannonRank {
  int q = 1, steps = 1, l = 0, i = 0, j = 0;
  CannonRank(const Grid& g, int rank);
  Part kpart(long k, int s) const { return part(k, q, (i + j + l * steps + s) % q); }
};

// SUMMA's k panels: at most `panel` wide, never straddling the owner of an A or B slice.
struct SummaPanel {
  long k0 = 0, width = 0;
  int a_owner = 0, b_owner = 0;  // grid column holding its A slice, grid row holding its B slice
};
std::vector<SummaPanel> summa_panels(long k, int pr, int pc, long panel);

// DNS's slabs on a rank with `rows` rows of C: its `slabs` where it has layers to reduce over, at
// most one a row; else 1 (nothing to overlap).
struct Decomposed;
long dns_slabs(const Decomposed& d, long rows);
// Cannon's slabs of what its first step waits for (the skew; `direct`: its first fetch): its
// `slabs`, at most the smallest first k block (k / q; `rows`: the smallest block of rows, m / q), on
// a torus of q >= 2 (else nothing moves first); the same on every rank.
long cannon_slabs(const Decomposed& d);

enum class Operand { a, b, c };

// One configuration of a decomposition: the problem, the grid, SUMMA's panel width and DNS's slabs.
struct Decomposed {
  Decomposition kind = Decomposition::cannon;
  Problem problem;
  Grid grid;
  long panel = 4096;  // SUMMA only
  long slabs = 1;     // DNS: the product in slabs of C's rows, each reduced as it is made; Cannon: the skew in slabs
  // Cannon (q x q, one layer): no skew; rank (i, j) takes the k blocks j, j + 1, ... (mod q), each
  // block of A and B fetched from the rank it starts on (dist_cannon's `direct` variant).
  bool direct = false;
  // With direct: every step's blocks fetched in `slabs` slabs of its k block, each slab's product after
  // its own fetch (dist_cannon's `pipelined` variant); without it, only the first step's B block.
  bool every_step_in_slabs = false;
  // With direct: rank (i, j) takes the k blocks i, i + 1, ... (mod q) (dist_cannon's `rows` variant):
  // its first B block is its own, and the first A block (off the diagonal) comes in `slabs` slabs of
  // its rows, each slab's product as deep as the whole block's.
  bool by_rows = false;
  // The steps of rank `rank` (the analytic model's terms). With `domain` > 0 ranks are placed in link
  // domains of that many consecutive ranks, and bytes from or to another domain are marked far (a
  // group that spans domains moves all its bytes far: its collective crosses the slow link).
  Model model(int rank, int domain = 0) const;
  // The ranks `rank` receives from or sends to (itself excluded), in world numbering.
  std::vector<int> peers(int rank) const;
  // Device (or host) memory one rank holds, in bytes (the largest rank's): its schedule's blocks,
  // the starting layout's A, B and C, and the redistribution's staging (at most what it moves).
  std::size_t bytes_per_rank() const;
  // What an engine that wants rows of a multiple of `align` floats holds beside it to pad its
  // local products (distributed/engines.cu): 0 where every product's rows already are.
  std::size_t padded_bytes(long align) const;
  // Where the schedule wants `which` when it starts (A, B) or leaves it when it ends (C): Cannon's
  // skewed blocks, SUMMA's 2D blocks, DNS's blocks on the roots of its broadcasts and C on layer 0.
  Layout layout(Operand which) const;
};

// A variant's schedule flags (dist_cannon's `direct`: no skew; `columns`: the same, its first block in
// slabs of columns, which the model reads as direct's slabs; `rows`: no skew, k blocks in the order of
// the rank's row, its first A block in slabs of rows; `pipelined`: no skew, every step in slabs); other
// variants set none. The one place a variant's name becomes its decomposition.
inline Decomposed with_variant(Decomposed d, const std::string& variant) {
  const bool cannon = d.kind == Decomposition::cannon;
  d.direct = cannon && (variant == "direct" || variant == "columns" || variant == "rows" || variant == "pipelined");
  d.every_step_in_slabs = cannon && variant == "pipelined";
  d.by_rows = cannon && variant == "rows";
  return d;
}

// What a rank moves to take A and B from the starting layout (home_layout) to `method`'s, and C
// back: entries received and messages, into the model's layout terms (Model::layout_*).
void add_layout_terms(Model& m, const Layout& a, const Layout& b, const Layout& c, const Problem& p, int rank);

}  // namespace mmlab
