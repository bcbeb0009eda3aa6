// dist_cannon: Cannon's algorithm across processes: a q x q torus of ranks (one GPU each, NCCL
// between them; or host processes with MPI and Eigen, the CPU backend).
//
// Source: T. W. O'Neil, "Experiments with Massively Parallel Matrix Multiplication" (2013), sec. 2.3:
// C[i][j] = sum_s A[i][(i+j+s) mod q] B[(i+j+s) mod q][j] over blocks, each rank starting at a
// different block of k so that neighbours never need the same block at once.
// Split: m, n and k are each cut in q near-equal parts (any m, n, k). Rank (i, j) owns C(i, j).
// It starts with A(i, l0) and B(l0, j), l0 = (i + j) mod q: the initial skew, made in place (each
// rank generates its blocks from the seed and their global indices, so no scatter is timed). Then
// q steps: C(i, j) += A_cur B_cur on the compute stream while A_cur goes to the left neighbour and
// B_cur to the one above (one grouped NCCL send/receive into the other pair of buffers, on the
// communication stream); the next step waits for that exchange.
// Words received per rank: about 2 n^2 / sqrt(p) over q - 1 shifts (the skew is not counted).
// Constraints: a square grid q x q whose volume is the job's rank count (mpirun -np q^2).
// Example: mpirun -np 4 build/bin/mmlab run --algorithms dist_cannon,cublas --grid 2x2 --size 16384
#include "distributed/run_base.hpp"

namespace mmlab {
namespace {

using namespace dist;

class CannonRun final : public RunBase {
 public:
  explicit CannonRun(const DistributedSetup& s)
      : RunBase(s), q_(grid_.rows), i_(job().rank / q_), j_(job().rank % q_) {
    rows_ = part(p_.m, q_, i_), cols_ = part(p_.n, q_, j_);
    const long kmax = part(p_.k, q_, 0).size;
    for (int b = 0; b < 2; ++b)
      a_[b] = keep(std::size_t(rows_.size * kmax)), b_[b] = keep(std::size_t(kmax * cols_.size));
    c_ = keep(std::size_t(rows_.size * cols_.size));
    set_c(c_, rows_.offset, cols_.offset, rows_.size, cols_.size);
    const Part k0 = kpart(0);  // the skewed first blocks
    ctx_.fill(a_[0], rows_.size, k0.size, rows_.offset, k0.offset, p_, seed_, kMatrixA);
    ctx_.fill(b_[0], k0.size, cols_.size, k0.offset, cols_.offset, p_, seed_, kMatrixB);
    set_first_step(rows_.size, cols_.size, k0.size);
  }

  void run() override {
    Comm& world = comm("world", 0, job().rank);
    const int left = i_ * q_ + (j_ + q_ - 1) % q_, right = i_ * q_ + (j_ + 1) % q_;
    const int up = ((i_ + q_ - 1) % q_) * q_ + j_, down = ((i_ + 1) % q_) * q_ + j_;
    ctx_.start();
    for (int s = 0; s < q_; ++s) {
      const int cur = s % 2, nxt = 1 - cur;
      const Part k = kpart(s);
      if (s + 1 < q_) {
        const Part kn = kpart(s + 1);
        ctx_.communication_waits_for_compute();  // step s - 1's product read buffers `nxt`
        ctx_.communicate([&] {
          world.exchange({{a_[cur], std::size_t(rows_.size * k.size), left, a_[nxt],
                           std::size_t(rows_.size * kn.size), right},
                          {b_[cur], std::size_t(k.size * cols_.size), up, b_[nxt],
                           std::size_t(kn.size * cols_.size), down}});
        });
      }
      ctx_.compute([&] { ctx_.product(a_[cur], b_[cur], c_, rows_.size, cols_.size, k.size, s > 0); });
      if (s + 1 < q_) ctx_.compute_waits_for_communication();
    }
    ctx_.finish();
  }

  Model model() const override {
    Model m;
    m.pipelined = true;
    for (int s = 0; s < q_; ++s) {
      const Part k = kpart(s);
      ModelStep step;
      step.flop = 2.0 * rows_.size * cols_.size * k.size;
      if (s > 0) step.bytes_in = 4.0 * (rows_.size * k.size + k.size * cols_.size);
      m.steps.push_back(step);
    }
    return m;
  }

 private:
  Part kpart(int s) const { return part(p_.k, q_, (i_ + j_ + s) % q_); }  // the k block of step s

  int q_, i_, j_;
  Part rows_, cols_;
  float *a_[2], *b_[2], *c_;
};

Reason supports(const Problem&, const Params& q, const DeviceInfo& d) {
  const Grid g = parse_grid(q.text("grid"));
  if (g.rows != g.cols || g.layers != 1) return "dist_cannon needs a square grid q x q; not " + g.text();
  return check_job(g, q.text("engine"), d);
}

std::size_t bytes_per_rank(const Problem& p, const Params& q) {
  const long r = parse_grid(q.text("grid")).rows;
  const double rows = part(p.m, r, 0).size, cols = part(p.n, r, 0).size, k = part(p.k, r, 0).size;
  return std::size_t(4 * (2 * rows * k + 2 * k * cols + rows * cols));
}

}  // namespace

MMLAB_ALGORITHM(dist_cannon) {
  a.summary =
      "Cannon's algorithm on a q x q torus of ranks, shifts overlapped with the products (O'Neil 2013)";
  a.variants = {{"default", "skew in place, then q steps of product + shift (A left, B up)"}};
  a.constraints = "grid q x q = the job's ranks; any m, n, k";
  describe_distributed<CannonRun>(a, grid_axis("2x2", {"1x1", "2x2", "3x3"}), {}, supports, bytes_per_rank);
}

}  // namespace mmlab
