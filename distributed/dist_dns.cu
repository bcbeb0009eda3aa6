// dist_dns: the DNS 3D algorithm across processes, on a px x py x pz grid of ranks (2.5D and a
// pure k split as its special cases).
//
// Source: T. W. O'Neil, "Experiments with Massively Parallel Matrix Multiplication" (2013), sec. 2.2
// (Dekel, Nassimi and Sahni: every product term at once on a 3D grid, then a reduction over k).
// Split: m is cut in px parts, n in py, k in pz (near-equal; any m, n, k). Rank (i, j, l) computes
// the partial product A(i, l) B(l, j). A(i, l) is moved from the starting layout (2D blocks over the
// ranks) to rank (i, 0, l) and broadcast along its grid row (the ranks sharing i and l); B(l, j) to
// (0, j, l) and broadcast along its grid column; after the product, the pz partial C(i, j) are summed
// onto layer 0 (a reduce on the ranks sharing i and j), and C moves from there to the starting layout
// (both moves in layout_ms). q x q x q is DNS proper; q x q x c (c < q) the 2.5D decomposition of the
// same three phases (each layer one broadcast product of its k slice, not 2.5D's Cannon shifts);
// 1 x 1 x p a pure k split (no broadcasts, one reduction).
// With `slabs` > 1 and layers, the product is made in that many slabs of C's rows and each slab is
// reduced on the communication stream while the next is made: the reduction hides behind all but
// the last slab's product.
// Words per rank: A and B broadcasts about n^2 / (px pz) + n^2 / (py pz), the reduction n^2 / (px py).
// Constraints: px py pz = the job's rank count; any m, n, k.
// Example: mpirun -np 4 build/bin/mmlab run --algorithms dist_dns,cublas --grid 1x1x4,2x1x2 --size 16384
#include "distributed/run_base.hpp"

namespace mmlab {
namespace {

using namespace dist;

class DnsRun final : public RunBase {
 public:
  explicit DnsRun(const DistributedSetup& s) : RunBase(s, decomposed(Decomposition::dns, s.problem, *s.params)) {
    const int r = job().rank;
    j_ = r % grid_.cols, i_ = (r / grid_.cols) % grid_.rows, l_ = r / (grid_.cols * grid_.rows);
    rows_ = part(p_.m, grid_.rows, i_), cols_ = part(p_.n, grid_.cols, j_), k_ = part(p_.k, grid_.layers, l_);
    set_layouts(shape_.layout(Operand::a), shape_.layout(Operand::b), shape_.layout(Operand::c));
    // The broadcasts' roots send from where A and B landed (never written); the others receive.
    a_ = j_ == 0 ? const_cast<float*>(a_in_) : keep(std::size_t(rows_.size * k_.size));
    b_ = i_ == 0 ? const_cast<float*>(b_in_) : keep(std::size_t(k_.size * cols_.size));
    partial_ = grid_.layers == 1 ? c_out_ : keep(std::size_t(rows_.size * cols_.size));
    set_first_step(rows_.size, cols_.size, k_.size);
  }

 private:
  void schedule() override {
    const std::string grid = grid_.text();
    Comm& row = comm("dns-row-" + grid, l_ * grid_.rows + i_, j_);      // the ranks sharing i and l
    Comm& col = comm("dns-col-" + grid, l_ * grid_.cols + j_, i_);      // sharing j and l
    Comm& layer = comm("dns-layer-" + grid, i_ * grid_.cols + j_, l_);  // sharing i and j
    ctx_.communicate([&] {
      row.broadcast(a_, std::size_t(rows_.size * k_.size), 0);
      col.broadcast(b_, std::size_t(k_.size * cols_.size), 0);
    });
    ctx_.compute_waits_for_communication();
    // The product in slabs of C's rows (one slab: the whole product, then the reduction), each slab
    // reduced onto layer 0 on the communication stream while the next is made.
    const long slabs = dns_slabs(shape_, rows_.size);
    for (long t = 0; t < slabs; ++t) {
      const Part s = part(rows_.size, slabs, t);
      const long a0 = s.offset * k_.size, c0 = s.offset * cols_.size;
      ctx_.compute([&] { ctx_.product(a_ + a0, b_, partial_ + c0, s.size, cols_.size, k_.size, false); });
      if (grid_.layers > 1) {
        ctx_.communication_waits_for_compute();
        ctx_.communicate([&] {
          layer.reduce_sum(partial_ + c0, (c_out_ ? c_out_ : partial_) + c0, std::size_t(s.size * cols_.size), 0);
        });
      }
    }
  }

  // The model: core/decompositions.cpp.

  int i_ = 0, j_ = 0, l_ = 0;
  Part rows_, cols_, k_;
  float *a_ = nullptr, *b_ = nullptr, *partial_ = nullptr;
};

}  // namespace

MMLAB_ALGORITHM(dist_dns) {
  a.summary =
      "DNS 3D algorithm on a px x py x pz grid of ranks: broadcast A and B, multiply, reduce C over k";
  a.variants = {{"default", "broadcast along rows and columns, local product, reduction along layers"}};
  a.constraints = "grid px x py x pz = the job's ranks; any m, n, k";
  a.set_nondeterminism("default", "with layers (pz > 1): the reduction over them (NCCL or MPI) fixes no order");
  a.is_nondeterministic = [](const Problem&, const Params& q) { return parse_grid(q.text("grid")).layers > 1; };
  describe_distributed<DnsRun>(
      a, Decomposition::dns, grid_axis("2x1x2", {"1x1", "1x1x4", "2x1x2", "2x2x2", "1x1x2"}),
      {{"slabs", AxisKind::integer,
        "the product in this many slabs of C's rows, each reduced over the layers while the next is made "
        "(1: the whole product, then the reduction)",
        "1", {"1", "4"}}});
  const auto supports = a.supports;
  a.supports = [supports](const Problem& p, const Params& q, const DeviceInfo& d) -> Reason {
    if (q.integer("slabs") > 1 && parse_grid(q.text("grid")).layers == 1)
      return std::string("slabs: one layer, no reduction to overlap (the same run as slabs 1)");
    return supports(p, q, d);
  };
}

}  // namespace mmlab
