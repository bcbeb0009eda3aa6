// Where a matrix's entries live across the ranks of a job, and the messages that move it from one
// layout to another: the arithmetic behind the distributed algorithms' one starting layout. Every
// method starts from A, B and C in 2D blocks over the ranks (home_layout: a ScaLAPACK-style block
// per rank on the most square grid of the job), moves A and B to the layout its schedule wants
// (Cannon's skew, DNS's roots, cuBLASMp's block-cyclic pieces) and C back, and that movement is timed
// in its own column (layout_ms). No CUDA, no MPI: distributed/ executes a Redistribution.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <vector>

#include "core/grid.hpp"

namespace mmlab {

// A rectangle of a matrix, in global (row, col) indices.
struct Rect {
  long row0 = 0, rows = 0, col0 = 0, cols = 0;
  bool empty() const { return rows <= 0 || cols <= 0; }
  long count() const { return empty() ? 0 : rows * cols; }
  bool operator==(const Rect& o) const {
    return row0 == o.row0 && rows == o.rows && col0 == o.col0 && cols == o.cols;
  }
};
Rect intersect(const Rect& a, const Rect& b);

// A rectangle of the global matrix held at (local_row0, local_col0) of a rank's local buffer.
struct Piece {
  Rect global;
  long local_row0 = 0, local_col0 = 0;
  bool operator==(const Piece& o) const {
    return global == o.global && local_row0 == o.local_row0 && local_col0 == o.local_col0;
  }
};

// One rank's share: its pieces in a row-major local buffer of rows x cols (pitch cols). Empty: none.
struct Share {
  std::vector<Piece> pieces;
  long rows = 0, cols = 0;
  std::size_t count() const { return std::size_t(rows > 0 && cols > 0 ? rows * cols : 0); }
  bool operator==(const Share& o) const { return pieces == o.pieces && rows == o.rows && cols == o.cols; }
};

// A matrix's layout: every rank's share, by world rank.
using Layout = std::vector<Share>;

// The job's starting grid: the most square rows x cols = ranks with rows <= cols (4: 2x2, 8: 2x4).
Grid home_grid(int ranks);
// `block(rank)`: the one block of the matrix that rank holds (an empty Rect: none); the local
// buffer is that block, row-major.
Layout block_layout(int ranks, const std::function<Rect(int rank)>& block);
// The starting layout of a rows x cols matrix: home_grid's rows cut its rows, its cols its cols, in
// near-equal parts (core/decompositions.hpp's part); rank i * cols + j holds block (i, j).
Layout home_layout(long rows, long cols, int ranks);
// ScaLAPACK's 2D block-cyclic layout: blocks of rb x cb; block (I, J) on process (I mod pr, J mod pc),
// which is world rank `rank_of(p, q)`; a rank's local buffer holds its blocks in order (numroc's).
Layout block_cyclic_layout(long rows, long cols, long rb, long cb, int pr, int pc,
                           const std::function<int(int p, int q)>& rank_of, int ranks);
// How many of `n` indices cut in blocks of `nb` cyclically over `procs` process `p` holds (numroc).
long block_cyclic_count(long n, long nb, int p, int procs);

// The part of `layout` inside each rank's `band(rank)` (global indices): each piece cut to it, kept
// where it was in the rank's local buffer (same buffer geometry), so that moving a layout band by
// band fills the same buffers as moving it whole (Cannon's skew in slabs of k).
Layout restrict_layout(const Layout& layout, const std::function<Rect(int rank)>& band);

// A rectangle copied between two local buffers: (src_row0, src_col0) of one to (dst_row0, dst_col0)
// of the other, rows x cols.
struct LocalCopy {
  long src_row0 = 0, src_col0 = 0, dst_row0 = 0, dst_col0 = 0, rows = 0, cols = 0;
  long count() const { return rows * cols; }
};

// What one rank does to move a matrix from layout `from` (a partition: every entry on one rank) to
// `to` (which may hold an entry on several ranks): to each peer, one message of the rectangles of
// its `from` share that the peer's `to` share holds (their entries row by row, rectangle after
// rectangle); from each peer, one message and where its rectangles land; its own rectangles,
// copied. Sender and receiver list a message's rectangles in the same order.
struct Redistribution {
  std::map<int, std::vector<LocalCopy>> sends;     // peer -> rectangles (src: this rank's `from` buffer)
  std::map<int, std::vector<LocalCopy>> receives;  // peer -> rectangles (dst: this rank's `to` buffer)
  std::vector<LocalCopy> local;                    // from this rank's `from` buffer to its `to` buffer
  // This rank's `to` share is its `from` share: the same buffer serves both, nothing is copied.
  bool in_place = false;
  std::size_t sent() const;      // entries this rank sends
  std::size_t received() const;  // entries it receives
  std::size_t messages() const { return sends.size() + receives.size(); }
};
Redistribution plan_redistribution(const Layout& from, const Layout& to, int rank);

}  // namespace mmlab
