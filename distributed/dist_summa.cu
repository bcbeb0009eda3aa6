// dist_summa: SUMMA across processes: a pr x pc grid of ranks; A's and B's panels broadcast along
// grid rows and columns, pipelined with the local products.
//
// Source: the broadcast form of the 2D algorithms the O'Neil (2013) paper's Cannon belongs to
// (van de Geijn and Watts' SUMMA, 1997): C(i, j) = sum over k panels of A(i, panel) B(panel, j).
// Split: rank (i, j) owns C(i, j) (m cut in pr, n in pc near-equal parts), A(i, j) with k cut in pc
// parts, and B(i, j) with k cut in pr parts (on the starting layout's grid these are its blocks, and
// nothing moves before or after; on another, layout_ms moves them). k is walked in panels at most `panel` wide that never
// straddle an owner: for each, the owner in grid row i broadcasts its slice of A to the row (a
// broadcast on the row communicator), the owner in grid column j its slice of B to the column. The
// broadcast of panel t + 1 (communication stream) overlaps the product of panel t (compute stream).
// Words received per rank: about n^2 / pr + n^2 / pc.
// Constraints: pr x pc = the job's rank count; any m, n, k; panel >= 1.
// Example: mpirun -np 4 build/bin/mmlab run --algorithms dist_summa,cublas --grid 2x2,1x4 --size 16384
#include <algorithm>

#include "distributed/run_base.hpp"

namespace mmlab {
namespace {

using namespace dist;

class SummaRun final : public RunBase {
 public:
  explicit SummaRun(const DistributedSetup& s)
      : RunBase(s, decomposed(Decomposition::summa, s.problem, *s.params)),
        pr_(grid_.rows),
        pc_(grid_.cols),
        i_(job().rank / pc_),
        j_(job().rank % pc_),
        panels_(summa_panels(p_.k, pr_, pc_, shape_.panel)) {
    rows_ = part(p_.m, pr_, i_), cols_ = part(p_.n, pc_, j_);
    ka_ = part(p_.k, pc_, j_), kb_ = part(p_.k, pr_, i_);
    set_layouts(shape_.layout(Operand::a), shape_.layout(Operand::b), shape_.layout(Operand::c));
    long widest = 0;
    for (const SummaPanel& pa : panels_) widest = std::max(widest, pa.width);
    for (int t = 0; t < 2; ++t)
      ap_[t] = keep(std::size_t(rows_.size * widest)), bp_[t] = keep(std::size_t(widest * cols_.size));
    if (!panels_.empty()) set_first_step(rows_.size, cols_.size, panels_.front().width);
  }

 private:
  void schedule() override {
    Comm& row = comm("summa-row-" + std::to_string(pr_) + "x" + std::to_string(pc_), i_, j_);
    Comm& col = comm("summa-col-" + std::to_string(pr_) + "x" + std::to_string(pc_), j_, i_);
    float* c = c_out_;
    auto fetch = [&](std::size_t t, int buf) {  // panel t into buffers `buf`, on the communication stream
      const SummaPanel& pa = panels_[t];
      ctx_.communicate([&] {
        if (pa.a_owner == j_)
          ctx_.copy_2d(ap_[buf], pa.width, a_in_ + (pa.k0 - ka_.offset), ka_.size, rows_.size, pa.width);
        if (pa.b_owner == i_)
          ctx_.copy_2d(bp_[buf], cols_.size, b_in_ + (pa.k0 - kb_.offset) * cols_.size, cols_.size, pa.width,
                       cols_.size);
        row.broadcast(ap_[buf], std::size_t(rows_.size * pa.width), pa.a_owner);
        col.broadcast(bp_[buf], std::size_t(pa.width * cols_.size), pa.b_owner);
      });
    };
    if (panels_.empty()) ctx_.compute([&] { ctx_.product(nullptr, nullptr, c, rows_.size, cols_.size, 0, false); });
    if (!panels_.empty()) fetch(0, 0);
    for (std::size_t t = 0; t < panels_.size(); ++t) {
      const int cur = int(t % 2);
      ctx_.compute_waits_for_communication();
      if (t + 1 < panels_.size()) {
        ctx_.communication_waits_for_compute();  // panel t - 1's product read buffers 1 - cur
        fetch(t + 1, 1 - cur);
      }
      ctx_.compute([&] { ctx_.product(ap_[cur], bp_[cur], c, rows_.size, cols_.size, panels_[t].width, t > 0); });
    }
  }

  // The model: core/decompositions.cpp, over the same panels.

  int pr_, pc_, i_, j_;
  std::vector<SummaPanel> panels_;
  Part rows_, cols_, ka_, kb_;
  float *ap_[2] = {}, *bp_[2] = {};
};

}  // namespace

MMLAB_ALGORITHM(dist_summa) {
  a.summary = "SUMMA on a pr x pc grid of ranks: A and B panels broadcast along rows and columns, pipelined";
  a.variants = {
      {"default", "panels broadcast on row and column communicators, overlapped with the products"}};
  a.constraints = "grid pr x pc = the job's ranks; any m, n, k";
  describe_distributed<SummaRun>(
      a, Decomposition::summa, grid_axis("2x2", {"1x1", "2x2", "1x4", "2x1"}),
      {{"panel", AxisKind::integer, "widest k panel broadcast at once", "4096", {"4096", "7"}}});
}

}  // namespace mmlab
