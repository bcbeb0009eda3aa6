// mmlab-analyze scaling: each distributed row against the same engine on one GPU in the same job,
// beside NVIDIA's distributed GEMM and FP32 cuBLAS, its bound, clocks and energy (commands.hpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "analysis/commands.hpp"
#include "analysis/statistics.hpp"

namespace mmlab::analysis {

namespace {

// NVML's energy counter moves in steps tens of milliseconds apart: a trial shorter than this reads
// a step or none (four H100s, data/distributed/x4/sweep-2026-11-27: FP32 cuBLAS at 4096, 2.6 ms, read
// 0 J; at 8192, 21 ms at 613 W, 8.5 J; at 16384, 173 ms at 679 W, 120 J, power x time 117 J).
constexpr double kEnergyResolvedMs = 100;

// ALG[:variant[:params]] as a test of a single-process row.
bool matches(const Result& r, const std::string& spec) {
  std::vector<std::string> part;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ':');) part.push_back(p);
  if (part.empty()) return false;
  return r.algorithm == part[0] && (part.size() < 2 || r.variant == part[1]) &&
         (part.size() < 3 || r.params == part[2]);
}

bool distributed(const Result& r) { return r.distributed(); }
bool cublasmp(const Result& r) { return r.algorithm == "cublasmp"; }

// The fastest ok row passing `test` at r's shape: in r's job where there is one, else in any.
template <class Test>
const Result* fastest(const std::vector<Result>& all, const Result& r, Test test) {
  const Result* same_job = nullptr;
  const Result* any = nullptr;
  for (const Result& x : all) {
    if (!x.ok() || x.shape() != r.shape() || x.scope != r.scope || !test(x)) continue;
    if (!any || x.median_ms < any->median_ms) any = &x;
    if (x.fields.at("run") == r.fields.at("run") && (!same_job || x.median_ms < same_job->median_ms)) same_job = &x;
  }
  return same_job ? same_job : any;
}

std::string three(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

Table scaling(const std::vector<Result>& all_rows, const std::string& baseline, int resamples, bool best) {
  std::vector<Result> rows = select_run(all_rows, "latest");
  if (best) {  // each shape's fastest lab row and fastest cuBLASMp row of each engine
    std::map<std::string, const Result*> fastest_of;
    for (const Result& r : rows) {
      if (!r.ok() || !distributed(r)) continue;
      const std::string key = r.shape() + "|" + scope_name(r.scope) + "|" + (cublasmp(r) ? "cublasmp" : "lab") + "|" +
                              engine_name(r.get(Col::engine));
      const Result*& f = fastest_of[key];
      if (!f || r.median_ms < f->median_ms) f = &r;
    }
    std::vector<Result> kept;
    std::map<std::string, std::size_t> first_seen;  // a shape's place: where the files first have it
    for (const Result& r : rows) {
      first_seen.try_emplace(r.shape(), first_seen.size());
      for (const auto& [key, f] : fastest_of)
        if (f == &r) kept.push_back(r);
    }
    // Shape by shape as the files first have them, the lab's rows before cuBLASMp's (jobs that ran
    // cuBLASMp between two of the lab's would otherwise split a shape's rows).
    std::stable_sort(kept.begin(), kept.end(), [&](const Result& a, const Result& b) {
      return std::make_pair(first_seen.at(a.shape()), cublasmp(a)) < std::make_pair(first_seen.at(b.shape()), cublasmp(b));
    });
    rows = std::move(kept);
  }
  Table t;
  t.title = baseline.empty() ? "strong scaling: each row against its own engine on one GPU in the same job"
                             : "strong scaling against " + baseline;
  if (best) t.title += " (the fastest lab row and cuBLASMp row of each engine and shape)";
  t.header = {"size",        "algorithm",     "configuration", "engine",       "GPUs or ranks",  "median ms",
              "TFLOP/s",     "layout ms",     "x 1 GPU",       "CI 95%",       "efficiency",     "at equal clocks",
              "x FP32 cuBLAS", "x cuBLASMp",  "x cuBLASMp CI", "bound ms",      "time / bound", "GFLOP/J",        "GFLOP/J, 1 GPU",
              "compute ms",  "comm ms",       "wait ms",       "overlap",      "predicted ms",   "measured / predicted"};
  using T = ColumnType;
  declare(t, {Col::m, Col::n, Col::k, Col::inputs, Col::algorithm, Col::variant, Col::params, Col::engine, Col::grid,
              Col::gpus, Col::ranks, Col::median_ms, {"tflops", T::number}, Col::layout_ms, {"baseline", T::text},
              {"baseline_median_ms", T::number}, {"speedup", T::number}, {"ci_lo", T::number}, {"ci_hi", T::number},
              {"efficiency", T::number}, {"efficiency_equal_clocks", T::number}, {"x_cublas_fp32", T::number},
              {"x_cublasmp", T::number}, {"x_cublasmp_ci_lo", T::number}, {"x_cublasmp_ci_hi", T::number},
              {"cublasmp_configuration", T::text}, Col::bound_ms, {"time_over_bound", T::number},
              {"gflops_per_joule", T::number}, {"baseline_gflops_per_joule", T::number}, Col::compute_ms,
              Col::comm_ms, Col::wait_ms, Col::overlap, Col::predicted_ms, {"measured_over_predicted", T::number}});
  std::set<std::string> missing;  // engines with no one-GPU row in the files
  for (const Result& r : rows) {
    if (!r.ok() || !distributed(r)) continue;
    const std::string engine = r.get(Col::engine);
    const std::string yardstick = baseline.empty() ? engine_name(engine) : baseline;
    const Result* base = fastest(all_rows, r, [&](const Result& x) { return !distributed(x) && matches(x, yardstick); });
    if (!base) {
      missing.insert(yardstick);
      continue;
    }
    const Result* fp32 = fastest(all_rows, r, [](const Result& x) {
      return !distributed(x) && x.algorithm == "cublas" && x.variant == "default" && x.fp32();
    });
    const Result* vendor =
        fastest(all_rows, r, [&](const Result& x) { return cublasmp(x) && x.precision == r.precision; });
    const int gpus = std::stoi(r.get(Col::gpus)), ranks = std::stoi(r.get(Col::ranks)), workers = std::max(1, gpus ? gpus : ranks);
    const double speedup = base->median_ms / r.median_ms, efficiency = speedup / workers;
    Value ci_lo, ci_hi;
    std::string ci;
    if (base->samples.size() >= 2 && r.samples.size() >= 2) {
      const Interval i = bootstrap_median_ratio(base->samples, r.samples, 0.95, resamples, 1);
      ci = fixed(i.lo, 3) + " to " + fixed(i.hi, 3);
      ci_lo = i.lo, ci_hi = i.hi;
    }
    Value vendor_lo, vendor_hi;
    std::string vendor_ci;
    if (vendor && vendor->run_id != r.run_id && vendor->samples.size() >= 2 && r.samples.size() >= 2) {
      const Interval i = bootstrap_median_ratio(vendor->samples, r.samples, 0.95, resamples, 2);
      vendor_ci = fixed(i.lo, 3) + " to " + fixed(i.hi, 3);
      vendor_lo = i.lo, vendor_hi = i.hi;
    }
    // At equal clocks: the times in SM cycles (each row's median clock, the slowest rank's).
    const double clock = r.number(Col::clock_mhz), base_clock = base->number(Col::clock_mhz);
    const double equal = clock > 0 && base_clock > 0 ? efficiency * base_clock / clock : std::nan("");
    const double x_fp32 = fp32 ? fp32->median_ms / r.median_ms : std::nan("");
    const double x_vendor = vendor ? vendor->median_ms / r.median_ms : std::nan("");
    const double bound = r.number(Col::bound_ms), predicted = r.number(Col::predicted_ms);
    const double flop = 2.0 * double(r.m) * double(r.n) * double(r.k);
    const auto per_joule_of = [&](const Result& x) {  // only where a trial spans the counter's steps
      const double joules = x.number(Col::energy_j);
      return joules > 0 && x.median_ms >= kEnergyResolvedMs ? flop / joules / 1e9 : std::nan("");
    };
    const double per_joule = per_joule_of(r), base_per_joule = per_joule_of(*base);
    const std::string who = gpus ? std::to_string(gpus) + " GPUs" : std::to_string(ranks) + " CPU ranks";
    t.rows.push_back({r.shape(), r.algorithm, r.variant == "default" ? r.params : r.variant + " " + r.params,
                      engine_name(engine), who, three(r.median_ms), fixed(r.gflops / 1000, 2),
                      three(r.number(Col::layout_ms)), fixed(speedup, 3), ci, fixed(efficiency, 3), fixed(equal, 3),
                      fixed(x_fp32, 3), fixed(x_vendor, 3), vendor_ci, three(bound), bound > 0 ? fixed(r.median_ms / bound, 3) : "",
                      fixed(per_joule, 1), fixed(base_per_joule, 1), three(r.number(Col::compute_ms)),
                      three(r.number(Col::comm_ms)), three(r.number(Col::wait_ms)), three(r.number(Col::overlap)),
                      predicted > 0 ? fixed(predicted, 3) : "", predicted > 0 ? fixed(r.median_ms / predicted, 3) : ""});
    t.records.push_back({r.m, r.n, r.k, inputs_name(r.inputs), r.algorithm, r.variant, r.params, engine, r.get(Col::grid),
                         gpus, ranks, r.median_ms, r.gflops / 1000, r.number(Col::layout_ms), base->configuration(),
                         base->median_ms, speedup, ci_lo, ci_hi, efficiency, equal, x_fp32, x_vendor, vendor_lo, vendor_hi,
                         vendor ? Value(vendor->configuration()) : Value(), bound,
                         bound > 0 ? Value(r.median_ms / bound) : Value(), per_joule, base_per_joule,
                         r.number(Col::compute_ms), r.number(Col::comm_ms), r.number(Col::wait_ms),
                         r.number(Col::overlap), predicted > 0 ? Value(predicted) : Value(),
                         predicted > 0 ? Value(r.median_ms / predicted) : Value()});
  }
  if (t.rows.empty()) {
    std::set<std::string> shapes;
    for (const Result& r : rows)
      if (r.ok() && distributed(r)) shapes.insert(r.shape());
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
    throw AnalysisError("scaling: " + std::string(shapes.empty() ? "no distributed rows in the given files"
                                                                  : "no one-GPU row of " + names +
                                                                        " at the distributed rows' shapes") +
                        " (a distributed row is set against its own engine on one GPU, e.g. cublas for "
                        "cublas:default, flagship tensor_cores for flagship:tensor_cores; --baseline "
                        "ALG[:variant[:params]] names one for every row)");
  }
  t.note =
      "Every method is timed from one starting layout: A, B and C in 2D blocks over the ranks (the job's most square "
      "grid), its moves to its own layout and back included in its time and shown as layout ms. x 1 GPU = " +
      std::string(baseline.empty() ? "the same engine on one GPU (the row's engine spec: cublas:default against "
                                     "cublas, cublas:tf32 against cublas tf32, flagship:tensor_cores against "
                                     "flagship tensor_cores)"
                                   : baseline) +
      ", in the same job, median / median (bootstrap 95% CI); efficiency = that / GPUs (ranks on the CPU backend); "
      "at equal clocks = the same in SM cycles (each side's median clock, a distributed row's slowest rank's). "
      "x FP32 cuBLAS: one-GPU cublas (pure FP32) / the row; x cuBLASMp: the fastest cuBLASMp row of the same "
      "precision at the shape (its grid, block and algorithm) / the row, median / median (bootstrap 95% CI). bound: the row's "
      "bound as its run computed it: since issue 79 a least time (each rank's first input, its products at the engine's "
      "best rate measured on its shapes and its last output, or its port's words at the links' best measured rate, "
      "the longer, plus a latency; the slowest rank's), before it the decomposition's model at the same rates. "
      "Rows timed on the GPUs have timer blocked (since issue 79), the host's clock from a barrier before. GFLOP/J: 2mnk over the energy of a trial, all the job's GPUs "
      "(NVML's counter), shown where the median trial takes 100 ms or more (the counter moves in steps tens of "
      "ms apart). The phase times are medians over the trials of each "
      "phase's maximum over ranks; overlap = the share of communication hidden behind the products." +
      (missing.empty() ? std::string()
                       : " Left out: rows whose engine has no one-GPU row here (" +
                             [&] {
                               std::string s;
                               for (const std::string& m : missing) s += (s.empty() ? "" : ", ") + m;
                               return s;
                             }() +
                             ").");
  return t;
}

}  // namespace mmlab::analysis
