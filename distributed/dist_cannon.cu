// dist_cannon: Cannon's algorithm across processes: a q x q torus of ranks (one GPU each, NCCL or
// the copy engines between them, the `transport` axis; or host processes with MPI and Eigen, the
// CPU backend), and its 2.5D form, c such tori (replicas) that share the steps.
//
// Source: T. W. O'Neil, "Experiments with Massively Parallel Matrix Multiplication" (2013), sec. 2.3:
// C[i][j] = sum_s A[i][(i+j+s) mod q] B[(i+j+s) mod q][j] over blocks, each rank starting at a
// different block of k so that neighbours never need the same block at once. The replicated form is
// E. Solomonik and J. Demmel, "Communication-optimal parallel 2.5D matrix multiplication and LU
// factorization algorithms" (2011), sec. 3: with c copies of the torus, layer l does the q / c steps
// s = l q / c ... (l + 1) q / c - 1, and the c partial C are summed onto layer 0.
// Split: m, n and k are each cut in q near-equal parts (any m, n, k). Rank (i, j) of layer l owns a
// partial C(i, j). It starts with A(i, l0) and B(l0, j), l0 = (i + j + l q / c) mod q: the initial
// skew, moved from the starting layout (A, B and C in 2D blocks over the ranks) as the run's first
// exchange (layout_ms; on a 2 x 2 torus half the ranks swap a block of A, half one of B). Then its
// steps: C(i, j) += A_cur B_cur on the compute stream while A_cur goes to the left neighbour and B_cur
// to the one above within the layer (one grouped send/receive into another buffer, on the
// communication stream); the next step waits for that exchange. With c > 1 a reduction over the
// layers (a reduce onto layer 0) follows, and C moves from layer 0 to the starting layout.
// With `slabs` > 1 the skew moves in that many slabs of each rank's first k block (A's columns, B's
// rows), and the first step's product of a slab is made while the next slab moves: the skew hides
// behind the first product but for its first slab (A's slab copied contiguous for the engine).
// Words received per rank: about 2 n^2 / (c sqrt(p / c)) over q / c - 1 shifts, the skew's block of
// A and of B, plus n^2 c / p for the reduction when c > 1.
// Constraints: a grid q x q x c, c dividing q, whose volume is the job's rank count (mpirun -np c q^2).
// Variants `direct`, `columns`, `rows` and `pipelined` (distributed/cannon_direct.hpp) take Cannon's
// order of k blocks without the skew.
// Example: mpirun -np 8 build/bin/mmlab run --algorithms dist_cannon,cublas --grid 2x2x2 --size 16384
#include "distributed/cannon_direct.hpp"
#include "distributed/run_base.hpp"

namespace mmlab {
namespace {

using namespace dist;

class CannonRun final : public RunBase {
 public:
  explicit CannonRun(const DistributedSetup& s)
      : RunBase(s, decomposed(Decomposition::cannon, s.problem, *s.params)),
        c_rank_(grid_, job().rank),
        q_(c_rank_.q),
        steps_(c_rank_.steps),
        l_(c_rank_.l),
        i_(c_rank_.i),
        j_(c_rank_.j) {
    rows_ = part(p_.m, q_, i_), cols_ = part(p_.n, q_, j_);
    set_layouts(shape_.layout(Operand::a), shape_.layout(Operand::b), shape_.layout(Operand::c));
    // Step s reads A and B from a_in_, b_in_ (s = 0; they may be the starting blocks, never written)
    // or from the buffers the shifts fill in turn: [0] for step 1, [1] for step 2, [0] again ...
    const long kmax = part(p_.k, q_, 0).size;
    for (int t = 0; t < 2 && t + 1 < steps_; ++t)
      a_[t] = keep(std::size_t(rows_.size * kmax)), b_[t] = keep(std::size_t(kmax * cols_.size));
    partial_ = grid_.layers == 1 ? c_out_ : keep(std::size_t(rows_.size * cols_.size));
    const Part k0 = kpart(0);
    set_first_step(rows_.size, cols_.size, k0.size);
    // The skew in slabs of each rank's first k block: A's columns and B's rows of slab t move
    // together, and the first step's product of slab t follows them while slab t + 1 moves.
    slabs_ = cannon_slabs(shape_);
    if (slabs_ > 1) {
      auto band = [&](int t, int r) {
        const Part k = CannonRank(grid_, r).kpart(p_.k, 0), b = part(k.size, slabs_, t);
        return Part{k.offset + b.offset, b.size};
      };
      move_in_bands(
          int(slabs_), [&](int t, int r) { const Part b = band(t, r); return Rect{0, p_.m, b.offset, b.size}; },
          [&](int t, int r) { const Part b = band(t, r); return Rect{b.offset, b.size, 0, p_.n}; });
      scratch_ = keep(std::size_t(rows_.size * part(k0.size, slabs_, 0).size));
    }
  }

 private:
  void schedule() override {
    // The torus of this layer (the world when there is one layer), and the ranks sharing i and j.
    const std::string grid = grid_.text();
    Comm& torus =
        grid_.layers == 1 ? comm("world", 0, job().rank) : comm("cannon-layer-" + grid, l_, i_ * q_ + j_);
    const int left = i_ * q_ + (j_ + q_ - 1) % q_, right = i_ * q_ + (j_ + 1) % q_;
    const int up = ((i_ + q_ - 1) % q_) * q_ + j_, down = ((i_ + 1) % q_) * q_ + j_;
    for (int s = 0; s < steps_; ++s) {
      const Part k = kpart(s);
      const float* a = s == 0 ? a_in_ : a_[(s - 1) % 2];
      const float* b = s == 0 ? b_in_ : b_[(s - 1) % 2];
      if (s + 1 < steps_) {
        const Part kn = kpart(s + 1);
        if (s > 0) ctx_.communication_waits_for_compute();  // step s - 1's product read the buffers filled now
        ctx_.communicate([&] {
          torus.exchange({{a, std::size_t(rows_.size * k.size), left, a_[s % 2],
                           std::size_t(rows_.size * kn.size), right},
                          {b, std::size_t(k.size * cols_.size), up, b_[s % 2], std::size_t(kn.size * cols_.size),
                           down}});
        });
      }
      if (s > 0 || slabs_ == 1)  // with slabs, step 0's product followed its slabs in (first_step_band)
        ctx_.compute([&] { ctx_.product(a, b, partial_, rows_.size, cols_.size, k.size, s > 0); });
      if (s + 1 < steps_) ctx_.compute_waits_for_communication();
    }
    if (grid_.layers > 1) {
      Comm& depth = comm("cannon-depth-" + grid, i_ * q_ + j_, l_);
      ctx_.communication_waits_for_compute();
      ctx_.communicate(
          [&] { depth.reduce_sum(partial_, c_out_ ? c_out_ : partial_, std::size_t(rows_.size * cols_.size), 0); });
    }
  }

  // Step 0's product of slab t of its k block: A's columns of it (rows k0 apart) and B's rows.
  void first_step_band(int t) override {
    const Part k0 = kpart(0), b = part(k0.size, slabs_, t);
    ctx_.compute([&] {
      ctx_.product_of_band(a_in_ + b.offset, k0.size, b_in_ + b.offset * cols_.size, partial_, rows_.size,
                           cols_.size, b.size, t > 0, scratch_);
    });
  }

  // The k block of step s: layer l starts l q / c blocks further along.
  Part kpart(int s) const { return c_rank_.kpart(p_.k, s); }

  CannonRank c_rank_;
  int q_, steps_, l_, i_, j_;
  Part rows_, cols_;
  float *a_[2] = {}, *b_[2] = {}, *partial_ = nullptr;
  long slabs_ = 1;
  float* scratch_ = nullptr;  // slab t's columns of A, contiguous for the engine
};

}  // namespace

MMLAB_ALGORITHM(dist_cannon) {
  a.summary =
      "Cannon's algorithm on a q x q torus of ranks, shifts overlapped with the products (O'Neil 2013); "
      "q x q x c: 2.5D, c replicas sharing the steps (Solomonik and Demmel 2011)";
  a.variants = {{"default",
                 "skew from the starting layout, then the layer's steps of product + shift (A left, B up); "
                 "with c layers a reduction onto layer 0"},
                {"direct",
                 "Cannon's order of k blocks without the skew: each step's blocks fetched from where they "
                 "start (q x q, one layer)"},
                {"columns",
                 "direct's order and fetches, the first B block (off the diagonal) in `slabs` slabs of its columns, "
                 "each slab's product writing its columns of C with the whole k block (q x q, one layer; slabs >= 2)"},
                {"rows",
                 "direct's fetches, k blocks in the order of the rank's row (its first B block its own), the "
                 "first A block (off the diagonal) in `slabs` slabs of its rows, each slab's product writing its "
                 "rows of C with the whole k block (q x q, one layer)"},
                {"pipelined",
                 "direct's order and fetches, every step's blocks in `slabs` slabs of k, each slab's product "
                 "after its own slab (q x q, one layer; slabs >= 2)"}};
  a.constraints = "grid q x q x c (c divides q) = the job's ranks; any m, n, k";
  a.set_nondeterminism("default", "with replicas (c > 1): the reduction over them (NCCL or MPI) fixes no order");
  a.is_nondeterministic = [](const Problem&, const Params& q) { return parse_grid(q.text("grid")).layers > 1; };
  describe_distributed<CannonRun>(
      a, Decomposition::cannon, grid_axis("2x2", {"1x1", "2x2", "3x3", "2x2x2"}),
      {{"slabs", AxisKind::integer,
        "what the first step waits for (the skew from the starting layout; direct: its first B block) in this "
        "many slabs of the first k block, the first step's product of each slab made while the next moves "
        "(1: all of it, then the product); columns: the first B block in slabs of its columns; rows: the first A "
        "block in slabs of its rows; pipelined: every step's blocks in this many slabs",
        "1", {"1", "4"}}});
  const auto supports = a.supports;
  a.supports = [supports](const Problem& p, const Params& q, const DeviceInfo& d) -> Reason {
    const Grid g = parse_grid(q.text("grid"));
    if (q.variant() != "default" && g.layers > 1)
      return q.variant() + ": one layer (q x q); 2.5D replicas share a skewed torus";
    if ((q.variant() == "pipelined" || q.variant() == "columns") && q.integer("slabs") < 2)
      return q.variant() + ": slabs of 2 or more (with one slab it is direct's schedule)";
    if (q.integer("slabs") > 1 && g.rows == 1)
      return std::string("slabs: a torus of one rank moves nothing first (the same run as slabs 1)");
    return supports(p, q, d);
  };
  a.make_distributed = [](const DistributedSetup& s) -> std::unique_ptr<DistributedRun> {
    if (s.params->variant() != "default") return std::make_unique<DirectRun>(s);
    return std::make_unique<CannonRun>(s);
  };
}

}  // namespace mmlab
