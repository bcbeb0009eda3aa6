// flagship: one dispatcher per accuracy class, over the lab's own kernels. For each problem it
// prices every candidate with a cost model and runs the cheapest; the row's `resolved` column names
// what ran (algorithm:variant:parameters).
//   cuda_cores    FP32 on CUDA cores: register_tiled's tuned choice (its own fitted model), streamk
//                 (pure and hybrid, three tile shapes), skinny where m or n is at most 64.
//   tensor_cores  FP32-accurate on tensor cores: tf32x3 half3 (a split pass, then FP16 products) or
//                 wgmma3 (split inside the k loop: no pass, no extra launches), or the cuda_cores
//                 choice where neither pays (small work) or where their error would exceed SGEMM's
//                 (k below 128: short sums, docs/tf32x3-notes.md).
// The models (kCandidates below) take the device's SM count and each kernel's grid (occupancy
// queried on the device); their coefficients were fitted by scripts/fit-flagship to the training
// shapes of experiments/flagship-training.ini, not to the shapes the dispatchers are judged on
// (experiments/random-shapes.ini and experiments/flagship-held-out.ini). docs/flagship-notes.md,
// round three.
// Example: mmlab run --algorithms flagship,cublas --shape 439x401x939,16x4096x4096 --size 4096
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "algorithms/kernels/common.cuh"
#include "algorithms/registry.hpp"

namespace mmlab {
namespace {

enum class Kind { cuda_cores, tensor_cores };  // in the order of kVariants
const std::vector<Variant> kVariants = {
    {"cuda_cores",
     "FP32 on CUDA cores: the cheapest of register_tiled, streamk and skinny by their cost models"},
    {"tensor_cores",
     "FP32-accurate on tensor cores: tf32x3 half3 or wgmma3, or cuda_cores where they do not pay"}};

// How a candidate's time is modelled: ms = c0 + c1 f1 + c2 f2 (scripts/fit-flagship mirrors these).
enum class Model {
  own,       // f1: the algorithm's own predict_ms (register_tiled tuned), calibrated
  stream_k,  // f1: k tiles per block of the persistent grid; f2: A's elements transposed (M)
  bytes,     // f1: MB of the operand streamed; f2: GFLOP (skinny's inner loop is shared-memory bound)
  tensor,    // f1: GFLOP; f2: elements of A and B the split pass reads (M)
};

struct Candidate {
  const Algorithm& (*algorithm)();
  const char* variant;
  const char* params;  // canonical, "" for none
  Kind kind;           // the dispatcher that may run it (cuda_cores' are the tensor one's fallback)
  Model model;
  double c0, c1, c2;  // fitted (scripts/fit-flagship)
};

// clang-format off
const Candidate kCandidates[] = {
  {algorithms::register_tiled, "tuned", "", Kind::cuda_cores, Model::own, 0.00427038, 1.01624, 0},
  {algorithms::streamk, "pure", "tile=128x128;warp=32x64;depth=32;stages=3", Kind::cuda_cores, Model::stream_k, 0.0608061, 0.00523175, 0.00691861},
  {algorithms::streamk, "hybrid", "tile=128x128;warp=32x64;depth=32;stages=3", Kind::cuda_cores, Model::stream_k, 0.0597391, 0.00544786, 0.00670475},
  {algorithms::streamk, "pure", "tile=128x256;warp=32x128;depth=32;stages=3", Kind::cuda_cores, Model::stream_k, 0.0805163, 0.00653156, 0.00512454},
  {algorithms::streamk, "hybrid", "tile=128x256;warp=32x128;depth=32;stages=3", Kind::cuda_cores, Model::stream_k, 0.0814573, 0.00632124, 0.00517343},
  {algorithms::streamk, "pure", "tile=64x64;warp=32x64;depth=32;stages=4", Kind::cuda_cores, Model::stream_k, 0.051866, 0.0028613, 0.00575128},
  {algorithms::skinny, "default", "", Kind::cuda_cores, Model::bytes, 0.0177505, 0.000931128, 0.0982482},
  {algorithms::tf32x3, "half3", "stages=3;split=auto", Kind::tensor_cores, Model::tensor, 0.04836, 0.00545105, 0.00582873},
  {algorithms::tf32x3, "wgmma3", "stages=3", Kind::tensor_cores, Model::tensor, 0.0392685, 0.0091848, 0.0079352},
};
// clang-format on

// Below this k the three-product split's error exceeds SGEMM's (short sums): FP32 instead.
constexpr long kShortestAccurateK = 128;

Params parse_params(const char* variant, const std::string& canonical) {
  Params q(variant);
  std::size_t at = 0;
  while (at < canonical.size()) {
    const std::size_t end = std::min(canonical.find(';', at), canonical.size()), eq = canonical.find('=', at);
    q.set(canonical.substr(at, eq - at), canonical.substr(eq + 1, end - eq - 1));
    at = end + 1;
  }
  return q;
}

// A candidate's parameters as its algorithm resolves them for the problem.
Params candidate_params(const Candidate& c, const Problem& p, const DeviceInfo& d) {
  const Algorithm& a = c.algorithm();
  Params q = parse_params(c.variant, c.params);
  return a.resolve ? a.resolve(p, q, d) : q;
}

double predict(const Candidate& c, const Problem& p, const Params& q, const DeviceInfo& d) {
  const Algorithm& a = c.algorithm();
  double f1 = 0, f2 = 0;
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  switch (c.model) {
    case Model::stream_k: {
      const Shape2 tile = q.shape("tile");
      const double tiles = std::ceil(m / tile.x) * std::ceil(n / tile.y),
                   iters = std::ceil(k / q.integer("depth"));
      const double blocks = a.launch_config(p, q, d).grid.x;
      // hybrid: whole waves but the last run data-parallel, the rest split evenly (algorithms/streamk.cu)
      double dp = 0;
      if (q.variant() == "hybrid")
        dp = std::fmod(tiles, blocks) == 0 ? tiles : std::max(0.0, (std::floor(tiles / blocks) - 1) * blocks);
      f1 = dp / blocks * iters + std::ceil((tiles - dp) * iters / blocks);
      f2 = m * k / 1e6;
      break;
    }
    case Model::bytes:
      f1 = 4 * (p.m <= 64 ? k * n : m * k) / 1e6;
      f2 = 2 * m * n * k / 1e9;
      break;
    case Model::tensor:
      f1 = 2 * m * n * k / 1e9;
      f2 = (m * k + k * n) / 1e6;
      break;
    case Model::own:
      if (!a.predict_ms) return std::numeric_limits<double>::infinity();
      f1 = a.predict_ms(p, q, d);
      break;
  }
  return c.c0 + c.c1 * f1 + c.c2 * f2;
}

// What a candidate would need to run here: its supports and the harness's launch limits it cares about.
bool can_run(const Candidate& c, const Problem& p, const Params& q, const DeviceInfo& d) {
  const Algorithm& a = c.algorithm();
  if (a.compiled.missing(a.name, q)) return false;
  if (a.supports && a.supports(p, q, d)) return false;
  return true;
}

std::string encode(const Candidate& c, const Params& q) {
  return c.algorithm().name + ":" + q.variant() + (q.canonical().empty() ? "" : ":" + q.canonical());
}

// The pick for a problem: the cheapest candidate of this dispatcher's kind (and, for tensor_cores,
// cuda_cores' as well), by the models; `ms` receives its predicted time.
Params choose(const Problem& p, const Params& q, const DeviceInfo& d, double* ms = nullptr) {
  const Kind kind = variant_kind<Kind>(kVariants, q);
  double best = std::numeric_limits<double>::infinity();
  std::string pick;
  for (const Candidate& c : kCandidates) {
    const bool allowed =
        c.kind == Kind::cuda_cores || (kind == Kind::tensor_cores && p.k >= kShortestAccurateK);
    if (!allowed) continue;
    const Params cq = candidate_params(c, p, d);
    if (!can_run(c, p, cq, d)) continue;
    const double t = predict(c, p, cq, d);
    if (t < best) best = t, pick = encode(c, cq);
  }
  if (ms) *ms = best;
  Params out = q;
  out.set("kernel", pick.empty() ? "none" : pick);
  return out;
}

Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) { return choose(p, q, d); }

// The chosen algorithm and its parameters, from the resolved `kernel` ("algorithm:variant:params").
struct Pick {
  const Algorithm* algorithm = nullptr;
  Params params;
};
Pick pick_of(const Params& q) {
  const std::string text = q.text("kernel");
  const std::size_t a = text.find(':'), v = text.find(':', a + 1);
  Pick out;
  if (a == std::string::npos) return out;
  const std::string name = text.substr(0, a),
                    variant = text.substr(a + 1, v == std::string::npos ? v : v - a - 1);
  for (const Algorithm* x : algorithms::single_process())
    if (x->name == name) out.algorithm = x;
  out.params = parse_params(variant.c_str(), v == std::string::npos ? "" : text.substr(v + 1));
  return out;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  const Pick k = pick_of(q);
  if (!k.algorithm) return "no candidate kernel can run this problem here";
  return k.algorithm->supports ? k.algorithm->supports(p, k.params, d) : std::nullopt;
}

// The states of the algorithms it has run (library handles, tensor maps), made as they are needed.
struct States {
  std::mutex lock;
  std::map<const Algorithm*, std::shared_ptr<void>> of;
  void* get(const Algorithm& a) {
    std::lock_guard<std::mutex> hold(lock);
    auto [it, fresh] = of.try_emplace(&a);
    if (fresh && a.make_state) it->second = a.make_state();
    return it->second.get();
  }
};

void run(const RunArgs& r) {
  const Pick k = pick_of(*r.params);
  RunArgs sub = r;
  sub.params = &k.params;
  sub.state = static_cast<States*>(r.state)->get(*k.algorithm);
  k.algorithm->run(sub);
}

}  // namespace

MMLAB_ALGORITHM(flagship) {
  a.summary = "dispatchers, one per accuracy class: each problem's cheapest lab kernel by fitted cost models";
  a.variants = kVariants;
  a.axes = {{"kernel",
             AxisKind::choice,
             "the kernel it runs: auto, the models' pick (the resolved column names it)",
             "auto",
             {"auto"},
             {}}};
  a.constraints = "any m, n, k that one of its candidates runs";
  a.resolve = resolve;
  a.predict_ms = [](const Problem& p, const Params& q, const DeviceInfo& d) {
    double ms = 0;
    choose(p, Params(q.variant()), d, &ms);
    return ms;
  };
  a.supports = supports;
  a.launch_config = [](const Problem& p, const Params& q, const DeviceInfo& d) {
    const Pick k = pick_of(q);
    return k.algorithm && k.algorithm->launch_config ? k.algorithm->launch_config(p, k.params, d)
                                                     : LaunchConfig{};
  };
  a.workspace_bytes = [](const Problem& p, const Params& q) {
    const Pick k = pick_of(q);
    return k.algorithm ? k.algorithm->workspace(p, k.params) : std::size_t(0);
  };
  a.make_state = [] { return std::static_pointer_cast<void>(std::make_shared<States>()); };
  a.run = run;
  for (const Variant& v : kVariants)
    a.set_nondeterminism(v.name,
                         "when it picks a kernel that splits k with atomics (register_tiled split > 1, "
                         "tf32x3 half3 split > 1)");
  a.is_nondeterministic = [](const Problem& p, const Params& q) {
    const Pick k = pick_of(q);
    return k.algorithm && !k.algorithm->deterministic(p, k.params);
  };
}

}  // namespace mmlab
