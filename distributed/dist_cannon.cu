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
// Variants `direct` and `pipelined` (below) take Cannon's order of k blocks without the skew.
// Example: mpirun -np 8 build/bin/mmlab run --algorithms dist_cannon,cublas --grid 2x2x2 --size 16384
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

// Cannon's order of k blocks without the skew (variant `direct`, q x q, one layer): rank (i, j) takes
// k blocks j, j + 1, ... (mod q), so its first A block is its own; step s's A(i, j + s) comes from
// rank (i, j + s) and B(j + s, j) from rank (j + s, j), where they start, over all-to-all links,
// while step s - 1's product runs. On 2 x 2 a rank receives two blocks where the skew and the shift
// bring it four on rank (1, 1) (the shift returns the blocks its skew sent away), and the first step
// waits for at most its B block (none on the diagonal).
//
// `columns` (the same order and layout): the first step's B block, off the diagonal, in `slabs` slabs of
// its columns (the diagonal packs each slab contiguous and sends it down its column), each slab's
// product writing those columns of C with the whole k block; the diagonal's first product whole. The
// first product waits for one slab, and the products stay as deep as direct's.
//
// `pipelined` (the same order and layout): every step's blocks move in `slabs` slabs of its k block,
// A's columns of a slab packed contiguous by the rank that owns the block (once a run, on its
// communication stream), B's rows as they lie; each slab's product waits for its own slab only, and
// step s + 1's slabs move while step s's products run. The first product waits for one slab, and a
// step's blocks need not be whole before its products start, so the rank that receives both of a
// step's blocks (the diagonal, on 2 x 2) keeps computing while they arrive.
class DirectRun final : public RunBase {
 public:
  explicit DirectRun(const DistributedSetup& s) : RunBase(s, shape_of(s)), q_(grid_.rows) {
    i_ = job().rank / q_, j_ = job().rank % q_;
    rows_ = part(p_.m, q_, i_), cols_ = part(p_.n, q_, j_);
    set_layouts(shape_.layout(Operand::a), shape_.layout(Operand::b), shape_.layout(Operand::c));
    const long kmax = part(p_.k, q_, 0).size;
    for (int t = 0; t < 2 && q_ > 1; ++t)
      a_[t] = keep(std::size_t(rows_.size * kmax)), b_[t] = keep(std::size_t(kmax * cols_.size));
    slabs_ = cannon_slabs(shape_);
    const long own = part(p_.k, q_, j_).size;
    if (shape_.every_step_in_slabs && slabs_ > 1) {
      packed_ = keep(std::size_t(rows_.size * own));
      set_first_step(rows_.size, cols_.size, part(own, slabs_, 0).size);
      return;
    }
    if (s.params->variant() == "columns" && slabs_ > 1) {
      // The first B block in slabs of its columns (k whole): the diagonal packs each slab contiguous.
      columns_ = true;
      if (i_ == j_) stage_ = keep(std::size_t(own * cols_.size));
      set_first_step(rows_.size, part(cols_.size, slabs_, 0).size, own);
      return;
    }
    set_first_step(rows_.size, cols_.size, own);
    // The first fetch (B's block, off the diagonal) in slabs of its rows, the first product of each
    // slab (A's columns of it, copied contiguous) following it while the next moves.
    if (slabs_ > 1) scratch_ = keep(std::size_t(rows_.size * part(own, slabs_, 0).size));
  }

 private:
  static Decomposed shape_of(const DistributedSetup& s) {
    return with_variant(decomposed(Decomposition::cannon, s.problem, *s.params), s.params->variant());
  }
  int kblock(int s) const { return (j_ + s) % q_; }
  int rank_of(int i, int j) const { return i * q_ + j; }
  // Step s's blocks: this rank's own where the k block is its own, else the buffer fetched into.
  const float* a_of(int s) const { return kblock(s) == j_ ? a_in_ : a_[s % 2]; }
  const float* b_of(int s) const { return kblock(s) == i_ ? b_in_ : b_[s % 2]; }

  // One grouped exchange: step s's blocks fetched here, and this rank's own blocks sent to the ranks
  // whose step s takes them (A(i, j) to rank (i, j - s); B(i, j), k block i, down its column at the
  // step s = i - j).
  std::vector<Transfer> fetch(int s) {
    std::vector<Transfer> t;
    auto add = [&](const float* send, float* recv, std::size_t count, int peer) {
      if (count) t.push_back({send, send ? count : 0, peer, recv, recv ? count : 0, peer});
    };
    const int kb = kblock(s);
    const long k = part(p_.k, q_, kb).size;
    if (kb != j_) add(nullptr, a_[s % 2], std::size_t(rows_.size * k), rank_of(i_, kb));
    if (kb != i_) add(nullptr, b_[s % 2], std::size_t(k * cols_.size), rank_of(kb, j_));
    const int to = ((j_ - s) % q_ + q_) % q_;
    if (to != j_) add(a_in_, nullptr, std::size_t(rows_.size * part(p_.k, q_, j_).size), rank_of(i_, to));
    if (kb == i_)
      for (int r = 0; r < q_; ++r)
        if (r != i_) add(b_in_, nullptr, std::size_t(part(p_.k, q_, i_).size * cols_.size), rank_of(r, j_));
    return t;
  }

  // Slab t of the first step's B blocks (rows of k block j): received here off the diagonal, sent
  // down its column from the diagonal.
  std::vector<Transfer> first_slab(int t) {
    std::vector<Transfer> out;
    const Part k = part(p_.k, q_, j_), b = part(k.size, slabs_, t);
    const std::size_t count = std::size_t(b.size * cols_.size);
    if (!count) return out;
    if (j_ != i_) out.push_back({nullptr, 0, rank_of(j_, j_), b_[0] + b.offset * cols_.size, count, rank_of(j_, j_)});
    if (j_ == i_)
      for (int r = 0; r < q_; ++r)
        if (r != i_) out.push_back({b_in_ + b.offset * cols_.size, count, rank_of(r, j_), nullptr, 0, rank_of(r, j_)});
    return out;
  }

  // columns: slab t of the first step's B block's columns (k block j whole), packed by the diagonal and
  // sent down its column; received contiguous (k x the slab's width) off the diagonal.
  std::vector<Transfer> column_slab(int t) {
    std::vector<Transfer> out;
    const long k = part(p_.k, q_, j_).size;
    const Part w = part(cols_.size, slabs_, t);
    const std::size_t count = std::size_t(k * w.size);
    if (!count) return out;
    if (j_ != i_) out.push_back({nullptr, 0, rank_of(j_, j_), b_[0] + k * w.offset, count, rank_of(j_, j_)});
    if (j_ == i_)
      for (int r = 0; r < q_; ++r)
        if (r != i_) out.push_back({stage_ + k * w.offset, count, rank_of(r, j_), nullptr, 0, rank_of(r, j_)});
    return out;
  }

  // columns: step 0 off the diagonal a slab of C's columns at a time (the whole k block: products as
  // deep as direct's), each after its slab of B; the diagonal's step 0 whole, on its own blocks.
  void first_step_in_columns(Comm& world) {
    const long k = part(p_.k, q_, j_).size;
    for (int t = 0; t < slabs_; ++t) {
      const Part w = part(cols_.size, slabs_, t);
      if (i_ == j_)
        ctx_.communicate([&] { ctx_.copy_2d(stage_ + k * w.offset, w.size, b_in_ + w.offset, cols_.size, k, w.size); });
      ctx_.communicate([&] { world.exchange(column_slab(t)); });
      if (i_ == j_) continue;
      ctx_.compute_waits_for_communication();
      ctx_.compute([&] {
        ctx_.product(a_in_, b_[0] + k * w.offset, c_out_ + w.offset, rows_.size, w.size, k, false, cols_.size);
      });
    }
    if (i_ == j_) ctx_.compute([&] { ctx_.product(a_in_, b_in_, c_out_, rows_.size, cols_.size, k, false); });
  }

  // pipelined: step s's slab t, fetched (A's packed columns and B's rows of the slab) and sent.
  std::vector<Transfer> slab(int s, int t) {
    std::vector<Transfer> out;
    auto add = [&](const float* send, float* recv, std::size_t count, int peer) {
      if (count) out.push_back({send, send ? count : 0, peer, recv, recv ? count : 0, peer});
    };
    const int kb = kblock(s);
    const Part w = part(part(p_.k, q_, kb).size, slabs_, t), mine = part(part(p_.k, q_, j_).size, slabs_, t);
    if (kb != j_) add(nullptr, a_[s % 2] + rows_.size * w.offset, std::size_t(rows_.size * w.size), rank_of(i_, kb));
    if (kb != i_) add(nullptr, b_[s % 2] + w.offset * cols_.size, std::size_t(w.size * cols_.size), rank_of(kb, j_));
    const int to = ((j_ - s) % q_ + q_) % q_;
    if (to != j_) add(packed_ + rows_.size * mine.offset, nullptr, std::size_t(rows_.size * mine.size), rank_of(i_, to));
    if (kb == i_)
      for (int r = 0; r < q_; ++r)
        if (r != i_) add(b_in_ + w.offset * cols_.size, nullptr, std::size_t(w.size * cols_.size), rank_of(r, j_));
    return out;
  }

  void pipelined_schedule() {
    Comm& world = comm("world", 0, job().rank);
    const Part own = part(p_.k, q_, j_);
    ctx_.communicate([&] {  // its A block, slab after slab, contiguous: its own products' and its peers'
      for (int t = 0; t < slabs_; ++t) {
        const Part w = part(own.size, slabs_, t);
        ctx_.copy_2d(packed_ + rows_.size * w.offset, w.size, a_in_ + w.offset, own.size, rows_.size, w.size);
      }
    });
    std::vector<int> marks(std::size_t(q_ * slabs_));
    auto fetch_step = [&](int s) {
      for (int t = 0; t < slabs_; ++t) {
        ctx_.communicate([&] { world.exchange(slab(s, t)); });
        marks[std::size_t(s * slabs_ + t)] = ctx_.mark_communication();
      }
    };
    fetch_step(0);
    for (int s = 0; s < q_; ++s) {
      if (s + 1 < q_) {
        if (s > 0) ctx_.communication_waits_for_compute();  // step s - 1's products read what step s + 1 fills
        fetch_step(s + 1);
      }
      const int kb = kblock(s);
      const Part k = part(p_.k, q_, kb);
      for (int t = 0; t < slabs_; ++t) {
        const Part w = part(k.size, slabs_, t);
        const float* a = (kb == j_ ? packed_ : a_[s % 2]) + rows_.size * w.offset;
        const float* b = (kb == i_ ? b_in_ : b_[s % 2]) + w.offset * cols_.size;
        ctx_.compute_waits_for(marks[std::size_t(s * slabs_ + t)]);
        ctx_.compute([&] { ctx_.product(a, b, c_out_, rows_.size, cols_.size, w.size, s > 0 || t > 0); });
      }
    }
  }

  void schedule() override {
    if (packed_) return pipelined_schedule();
    Comm& world = comm("world", 0, job().rank);
    if (slabs_ == 1) ctx_.communicate([&] { world.exchange(fetch(0)); });
    if (columns_) first_step_in_columns(world);
    const Part k0 = part(p_.k, q_, j_);
    for (int t = 0; t < slabs_ && slabs_ > 1 && !columns_; ++t) {
      const Part b = part(k0.size, slabs_, t);
      ctx_.communicate([&] { world.exchange(first_slab(t)); });
      ctx_.compute_waits_for_communication();
      ctx_.compute([&] {
        ctx_.product_of_band(a_in_ + b.offset, k0.size, b_of(0) + b.offset * cols_.size, c_out_, rows_.size,
                             cols_.size, b.size, t > 0, scratch_);
      });
    }
    for (int s = 0; s < q_; ++s) {
      ctx_.compute_waits_for_communication();  // step s's blocks are in
      if (s + 1 < q_) {
        if (s > 0) ctx_.communication_waits_for_compute();  // step s - 1's product read what arrives now
        ctx_.communicate([&] { world.exchange(fetch(s + 1)); });
      }
      const long k = part(p_.k, q_, kblock(s)).size;
      if (s > 0 || slabs_ == 1)  // with slabs, step 0's product followed its slabs in
        ctx_.compute([&] { ctx_.product(a_of(s), b_of(s), c_out_, rows_.size, cols_.size, k, s > 0); });
    }
  }

  int q_, i_ = 0, j_ = 0;
  Part rows_, cols_;
  float *a_[2] = {}, *b_[2] = {};
  long slabs_ = 1;
  float* scratch_ = nullptr;  // a slab's columns of A, contiguous for the engine
  float* packed_ = nullptr;   // pipelined: its A block in slabs (slab t: rows x its width, contiguous)
  bool columns_ = false;       // columns: the first step's B block in slabs of its columns
  float* stage_ = nullptr;     // columns, on the diagonal: its B block's column slabs, each contiguous
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
        "(1: all of it, then the product); columns: the first B block in slabs of its columns; pipelined: every "
        "step's blocks in this many slabs",
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
