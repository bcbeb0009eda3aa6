#include "analysis/paper_tables.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace mmlab::analysis {

namespace {

const double kNone = std::numeric_limits<double>::quiet_NaN();

using Pred = std::function<bool(const Result&)>;

Pred config(const std::string& algorithm, const std::string& variant = "", const std::string& params = "") {
  return [=](const Result& r) {
    return r.ok() && r.algorithm == algorithm && (variant.empty() || r.variant == variant) &&
           (params.empty() || r.params == params);
  };
}
Pred at(long m, long n, long k, Pred p) {
  return [=](const Result& r) { return r.m == m && r.n == n && r.k == k && p(r); };
}
Pred at(long n, Pred p) { return at(n, n, n, p); }
Pred in_scope(Scope scope, Pred p) {
  return [=](const Result& r) { return r.scope == scope && p(r); };
}

const Result* best(const std::vector<Result>& rows, const Pred& p) {
  const Result* b = nullptr;
  for (const Result& r : rows)
    if (p(r) && (!b || r.gflops > b->gflops)) b = &r;
  return b;
}

const Result& need(const std::vector<Result>& rows, const Pred& p, const std::string& table,
                   const std::string& what) {
  if (const Result* r = best(rows, p)) return *r;
  throw AnalysisError(table + ": no ok row for " + what + " in the given files");
}

std::string gf(const Result* r) { return r ? fixed(r->gflops, 1) : ""; }
std::string num(double v, int d = 1) { return std::isnan(v) ? "-" : fixed(v, d); }
// A paper's figure as the paper printed it.
std::string paper(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8g", v);
  return buf;
}
std::string us(double ms) { return fixed(ms * 1000.0, 2); }

std::string device_of(const std::vector<Result>& rows) {
  for (const Result& r : rows)
    if (r.ok() && r.device.rfind("cpu", 0) != 0) return r.device;
  return "the GPU in the files";
}

std::string provenance(const std::vector<Result>& rows) {
  std::map<std::string, int> revs;
  for (const Result& r : rows) revs[r.get(Col::git_revision)]++;
  std::string s;
  for (auto& [rev, c] : revs) s += (s.empty() ? "" : ", ") + rev;
  return "mmlab: " + device_of(rows) + ", revision " + s + ".";
}

// O'Neil 2013, tables 1 and 2 (Tesla C2070, microseconds, end to end).
struct OneilRow {
  const char* label;
  int trials;
  double min, max, avg, std;
  Pred pick;
};

Table oneil(const std::string& name, long size, const std::vector<OneilRow>& published,
            const std::vector<Result>& rows) {
  Table t;
  t.title = name + ": " + std::to_string(size) + "x" + std::to_string(size) +
            " matrix multiplication, microseconds";
  t.header = {"Algorithm", "Trials (C2070)",    "Min", "Max", "Avg",
              "Std",       "Trials (mmlab)",    "Min", "Max", "Avg",
              "Std",       "Per launch (graph)"};
  for (const OneilRow& p : published) {
    const Result& e2e =
        need(rows, at(size, in_scope(Scope::end_to_end, p.pick)), name, std::string(p.label) + " end_to_end");
    const Result* g = best(rows, at(size, in_scope(Scope::batched, p.pick)));
    t.rows.push_back({p.label, std::to_string(p.trials), num(p.min), num(p.max), num(p.avg), num(p.std),
                      std::to_string(e2e.trials), us(e2e.min_ms), us(e2e.max_ms), us(e2e.mean_ms),
                      us(e2e.std_ms), g ? us(g->median_ms) : ""});
  }
  t.note =
      "Paper: O'Neil 2013, Tesla C2070, copies in + kernel + copy out. mmlab: the end_to_end scope (copy A "
      "and "
      "B in, launch, copy C out), and the median per launch inside a CUDA graph (batched scope). " +
      provenance(rows);
  return t;
}

std::vector<Table> oneil2013_table1(const std::vector<Result>& rows) {
  return {
      oneil("oneil2013-table1", 8,
            {{"Cannon", 15, 277.5, 287.7, 281.6, 3.2, config("cannon", "single_block")},
             {"DNS, 8x8x8 block", 24, 279.7, 291.2, 282.7, 3.1, config("dns", "block3d")},
             {"DNS, 8 8x8 blocks", 26, 277.0, 287.0, 282.2, 2.6, config("dns", "planes", "tile=8")},
             {"DNS, 16 4x8 blocks", 23, 278.7, 290.1, 282.3, 2.6, config("dns", "half_planes", "tile=8")},
             {"DNS, 32 2x8 blocks", 25, 280.2, 291.5, 283.1, 2.7, config("dns", "quarter_planes", "tile=8")}},
            rows)};
}

std::vector<Table> oneil2013_table2(const std::vector<Result>& rows) {
  return {oneil(
      "oneil2013-table2", 16,
      {{"Cannon", 15, 270.4, 277.5, 274.1, 2.0, config("cannon", "tiled_atomic", "tile=8")},
       {"DNS, 8x8x8 block", 15, 273.4, 283.8, 277.4, 3.4, config("dns", "tiled_atomic", "tile=8;depth=8")},
       {"DNS, 8 8x8 blocks", 16, 282.7, 300.8, 288.2, 4.6, config("dns", "planes", "tile=8")}},
      rows)};
}

const std::map<long, std::pair<double, const char*>> kGuptaPeak = {{256, {531.1, "32x32"}},
                                                                   {512, {2148.5, "32x32"}},
                                                                   {1024, {3431.1, "16x16"}},
                                                                   {2048, {3728.8, "16x16"}},
                                                                   {4096, {3851.3, "16x16"}}};

std::vector<Table> gupta2022_table1(const std::vector<Result>& rows) {
  Table t;
  t.title = "gupta2022-table1: peak GFLOP/s and the thread-block size that reached it (tile 128x64)";
  t.header = {"N",
              "Peak GF (T4)",
              "Thread Block Size (T4)",
              "Peak GF (mmlab)",
              "Thread Block Size (mmlab)",
              "cuBLAS GF (mmlab)"};
  for (auto& [n, p] : kGuptaPeak) {
    const Result& ours = need(rows, at(n, config("tiled_ilp", "", "")), "gupta2022-table1",
                              "tiled_ilp at " + std::to_string(n));
    t.rows.push_back({std::to_string(n), paper(p.first), p.second, gf(&ours), ours.block(),
                      gf(best(rows, at(n, config("cublas"))))});
  }
  t.note =
      "Paper: Gupta & Bhalla 2022, Tesla T4. mmlab: the best tiled_ilp block at each N. " + provenance(rows);
  return {t};
}

std::vector<Table> gupta2022_table2(const std::vector<Result>& rows) {
  const std::map<long, std::pair<double, double>> figures = {{256, {531.1, 72.545636}},
                                                             {512, {2148.5, 108.841584}},
                                                             {1024, {3431.1, 132.654689}},
                                                             {2048, {3728.8, 125.668684}}};
  Table t;
  t.title = "gupta2022-table2: our implementation vs the naive one, GFLOP/s";
  t.header = {"N",
              "Our implementation (T4)",
              "Naive Implementation (T4)",
              "Speed-up (T4)",
              "tiled_ilp (mmlab)",
              "naive (mmlab)",
              "Speed-up (mmlab)"};
  for (long n : {256L, 512L, 1024L, 2048L, 4096L}) {
    const Result* ours = best(rows, at(n, config("tiled_ilp")));
    const Result* naive = best(rows, at(n, config("naive")));
    if (!ours || !naive) {
      if (n == 4096) continue;  // beyond the paper's table
      throw AnalysisError("gupta2022-table2: no tiled_ilp and naive rows at " + std::to_string(n));
    }
    auto p = figures.find(n);
    const bool has = p != figures.end();
    t.rows.push_back({std::to_string(n), has ? paper(p->second.first) : "-",
                      has ? paper(p->second.second) : "-",
                      has ? num(p->second.first / p->second.second) + "x" : "-", gf(ours), gf(naive),
                      fixed(ours->gflops / naive->gflops, 1) + "x"});
  }
  t.note = "Paper: Gupta & Bhalla 2022, Tesla T4. mmlab: the best block of each kernel at each N. " +
           provenance(rows);
  return {t};
}

std::vector<Table> gupta2022_table3(const std::vector<Result>& rows) {
  struct P {
    long n;
    double blas, cublas, ours;
  };
  const std::vector<P> published = {
      {256, 5.84, 2515.3, 508.4},    {273, kNone, 1996.1, 484.7},   {512, 17.4, 4573.6, 2032.9},
      {627, kNone, 3965.4, 2722.3},  {768, 45.3, 4333.1, 3755.7},   {907, kNone, 3760.4, 2573.1},
      {1023, 73.7, 4222.5, 3425.6},  {1024, 73.6, 4404.9, 3495.2},  {1025, 73.5, 3551.0, 2407.2},
      {1152, kNone, 4229.0, 3096.2}, {1280, kNone, 4556.0, 3505.1}, {1408, kNone, 4519.3, 3317.9},
      {1536, kNone, 4540.9, 3646.7}, {1664, kNone, 4585.2, 3505.1}, {1792, kNone, 4630.2, 3828.1},
      {1920, kNone, 4590.5, 3751.8}, {2047, 171, 4490.5, 3840.9},   {2048, 182, 4669.8, 3864.6},
      {2049, 175, 4120.7, 3314.9},   {4096, kNone, 4501.6, 3931.7}};
  Table t;
  t.title = "gupta2022-table3: BLAS vs cuBLAS vs our result, GFLOP/s";
  t.header = {"N",
              "BLAS (T4 host)",
              "CuBLAS (T4)",
              "Our Result (T4)",
              "Ours/cuBLAS (T4)",
              "eigen (mmlab)",
              "cublas (mmlab)",
              "tiled_ilp (mmlab)",
              "tiled_ilp/cublas (mmlab)"};
  for (const P& p : published) {
    const Result& cub =
        need(rows, at(p.n, config("cublas")), "gupta2022-table3", "cublas at " + std::to_string(p.n));
    const Result& ours =
        need(rows, at(p.n, config("tiled_ilp")), "gupta2022-table3", "tiled_ilp at " + std::to_string(p.n));
    t.rows.push_back({std::to_string(p.n), paper(p.blas), paper(p.cublas), paper(p.ours),
                      fixed(p.ours / p.cublas, 2), gf(best(rows, at(p.n, config("eigen")))), gf(&cub),
                      gf(&ours), fixed(ours.gflops / cub.gflops, 2)});
  }
  t.note =
      "Paper: Gupta & Bhalla 2022 (Tesla T4; BLAS on its host CPU). mmlab: eigen on the host CPU of the GPU "
      "machine, the best tiled_ilp block at each N. " +
      provenance(rows);
  return {t};
}

std::vector<Table> lecture_table18(const std::vector<Result>& rows) {
  Table t;
  t.title = "lecture-table18: evolution of matrixMul performance (GFLOP/s; peak in TFLOP/s)";
  t.header = {"GPU", "matrixMul", "CUBLAS", "peak"};
  t.rows = {{"K20C", "264", "1,171", "3.5"},
            {"P100", "1,909", "3,089", "9.3"},
            {"V100", "2,974", "7,146", "14.8"},
            {"A100", "4,303", "11,076", "19.5"}};
  auto graph_or_kernel = [&](Pred p) {
    const Result* r = best(rows, in_scope(Scope::batched, p));
    return r ? r : best(rows, in_scope(Scope::kernel, p));
  };
  const Result* sample = graph_or_kernel(at(320, 640, 320, config("tiled", "", "tile=32")));
  const Result* cub = graph_or_kernel(at(640, 320, 480, config("cublas")));
  if (!sample || !cub)
    throw AnalysisError("lecture-table18: needs tiled tile=32 at 320x640x320 and cublas at 640x320x480");
  const Ceilings* c = device_ceilings(sample->device);
  t.rows.push_back({sample->device + " (mmlab)", fixed(sample->gflops, 0), fixed(cub->gflops, 0),
                    c ? fixed(c->peak_gflops / 1000.0, 1) : "-"});
  t.note =
      "Lecture rows: the CUDA samples matrixMul (320x320 by 640x320, 32x32 blocks) and matrixMulCUBLAS "
      "(640x480 by 480x320). mmlab: tiled tile=32 and cublas at the same shapes, median per launch in a "
      "CUDA graph of back-to-back launches (as the samples average 300 launches); peak: " +
      std::string(c ? c->source : "unknown") + ". " + provenance(rows);
  return {t};
}

std::vector<Table> sgemm_methods(const std::vector<Result>& rows) {
  Table t;
  t.title = "sgemm-methods: GFLOP/s vs N for the SGEMM README's methods (best configuration of each)";
  t.header = {"N", "naive", "tiling", "CompOpt (outer_product)", "prefetch", "cuBLAS"};
  std::map<long, bool> sizes;
  for (const Result& r : rows)
    if (r.ok() && r.square()) sizes[r.m] = true;
  if (sizes.empty()) throw AnalysisError("sgemm-methods: no square problems in the given files");
  for (auto& [n, unused] : sizes)
    t.rows.push_back({std::to_string(n), gf(best(rows, at(n, config("naive")))),
                      gf(best(rows, at(n, config("tiled")))),
                      gf(best(rows, at(n, config("outer_product", "default")))),
                      gf(best(rows, at(n, config("outer_product", "prefetch")))),
                      gf(best(rows, at(n, config("cublas"))))});
  t.note = "Paper: the SGEMM README (GTX 1080 Ti) gives these only as plots, no figures to print beside. " +
           provenance(rows);
  return {t};
}

std::vector<Table> homework_blockshapes(const std::vector<Result>& rows) {
  Table speed;
  speed.title = "homework-blockshapes: naive vs tiled (1D warp tiling) by block shape at 10000^3, TFLOP/s";
  speed.header = {"Block", "Naive (V100S)", "Tiled (V100S)", "naive (mmlab)", "warptile_1d (mmlab)"};
  const std::map<std::string, std::pair<double, double>> figures = {
      {"16x16", {1.8466, 2.36836}}, {"32x8", {1.78994, 4.77511}}, {"64x4", {1.2587, 5.86398}}};
  for (auto& [block, p] : figures) {
    const Result& naive = need(rows, at(10000, config("naive", "", "block=" + block)), "homework-blockshapes",
                               "naive " + block);
    const Result& tiled = need(rows, at(10000, config("warptile_1d", "", "block=" + block)),
                               "homework-blockshapes", "warptile_1d " + block);
    speed.rows.push_back({block, paper(p.first), paper(p.second), fixed(naive.gflops / 1000, 2),
                          fixed(tiled.gflops / 1000, 2)});
  }
  const Result* cub = best(rows, at(10000, config("cublas")));
  speed.rows.push_back({"cuBLAS", "-", "~13", "-", cub ? fixed(cub->gflops / 1000, 2) + " (cublas)" : "-"});
  speed.note = "Paper: a V100S homework, one run each. mmlab: medians. " + provenance(rows);

  Table err;
  err.title = "homework-blockshapes: error check against a reference";
  err.header = {"Shape",       "Kernel",          "Error % > 1e-3 (paper)",
                "MSE (paper)", "Max abs (paper)", "Error % > 1e-3 (mmlab)",
                "MSE (mmlab)", "Max abs (mmlab)"};
  struct E {
    long m, n, k;
    const char* kernel;
    const char* paper_kernel;
    double mse, max;
    Pred pick;
  };
  const std::vector<E> checks = {
      {1041, 1247, 139, "warptile_1d 16x16", "tiled (tile 16)", 3.78281e-12, 1.52588e-05,
       config("warptile_1d", "", "block=16x16")},
      {1041, 1247, 139, "naive", "naive", 3.78185e-12, 1.52588e-05, config("naive", "", "block=16x16")},
      {535, 792, 414, "warptile_1d 32x8", "tiled (tile 32)", 2.70443e-11, 3.8147e-05,
       config("warptile_1d", "", "block=32x8")},
      {535, 792, 414, "naive", "naive", 2.69517e-11, 3.05176e-05, config("naive", "", "block=16x16")}};
  for (const E& e : checks) {
    const Result& r = need(rows, at(e.m, e.n, e.k, e.pick), "homework-blockshapes", e.kernel);
    char mse[32], mx[32], pm[32], px[32];
    std::snprintf(mse, sizeof mse, "%.3g", std::stod(r.get(Col::mse)));
    std::snprintf(mx, sizeof mx, "%.3g", std::stod(r.get(Col::max_abs_err)));
    std::snprintf(pm, sizeof pm, "%.3g", e.mse);
    std::snprintf(px, sizeof px, "%.3g", e.max);
    err.rows.push_back({std::to_string(e.m) + "x" + std::to_string(e.n) + "x" + std::to_string(e.k),
                        std::string(e.kernel) + " (paper: " + e.paper_kernel + ")", "0", pm, px,
                        fixed(100.0 * std::stod(r.get(Col::frac_err_over_1e_3)), 2), mse, mx});
  }
  err.note =
      "Paper: its inputs were uniform in [0, 1) and compared with a CPU float32 product; mmlab's are uniform "
      "in [-1, 1) and compared with float64, so the magnitudes differ by design. " +
      provenance(rows);
  return {speed, err};
}

}  // namespace

const std::vector<PaperTable>& paper_tables() {
  static const std::vector<PaperTable> t = {
      {"oneil2013-table1", "O'Neil 2013 Table 1: Cannon and DNS at 8x8", {"oneil2013/table1.csv"}},
      {"oneil2013-table2", "O'Neil 2013 Table 2: Cannon and DNS at 16x16, tiled", {"oneil2013/table2.csv"}},
      {"gupta2022-table1",
       "Gupta & Bhalla 2022 Table 1: peak GFLOP/s and best block per N",
       {"gupta2022/table1.csv"}},
      {"gupta2022-table2", "Gupta & Bhalla 2022 Table 2: ours vs naive", {"gupta2022/table2.csv"}},
      {"gupta2022-table3",
       "Gupta & Bhalla 2022 Table 3: BLAS vs cuBLAS vs ours at 20 sizes",
       {"gupta2022/table3.csv"}},
      {"lecture-table18",
       "Lecture Table 18: matrixMul sample vs CUBLAS vs peak",
       {"matrixmul-sample/matrixmul-sample.csv"}},
      {"sgemm-methods",
       "SGEMM README: naive, tiling, CompOpt, prefetch, cuBLAS vs N",
       {"sgemm-methods/sgemm-methods.csv"}},
      {"homework-blockshapes",
       "Homework: block shapes at 10000^3 and the error check",
       {"homework-blockshapes/blockshapes.csv"}},
  };
  return t;
}

const PaperTable& find_paper_table(const std::string& name) {
  std::string names;
  for (const PaperTable& t : paper_tables()) {
    if (t.name == name) return t;
    names += (names.empty() ? "" : ", ") + t.name;
  }
  throw AnalysisError("unknown table '" + name + "' (valid: " + names + ")");
}

std::vector<Table> build_paper_table(const std::string& name, const std::vector<Result>& rows) {
  static const std::map<std::string, std::function<std::vector<Table>(const std::vector<Result>&)>> builders =
      {{"oneil2013-table1", oneil2013_table1}, {"oneil2013-table2", oneil2013_table2},
       {"gupta2022-table1", gupta2022_table1}, {"gupta2022-table2", gupta2022_table2},
       {"gupta2022-table3", gupta2022_table3}, {"lecture-table18", lecture_table18},
       {"sgemm-methods", sgemm_methods},       {"homework-blockshapes", homework_blockshapes}};
  find_paper_table(name);
  return builders.at(name)(rows);
}

const Ceilings* device_ceilings(const std::string& device) {
  // REFERENCE.md: FP32 peak = 132 SMs x 128 lanes x 2 x 1.98 GHz; bandwidth: measured device-to-device
  // copies.
  static const Ceilings h100{
      66900, 3000,
      "H100 SXM: 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz; ~3.0 TB/s copy bandwidth (REFERENCE.md)"};
  static const Ceilings h200{
      66900, 4300, "H200: 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz; ~4.3 TB/s copy bandwidth (REFERENCE.md)"};
  if (device.find("H100") != std::string::npos) return &h100;
  if (device.find("H200") != std::string::npos) return &h200;
  return nullptr;
}

}  // namespace mmlab::analysis
