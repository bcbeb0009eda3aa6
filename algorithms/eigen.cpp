// eigen: Eigen's float32 matrix product on the CPU, the "BLAS" column of the papers.
//
// Source: A. Gupta and S. Bhalla, "Matrix Multiplication on GPU" (2022) (Table 3, BLAS vs cuBLAS).
// Split: Eigen's cache-blocked GEBP kernels, parallelised over `threads` OpenMP threads.
// Timed on the host (steady clock) around the product; inputs and output live in host memory,
// so only the `kernel` scope applies.
// Constraints: any m, n, k that fit in host memory.
// Example: mmlab run --algorithms eigen --size 256,512,1024 --threads 1,16
#include <Eigen/Core>
#include <string>
#include <thread>

#include "core/algorithm.hpp"

namespace mmlab {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void run(const RunArgs& r) {
  Eigen::setNbThreads(int(r.params->integer("threads")));
  const Problem& p = r.problem;
  Eigen::Map<const Matrix> a(r.a, p.m, p.k);
  Eigen::Map<const Matrix> b(r.b, p.k, p.n);
  Eigen::Map<Matrix> c(r.c, p.m, p.n);
  c.noalias() = a * b;
}

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// More OpenMP threads than the machine has would time the scheduler, not the product.
Reason supports(const Problem&, const Params& q, const DeviceInfo&) {
  if (q.has("threads") && q.integer("threads") > long(hardware_threads()))
    return "threads " + q.text("threads") + ": this machine has " + std::to_string(hardware_threads()) +
           " hardware threads";
  return std::nullopt;
}

}  // namespace

MMLAB_ALGORITHM(eigen) {
  const std::string all_threads = std::to_string(hardware_threads());
  a.summary = "Eigen float32 product on the host CPU, the papers' BLAS baseline (Gupta & Bhalla 2022)";
  a.backend = Backend::host;
  a.variants = {{"default", "C.noalias() = A * B on row-major maps"}};
  a.axes = {{"threads",
             AxisKind::integer,
             "OpenMP threads, 1 up to the machine's hardware threads, all of them by default",
             all_threads,
             {"1", all_threads},
             {},
             1024}};  // OpenMP would try to start them all
  a.constraints = "host memory only; scope kernel only; threads at most the hardware threads";
  a.supports = supports;
  a.run = run;
}

}  // namespace mmlab
