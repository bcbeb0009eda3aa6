// dist_dns: the DNS 3D algorithm across processes, on a px x py x pz grid of ranks (2.5D and a
// pure k split as its special cases).
//
// Source: T. W. O'Neil, "Experiments with Massively Parallel Matrix Multiplication" (2013), sec. 2.2
// (Dekel, Nassimi and Sahni: every product term at once on a 3D grid, then a reduction over k).
// Split: m is cut in px parts, n in py, k in pz (near-equal; any m, n, k). Rank (i, j, l) computes
// the partial product A(i, l) B(l, j). A(i, l) starts on rank (i, 0, l) and is broadcast along its
// grid row (the ranks sharing i and l); B(l, j) starts on (0, j, l) and is broadcast along its grid
// column; after the product, the pz partial C(i, j) are summed onto layer 0 (a reduce on the
// ranks sharing i and j). q x q x q is DNS proper; q x q x c (c < q) the 2.5D decomposition of the
// same three phases (each layer one broadcast product of its k slice, not 2.5D's Cannon shifts);
// 1 x 1 x p a pure k split (no broadcasts, one reduction).
// Words per rank: A and B broadcasts about n^2 / (px pz) + n^2 / (py pz), the reduction n^2 / (px py).
// Constraints: px py pz = the job's rank count; any m, n, k.
// Example: mpirun -np 4 build/bin/mmlab run --algorithms dist_dns,cublas --grid 1x1x4,2x1x2 --size 16384
#include "distributed/run_base.hpp"

namespace mmlab {
namespace {

using namespace dist;

class DnsRun final : public RunBase {
 public:
  explicit DnsRun(const DistributedSetup& s) : RunBase(s, Decomposition::dns) {
    const int r = job().rank;
    j_ = r % grid_.cols, i_ = (r / grid_.cols) % grid_.rows, l_ = r / (grid_.cols * grid_.rows);
    rows_ = part(p_.m, grid_.rows, i_), cols_ = part(p_.n, grid_.cols, j_), k_ = part(p_.k, grid_.layers, l_);
    a_ = keep(std::size_t(rows_.size * k_.size));
    b_ = keep(std::size_t(k_.size * cols_.size));
    partial_ = keep(std::size_t(rows_.size * cols_.size));
    c_ = grid_.layers == 1 ? partial_ : l_ == 0 ? keep(std::size_t(rows_.size * cols_.size)) : nullptr;
    if (c_) set_c(c_, rows_.offset, cols_.offset, rows_.size, cols_.size);
    if (j_ == 0) ctx_.fill(a_, rows_.size, k_.size, rows_.offset, k_.offset, p_, seed_, kMatrixA);
    if (i_ == 0) ctx_.fill(b_, k_.size, cols_.size, k_.offset, cols_.offset, p_, seed_, kMatrixB);
    set_first_step(rows_.size, cols_.size, k_.size);
  }

  void run() override {
    const std::string grid = grid_.text();
    Comm& row = comm("dns-row-" + grid, l_ * grid_.rows + i_, j_);      // the ranks sharing i and l
    Comm& col = comm("dns-col-" + grid, l_ * grid_.cols + j_, i_);      // sharing j and l
    Comm& layer = comm("dns-layer-" + grid, i_ * grid_.cols + j_, l_);  // sharing i and j
    ctx_.start();
    ctx_.communicate([&] {
      row.broadcast(a_, std::size_t(rows_.size * k_.size), 0);
      col.broadcast(b_, std::size_t(k_.size * cols_.size), 0);
    });
    ctx_.compute_waits_for_communication();
    ctx_.compute([&] { ctx_.product(a_, b_, partial_, rows_.size, cols_.size, k_.size, false); });
    if (grid_.layers > 1) {
      ctx_.communication_waits_for_compute();
      ctx_.communicate(
          [&] { layer.reduce_sum(partial_, c_ ? c_ : partial_, std::size_t(rows_.size * cols_.size), 0); });
    }
    ctx_.finish();
  }

  // The model: core/decompositions.cpp.

 private:
  int i_ = 0, j_ = 0, l_ = 0;
  Part rows_, cols_, k_;
  float *a_, *b_, *partial_, *c_;
};

}  // namespace

MMLAB_ALGORITHM(dist_dns) {
  a.summary =
      "DNS 3D algorithm on a px x py x pz grid of ranks: broadcast A and B, multiply, reduce C over k";
  a.variants = {{"default", "broadcast along rows and columns, local product, reduction along layers"}};
  a.constraints = "grid px x py x pz = the job's ranks; any m, n, k";
  a.set_nondeterminism("default", "with layers (pz > 1): the reduction over them (NCCL or MPI) fixes no order");
  a.is_nondeterministic = [](const Problem&, const Params& q) { return parse_grid(q.text("grid")).layers > 1; };
  describe_distributed<DnsRun>(a, Decomposition::dns,
                               grid_axis("2x1x2", {"1x1", "1x1x4", "2x1x2", "2x2x2", "1x1x2"}), {});
}

}  // namespace mmlab
