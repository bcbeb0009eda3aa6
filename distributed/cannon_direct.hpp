// dist_cannon's variants without the skew (`direct`, `columns`, `rows`, `pipelined`): Cannon's order of k blocks
// on a q x q torus, each step's blocks fetched from where they start. The run of those variants; the
// descriptor, its sources and its other variant are dist_cannon.cu's.
#pragma once

#include "distributed/run_base.hpp"

namespace mmlab::dist {

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
// `rows` (the same fetches, k blocks in the order of the rank's row: i, i + 1, ...): the first B block
// is the rank's own, and the first A block, A(i, i), comes from the diagonal in `slabs` slabs of its
// rows, contiguous as they lie (nothing packed); each slab's product writes those rows of C with the
// whole k block and all of C's columns. The first product waits for one slab, as deep as direct's.
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
    if (shape_.by_rows) {
      set_first_step(part(rows_.size, slabs_, 0).size, cols_.size, part(p_.k, q_, i_).size);
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
  // The k block rank (i, j) takes at step s.
  int kblock_of(int i, int j, int s) const { return ((shape_.by_rows ? i : j) + s) % q_; }
  int kblock(int s) const { return kblock_of(i_, j_, s); }
  int rank_of(int i, int j) const { return i * q_ + j; }
  // Step s's blocks: this rank's own where the k block is its own, else the buffer fetched into.
  const float* a_of(int s) const { return kblock(s) == j_ ? a_in_ : a_[s % 2]; }
  const float* b_of(int s) const { return kblock(s) == i_ ? b_in_ : b_[s % 2]; }

  // One grouped exchange: slab t of `slabs` of step s's k block, fetched here (A's columns of it, at
  // a_[s % 2] in slab-major order, and B's rows), and this rank's own slab sent to the ranks whose step
  // s takes it (A(i, j), from `own_a` in the same order, to the ranks of its row whose k block is j:
  // one in direct's order, all of them in rows'; B(i, j) likewise down its column). With one slab: the
  // whole blocks (direct's fetch, own_a = a_in_).
  std::vector<Transfer> step_blocks(int s, int t, long slabs, const float* own_a) {
    std::vector<Transfer> out;
    auto add = [&](const float* send, float* recv, std::size_t count, int peer) {
      if (count) out.push_back({send, send ? count : 0, peer, recv, recv ? count : 0, peer});
    };
    const int kb = kblock(s);
    const Part w = part(part(p_.k, q_, kb).size, slabs, t), mine = part(part(p_.k, q_, j_).size, slabs, t);
    if (kb != j_) add(nullptr, a_[s % 2] + rows_.size * w.offset, std::size_t(rows_.size * w.size), rank_of(i_, kb));
    if (kb != i_) add(nullptr, b_[s % 2] + w.offset * cols_.size, std::size_t(w.size * cols_.size), rank_of(kb, j_));
    for (int c = 0; c < q_; ++c)
      if (c != j_ && kblock_of(i_, c, s) == j_)
        add(own_a + rows_.size * mine.offset, nullptr, std::size_t(rows_.size * mine.size), rank_of(i_, c));
    const Part b = part(part(p_.k, q_, i_).size, slabs, t);  // its B block's rows: k block i
    for (int r = 0; r < q_; ++r)
      if (r != i_ && kblock_of(r, j_, s) == i_)
        add(b_in_ + b.offset * cols_.size, nullptr, std::size_t(b.size * cols_.size), rank_of(r, j_));
    return out;
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

  // rows: slab t of the first step's A block's rows (A(i, i), k block i): received here off the
  // diagonal, sent along its row from the diagonal, each slab contiguous where it lies.
  std::vector<Transfer> row_slab(int t) {
    std::vector<Transfer> out;
    const long k = part(p_.k, q_, i_).size;
    const Part r = part(rows_.size, slabs_, t);
    const std::size_t count = std::size_t(r.size * k);
    if (!count) return out;
    if (j_ != i_) out.push_back({nullptr, 0, rank_of(i_, i_), a_[0] + r.offset * k, count, rank_of(i_, i_)});
    if (j_ == i_)
      for (int c = 0; c < q_; ++c)
        if (c != j_) out.push_back({a_in_ + r.offset * k, count, rank_of(i_, c), nullptr, 0, rank_of(i_, c)});
    return out;
  }

  // rows: step 0 off the diagonal a slab of C's rows at a time (the whole k block, all of C's
  // columns), each after its slab of A; the diagonal's step 0 whole, on its own blocks.
  void first_step_in_rows(Comm& world) {
    const long k = part(p_.k, q_, i_).size;
    for (int t = 0; t < slabs_; ++t) {
      const Part r = part(rows_.size, slabs_, t);
      ctx_.communicate([&] { world.exchange(row_slab(t)); });
      if (i_ == j_) continue;
      ctx_.compute_waits_for_communication();
      ctx_.compute([&] {
        ctx_.product(a_[0] + r.offset * k, b_in_, c_out_ + r.offset * cols_.size, r.size, cols_.size, k, false);
      });
    }
    if (i_ == j_) ctx_.compute([&] { ctx_.product(a_in_, b_in_, c_out_, rows_.size, cols_.size, k, false); });
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
        ctx_.communicate([&] { world.exchange(step_blocks(s, t, slabs_, packed_)); });
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
    const bool rows = shape_.by_rows;
    if (slabs_ == 1 && !rows) ctx_.communicate([&] { world.exchange(step_blocks(0, 0, 1, a_in_)); });
    if (rows) first_step_in_rows(world);
    if (columns_) first_step_in_columns(world);
    const Part k0 = part(p_.k, q_, j_);
    for (int t = 0; t < slabs_ && slabs_ > 1 && !columns_ && !rows; ++t) {
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
        ctx_.communicate([&] { world.exchange(step_blocks(s + 1, 0, 1, a_in_)); });
      }
      const long k = part(p_.k, q_, kblock(s)).size;
      if (s > 0 || (slabs_ == 1 && !rows))  // with slabs (and in rows), step 0's product followed its slabs in
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

}  // namespace mmlab::dist
