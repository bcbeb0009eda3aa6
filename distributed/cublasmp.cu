// cublasmp: NVIDIA's distributed GEMM, cuBLASMp (0.7), beside the lab's decompositions, as cuBLAS and
// CUTLASS stand beside the lab's kernels on one GPU. The library is loaded at run time
// (distributed/cublasmp_api.hpp): where it or NVSHMEM is missing the algorithm is still listed and
// says why.
//
// cuBLASMp's matrices are column-major and 2D block-cyclic (ScaLAPACK's layout); the lab's are
// row-major. Row-major C (m x n) = A B is column-major C^T = B^T A^T, and a row-major block read
// column-major is its transpose, so the call is cuBLASMp's NN product D (n x m) = X (n x k) Y (k x m)
// with X = B's entries, Y = A's and D = C's, untouched. Variants:
//   gemm        cublasMpGemm on a process grid pr x pc (lab words: pr cuts m, pc cuts n; cuBLASMp's
//               grid is pc x pr, column-major, so rank i pc + j holds C's block (i, j)), blocks of
//               `block` (whole: one block per rank, the starting layout itself where the grid is the
//               job's starting grid: nothing moves before or after);
//   matmul_ag   cublasMpMatmul's AllGather + GEMM (split_p2p: NVLink copies overlapped with the products,
//               no multicast): A cut by rows over the ranks and all-gathered, B and C by columns;
//   matmul_rs   its GEMM + ReduceScatter: A cut by columns and B by rows (k split), the partial C
//               reduce-scattered to C cut by rows.
// Every method of the lab starts from the same layout: the moves to cuBLASMp's layout and back are
// timed in layout_ms (core/layout.hpp). The engine axis picks the compute type: cublas (FP32,
// CUBLAS_COMPUTE_32F) or cublas_tf32 (CUBLAS_COMPUTE_32F_FAST_TF32, judged and recorded as TF32). The
// row's bound is the nearest lab decomposition's: SUMMA on the same grid (gemm, matmul_ag), a k split
// with its reduction (matmul_rs). Transport: NCCL (cuBLASMp takes the job's NCCL communicator).
// Example: mpirun -np 4 -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 build/bin/mmlab run
//            --algorithms cublasmp --variant all --grid 2x2,1x4 --cublasmp.block whole,1024 --size 8192
#include <cublas_v2.h>
#include <library_types.h>

#include <algorithm>
#include <stdexcept>

#include "distributed/cublasmp_api.hpp"
#include "distributed/run_base.hpp"

namespace mmlab {
namespace {

using namespace dist;

enum class Kind { gemm, matmul_ag, matmul_rs };
const std::vector<Variant> kVariants = {
    {"gemm", "cublasMpGemm on a pr x pc grid, 2D block-cyclic blocks", Precision::fp32, false,
     "cuBLASMp fixes no order of its sums over ranks"},
    {"matmul_ag", "cublasMpMatmul, AllGather + GEMM (A's rows gathered, split_p2p)", Precision::fp32, false,
     "cuBLASMp fixes no order of its sums over ranks"},
    {"matmul_rs", "cublasMpMatmul, GEMM + ReduceScatter (k split, split_p2p)", Precision::fp32, false,
     "cuBLASMp fixes no order of its sums over ranks"}};

long ceil_div(long a, long b) { return (a + b - 1) / b; }

// cuBLASMp's layout of the operands for a configuration: a grid and block sizes per dimension, in the
// lab's words (pr cuts m, pc cuts n; k is cut over pr for A's columns and over pc for B's rows).
struct Plan {
  Kind kind;
  int pr = 1, pc = 1;
  long mb = 1, nb = 1, kb = 1;
};

Plan plan_of(const Problem& p, const Params& q, int ranks) {
  Plan x;
  x.kind = variant_kind<Kind>(kVariants, q);
  if (x.kind == Kind::gemm) {
    const Grid g = parse_grid(q.text("grid"));
    x.pr = g.rows, x.pc = g.cols;
    const std::string block = q.text("block");
    if (block == "whole") {
      x.mb = ceil_div(p.m, x.pr), x.nb = ceil_div(p.n, x.pc), x.kb = ceil_div(p.k, std::max(x.pr, x.pc));
    } else {
      x.mb = x.nb = x.kb = std::stol(block);
    }
  } else {
    x.pr = x.pc = ranks;
    x.mb = ceil_div(p.m, ranks), x.nb = ceil_div(p.n, ranks), x.kb = ceil_div(p.k, ranks);
  }
  return x;
}

// The operands' layouts (row-major, as the lab holds them) in cuBLASMp's local storage: a rank's
// local column-major block of X = B's entries is a row-major block of B whose pitch is its lld.
struct Layouts {
  Layout a, b, c;
};
Layouts layouts_of(const Problem& p, const Plan& x, int ranks) {
  Layouts l;
  if (x.kind == Kind::gemm) {  // process (q, p) of cuBLASMp's pc x pr grid is rank q pc + p
    auto rank = [&](int i, int j) { return i * x.pc + j; };
    l.a = block_cyclic_layout(p.m, p.k, x.mb, x.kb, x.pr, x.pc, rank, ranks);
    l.b = block_cyclic_layout(p.k, p.n, x.kb, x.nb, x.pr, x.pc, rank, ranks);
    l.c = block_cyclic_layout(p.m, p.n, x.mb, x.nb, x.pr, x.pc, rank, ranks);
    return l;
  }
  auto by_row = [](int i, int) { return i; };
  auto by_col = [](int, int j) { return j; };
  if (x.kind == Kind::matmul_ag) {  // A(rows r); B(:, cols r); C(:, cols r)
    l.a = block_cyclic_layout(p.m, p.k, x.mb, p.k, ranks, 1, by_row, ranks);
    l.b = block_cyclic_layout(p.k, p.n, p.k, x.nb, 1, ranks, by_col, ranks);
    l.c = block_cyclic_layout(p.m, p.n, p.m, x.nb, 1, ranks, by_col, ranks);
  } else {  // A(:, k r); B(k r, :); C(rows r)
    l.a = block_cyclic_layout(p.m, p.k, p.m, x.kb, 1, ranks, by_col, ranks);
    l.b = block_cyclic_layout(p.k, p.n, x.kb, p.n, ranks, 1, by_row, ranks);
    l.c = block_cyclic_layout(p.m, p.n, x.mb, p.n, ranks, 1, by_row, ranks);
  }
  return l;
}

// The nearest lab decomposition, for the model and the row's bound. The block size is how cuBLASMp
// tiles the same decomposition, not a different one: the model takes the grid's widest panels (one
// per rank), whose products run at the engine's best rate, so a small block cannot raise the bound
// above the time cuBLASMp measures (with 1024 it did, the model's products being 1024 deep).
Decomposed model_shape(const Problem& p, const Params& q, int ranks) {
  const Plan x = plan_of(p, q, ranks);
  if (x.kind == Kind::matmul_rs) return {Decomposition::dns, p, Grid{1, 1, ranks}, 4096};
  if (x.kind == Kind::matmul_ag) return {Decomposition::summa, p, Grid{1, ranks, 1}, x.kb};
  return {Decomposition::summa, p, Grid{x.pr, x.pc, 1}, ceil_div(p.k, std::max(x.pr, x.pc))};
}

class CublasMpRun final : public RunBase {
 public:
  explicit CublasMpRun(const DistributedSetup& s)
      : RunBase(s, model_shape(s.problem, *s.params, job().size)),
        x_(plan_of(s.problem, *s.params, job().size)),
        api_(cublasmp::api()) {
    const int ranks = job().size;
    Layouts l = layouts_of(p_, x_, ranks);
    const int me = job().rank;
    lld_a_ = std::max(1L, l.a[me].cols), lld_b_ = std::max(1L, l.b[me].cols), lld_c_ = std::max(1L, l.c[me].cols);
    set_layouts(std::move(l.a), std::move(l.b), std::move(l.c));
    dummy_ = keep(1);  // cuBLASMp is given a pointer even where a rank holds none of a matrix
    set_first_step(std::min(p_.m, x_.mb), std::min(p_.n, x_.nb), x_.kind == Kind::matmul_ag ? p_.k : x_.kb);
    compute_ = s.params->text("engine") == "cublas_tf32" ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    nccl_ = comm("world", 0, me).native();
    if (!api_ || !nccl_) {
      failure_ = "cuBLASMp needs its library and the job's NCCL communicator";
      return;
    }
    set_up();
    allocate_workspace();
  }

  ~CublasMpRun() override {  // the handle is the process's (cublasmp::shared_handle)
    if (!api_) return;
    if (symmetric_ && api_->nvshmem_free) api_->nvshmem_free(symmetric_);  // while NVSHMEM's teams stand
    for (cublasmp::Descriptor d : {desc_x_, desc_y_, desc_d_})
      if (d) api_->descriptor_destroy(d);
    if (matmul_) api_->matmul_desc_destroy(matmul_);
    for (cublasmp::Grid g : {grid_, grid_rows_, grid_cols_})
      if (g) api_->grid_destroy(g);
  }

  // The nearest decomposition's words; the order of its work inside the library unknown, so its bound
  // waits for no first input and no last output (cuBLASMp's matmul overlaps both with its products).
  Model model() const override {
    Model m = RunBase::model();
    m.least.first_bytes = m.least.last_bytes = 0;
    m.least.first_waits_for_layout = false;
    return m;
  }
  std::string failure() const override { return failure_; }
  std::string note() const override {
    std::string n = RunBase::note();
    if (x_.kind != Kind::gemm && !symmetric_ && failure_.empty())
      n += std::string(n.empty() ? "" : "; ") + "workspace not NVSHMEM's (" + api_->nvshmem + "): no overlap";
    return n;
  }

 private:
  void check(int status, const char* call) {
    if (status != cublasmp::kSuccess && failure_.empty())
      failure_ = std::string(call) + ": " + cublasmp::status_text(status);
  }

  // Handle, grids, descriptors and workspace, made once; a status other than success is the run's
  // failure (the configuration's row says it, the job goes on).
  void set_up() {
    const int ranks = job().size;
    check(cublasmp::shared_handle(ctx_.compute_stream(), &handle_), "cublasMpCreate");
    if (!failure_.empty()) return;
    const std::int64_t m = p_.n, n = p_.m, k = p_.k;  // cuBLASMp's D (m x n) = X (m x k) Y (k x n)
    if (x_.kind == Kind::gemm) {
      check(api_->grid_create(x_.pc, x_.pr, cublasmp::kGridColMajor, nccl_, &grid_), "cublasMpGridCreate");
      if (!failure_.empty()) return;
      describe(desc_x_, m, k, x_.nb, x_.kb, lld_b_, grid_);
      describe(desc_y_, k, n, x_.kb, x_.mb, lld_a_, grid_);
      describe(desc_d_, m, n, x_.nb, x_.mb, lld_c_, grid_);
    } else {
      check(api_->grid_create(ranks, 1, cublasmp::kGridColMajor, nccl_, &grid_cols_), "cublasMpGridCreate");
      check(api_->grid_create(1, ranks, cublasmp::kGridRowMajor, nccl_, &grid_rows_), "cublasMpGridCreate");
      if (!failure_.empty()) return;
      // Blocks as NVIDIA's samples of the two algorithms give them: the dimension a grid does not cut
      // still has the blocks of the one it cuts in the other operand (0.7 refused whole-width blocks
      // there with CUBLASMP_STATUS_INVALID_VALUE, data/distributed/x4/timing-defect-9fc54bb).
      if (x_.kind == Kind::matmul_ag) {  // X and D row-wise (ranks x 1), Y column-wise (1 x ranks)
        describe(desc_x_, m, k, x_.nb, k, lld_b_, grid_cols_);
        describe(desc_y_, k, n, k, x_.mb, lld_a_, grid_rows_);
        describe(desc_d_, m, n, x_.nb, x_.mb, lld_c_, grid_cols_);
      } else {  // X column-wise (k split), Y row-wise (k split), D column-wise
        describe(desc_x_, m, k, m, x_.kb, lld_b_, grid_rows_);
        describe(desc_y_, k, n, x_.kb, x_.mb, lld_a_, grid_cols_);
        describe(desc_d_, m, n, m, x_.mb, lld_c_, grid_rows_);
      }
      check(api_->matmul_desc_create(&matmul_, int(compute_)), "cublasMpMatmulDescriptorCreate");
      if (!failure_.empty()) return;
      const int op = CUBLAS_OP_N, algo = cublasmp::kAlgoSplitP2P;
      check(api_->matmul_desc_set(matmul_, cublasmp::kAttributeTransA, &op, sizeof op), "cublasMpMatmulDescriptorAttributeSet");
      check(api_->matmul_desc_set(matmul_, cublasmp::kAttributeTransB, &op, sizeof op), "cublasMpMatmulDescriptorAttributeSet");
      check(api_->matmul_desc_set(matmul_, cublasmp::kAttributeAlgo, &algo, sizeof algo), "cublasMpMatmulDescriptorAttributeSet");
    }
    if (!failure_.empty()) return;
    std::size_t device_bytes = 0, host_bytes = 0;
    const float alpha = 1, beta = 0;
    if (x_.kind == Kind::gemm)
      check(api_->gemm_buffer_size(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, b(), 1, 1, desc_x_, a(), 1, 1,
                                   desc_y_, &beta, c(), 1, 1, desc_d_, int(compute_), &device_bytes, &host_bytes),
            "cublasMpGemm_bufferSize");
    else
      check(api_->matmul_buffer_size(handle_, matmul_, m, n, k, &alpha, b(), 1, 1, desc_x_, a(), 1, 1, desc_y_, &beta,
                                     nullptr, 1, 1, nullptr, c(), 1, 1, desc_d_, &device_bytes, &host_bytes),
            "cublasMpMatmul_bufferSize");
    device_bytes_ = device_bytes;
    host_work_.resize(std::max<std::size_t>(host_bytes, 1));
  }

  // The workspace, once every rank has set up (collective: every rank calls it, failed or not).
  // Version 0.7's overlapping matmul reads its workspace on the other ranks: NVSHMEM's symmetric
  // memory, the same size on every rank (a collective allocation).
  void allocate_workspace() {
    if (max_over_ranks(failure_.empty() ? 0 : 1) > 0) {
      if (failure_.empty()) failure_ = "another rank's cuBLASMp set-up failed";
      return;
    }
    device_bytes_ = std::size_t(max_over_ranks(double(device_bytes_)));
    if (x_.kind != Kind::gemm && api_->nvshmem_malloc) symmetric_ = api_->nvshmem_malloc(std::max<std::size_t>(device_bytes_, 1));
    work_ = symmetric_ ? static_cast<float*>(symmetric_) : keep((device_bytes_ + sizeof(float) - 1) / sizeof(float));
  }

  void describe(cublasmp::Descriptor& d, std::int64_t rows, std::int64_t cols, std::int64_t rb, std::int64_t cb,
                std::int64_t lld, cublasmp::Grid grid) {
    if (!failure_.empty()) return;
    check(api_->descriptor_create(rows, cols, std::max<std::int64_t>(rb, 1), std::max<std::int64_t>(cb, 1), 0, 0, lld,
                                  CUDA_R_32F, grid, &d),
          "cublasMpMatrixDescriptorCreate");
  }

  const float* a() const { return a_in_ ? a_in_ : dummy_; }
  const float* b() const { return b_in_ ? b_in_ : dummy_; }
  float* c() const { return c_out_ ? c_out_ : dummy_; }

  void schedule() override {
    if (!failure_.empty()) return;  // the run failed: every rank knows (the pipeline agreed on it)
    const std::int64_t m = p_.n, n = p_.m, k = p_.k;
    const float alpha = 1, beta = 0;
    ctx_.compute([&] {
      check(api_->stream_set(handle_, ctx_.compute_stream()), "cublasMpStreamSet");
      if (x_.kind == Kind::gemm)
        check(api_->gemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, b(), 1, 1, desc_x_, a(), 1, 1, desc_y_,
                         &beta, c(), 1, 1, desc_d_, int(compute_), work_, device_bytes_, host_work_.data(),
                         host_work_.size()),
              "cublasMpGemm");
      else
        check(api_->matmul(handle_, matmul_, m, n, k, &alpha, b(), 1, 1, desc_x_, a(), 1, 1, desc_y_, &beta, nullptr,
                           1, 1, nullptr, c(), 1, 1, desc_d_, work_, device_bytes_, host_work_.data(),
                           host_work_.size()),
              "cublasMpMatmul");
    });
  }

  Plan x_;
  const cublasmp::Api* api_;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  void* nccl_ = nullptr;
  cublasmp::Handle handle_ = nullptr;
  cublasmp::Grid grid_ = nullptr, grid_rows_ = nullptr, grid_cols_ = nullptr;
  cublasmp::Descriptor desc_x_ = nullptr, desc_y_ = nullptr, desc_d_ = nullptr;
  cublasmp::MatmulDesc matmul_ = nullptr;
  long lld_a_ = 1, lld_b_ = 1, lld_c_ = 1;
  float* dummy_ = nullptr;
  void* symmetric_ = nullptr;
  float* work_ = nullptr;
  std::size_t device_bytes_ = 0;
  std::vector<char> host_work_;
  std::string failure_;
};

}  // namespace

MMLAB_ALGORITHM(cublasmp) {
  a.summary = "NVIDIA's distributed GEMM, cuBLASMp 0.7 (cublasMpGemm on a 2D block-cyclic grid; cublasMpMatmul's "
              "AllGather + GEMM and GEMM + ReduceScatter), from the lab's starting layout";
  a.variants = kVariants;
  a.constraints = "gemm: grid pr x pc = the job's ranks; transport nccl; any m, n, k";
  a.backend = Backend::distributed;
  a.axes = {grid_axis("2x2", {"1x1", "2x2", "1x4", "4x1", "1x2", "2x1"}), engine_axis(),
            {"block", AxisKind::choice, "cuBLASMp's block size (square blocks); whole: one block per rank", "whole",
             {"whole", "1024", "4096"}, {"gemm"}}};
  a.axes[0].variants = {"gemm"};
  a.axes[1].description = "the compute type of cuBLASMp's products: cublas (CUBLAS_COMPUTE_32F, pure FP32) or "
                          "cublas_tf32 (CUBLAS_COMPUTE_32F_FAST_TF32, judged as TF32)";
  a.axes[1].values = {"cublas"};
  a.axes[1].on_request = {"cublas_tf32"};
  a.precision_by = [](const Params& q) {
    return q.text("engine") == "cublas_tf32" ? Precision::tf32 : Precision::fp32;
  };
  a.engine_of = [](const Params& q) { return engine_spec(q.text("engine")).algorithm; };
  a.unavailable = [] {
    std::string why;
    return cublasmp::api(&why) ? std::string() : why;
  };
  a.supports = [](const Problem&, const Params& q, const DeviceInfo& d) -> Reason {
    if (q.text("engine") != "cublas" && q.text("engine") != "cublas_tf32")
      return "cuBLASMp multiplies with its own cuBLAS calls: engine cublas (FP32) or cublas_tf32";
    if (q.has("grid")) {
      const Grid g = parse_grid(q.text("grid"));
      if (g.layers != 1) return std::string("cuBLASMp's process grid is 2D: pr x pc");
      if (Reason why = check_job(g, q, d)) return why;
    } else if (Reason why = check_job(Grid{1, job().size, 1}, q, d)) {
      return why;
    }
    if (!placement().shared.empty()) return "cuBLASMp needs a GPU of its own per rank: " + placement().shared;
    return std::nullopt;
  };
  a.resolve = [](const Problem&, const Params& q, const DeviceInfo&) {
    Params r = q;
    r.set("transport", "nccl");
    if (const cublasmp::Api* api = cublasmp::api()) r.set("library", api->versions);  // the row records them
    return r;
  };
  a.workspace_bytes = [](const Problem& p, const Params& q) {
    // Its blocks in cuBLASMp's layout and the starting layout's, the moves' staging, and cuBLASMp's
    // own workspace (at most a few blocks of A or B): twice the SUMMA model's estimate.
    return 2 * model_shape(p, q, job().size).bytes_per_rank();
  };
  a.make_distributed = [](const DistributedSetup& s) -> std::unique_ptr<DistributedRun> {
    return std::make_unique<CublasMpRun>(s);
  };
}

}  // namespace mmlab
