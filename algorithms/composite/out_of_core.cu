// out_of_core: C = A B with A, B and C in host memory, as large as the host holds, streamed
// through the GPU within a device budget: "divide them into blocks that fit, stream the blocks of A
// and B through the GPU, multiply, send the block of C back, and double-buffer" (homework report,
// question 6).
//
// The plan and its model are models/out_of_core_plan.hpp, the pipeline composite/out_of_core_worker.cuh,
// the rates measured on the GPU composite/out_of_core_rates.cuh:
// C in panels that stay on the device while computed, k in steps, A's slice of a step reused by
// every B tile of it. Per GPU three streams (copies in, products, copies out) and two buffers of
// each kind; events order them: an A slice or B tile is refilled only after the product that read
// it, a C panel is written only after its last copy out, so the next copies run under the current
// product, and a panel's tiles go out (each as soon as its last product is done) under the next
// ones. Each product runs on the engine (a lab algorithm: cuBLAS in pure FP32, the flagship's FP32
// dispatcher, or its FP32-accurate tensor-core one): cuBLAS accumulates into the panel in place
// (beta = 1, the panel's leading dimension); the flagship writes a tile that a pass adds in, or the
// panel itself where one product covers it. With `gpus` > 1, GPU g takes every g-th panel (as
// cuBLASXt spreads its tiles).
// The plan is chosen by rates measured on this GPU once per process and engine (products by side,
// copies each way by row length and both ways at once: written to the log), so a larger budget,
// whose plans include a smaller one's, is never chosen into a plan its model says is slower.
// Host memory must be pinned for the copies to overlap: pinned memory is used as it is, other
// memory is registered (cudaHostRegister) for the run. The row records what it measured: products
// and copies (compute_ms, comm_ms: the time any copy ran, overlap: the share of it hidden), what the
// link carried meanwhile (link_gbs, in and out together), the engine's calibrated rate for the
// plan's products (local_gflops) and the model's time (predicted_ms). MMLAB_OUT_OF_CORE_TIMELINE=DIR
// writes each run's operations (start, end) there, a file per problem, engine and budget.
// Example: mmlab run --algorithms out_of_core,cublasxt,cublas --size 32768 --out_of_core.budget 2G,8G
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "algorithms/composite/out_of_core_rates.cuh"
#include "algorithms/composite/out_of_core_worker.cuh"
#include "algorithms/registry.hpp"
#include "core/distributed.hpp"

namespace mmlab {
namespace {

using namespace out_of_core;

// Its engines, by the lab's names (core/distributed.hpp's kEngineNames).
const std::vector<std::string> kEngines = {"cublas", "cuda_cores", "tensor_cores"};

EngineSpec engine_of(const Params& q) {
  const std::string spec = engine_spec_of(q.text("engine"));
  if (spec.empty()) throw std::logic_error("out_of_core: engine " + q.text("engine"));
  return EngineSpec::parse(spec, algorithms::single_process());
}

bool tensor(const Params& q) { return q.text("engine") == "tensor_cores"; }

// The rates the plan is chosen by and the model predicts with: measured on the GPU on first use in
// the process, once per GPU and engine, and written to the log (so every budget's plan is chosen
// by the same rates), with the products of each plan's candidate shapes as they are asked for;
// without a GPU, the nominal ones.
struct Measured {
  std::unique_ptr<RateProbe> probe;
  StreamRates rates;
};
std::mutex rates_lock;

Measured& measured_on(const Params& q, const DeviceInfo& d) {  // under rates_lock
  static std::map<std::pair<int, std::string>, Measured> measured;
  auto [it, fresh] = measured.try_emplace({d.ordinal, q.text("engine")});
  Measured& m = it->second;
  if (!fresh) return m;
  m.probe = std::make_unique<RateProbe>(engine_of(q), d);
  m.rates = m.probe->calibrate();
  std::string line = "out_of_core: rates on GPU " + std::to_string(d.ordinal) + ", engine " + q.text("engine") +
                     ": products GFLOP/s by output side at depth " + std::to_string(kRateDepth);
  const auto list = [&](const RateCurve& c, double scale, double factor) {
    for (const auto& [x, y] : c.points)
      line += " " + (x >= kWholeRows ? std::string("whole") : std::to_string(long(x / scale))) + ":" +
              std::to_string(long(y * factor + 0.5));
  };
  list(m.rates.gflops, 1, 1), line += "; gain by depth (x1000)", list(m.rates.depth_gain, 1, 1000);
  line += "; beside products, in GB/s by row KiB", list(m.rates.in_gbs, 1024, 1);
  line += "; out", list(m.rates.out_gbs, 1024, 1), line += "; both at once (x1000)", list(m.rates.both, 1024, 1000);
  line += "; add pass " + std::to_string(long(m.rates.add_gbs)) + " GB/s\n";
  std::fputs(line.c_str(), stderr);
  return m;
}

StreamPlan plan_of(const Problem& p, const Params& q) {  // from the resolved parameters
  const Shape2 panel = q.shape("panel");
  return make_plan(p.m, p.n, p.k, panel.x, panel.y, q.integer("depth"), q.integer("tile"),
                   engine_of(q).algorithm->accumulates, nullptr);
}

std::optional<StreamPlan> plan_for(const Problem& p, const Params& q, const DeviceInfo& d, const StreamRates& rates,
                                   std::string* why, const MeasureProduct& measure = nullptr) {
  const EngineSpec e = engine_of(q);
  const WorkspaceOf ws = [&](long m, long n, long k) { return engine_workspace(e, {m, n, k, p.inputs}, d); };
  return plan_stream(p.m, p.n, p.k, std::size_t(q.bytes("budget")), int(q.integer("gpus")), q.integer("max_side"),
                     e.algorithm->accumulates, ws, rates, why, measure);
}

// The budget: as given, or (auto) what the GPU has free less a margin for the context and libraries.
Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (!d.present) return q;
  Params out = q;
  if (q.bytes("budget") == 0) {
    const double free = double(free_device_bytes()) * 0.95 - double(std::size_t(512) << 20);
    out.set("budget", std::to_string(std::max(1L, long(free / (1 << 20)))) + "M");
  }
  if (!plan_for(p, out, d, nominal_stream_rates(tensor(q)), nullptr)) return out;  // supports() says why
  const std::lock_guard<std::mutex> hold(rates_lock);
  Measured& m = measured_on(q, d);
  const MeasureProduct measure = [&](long rows, long cols, long depth) {
    const std::optional<double> g = m.probe->product_gflops(rows, cols, depth);
    if (g) m.rates.shapes[{rows, cols, depth}] = *g;
    return g;
  };
  if (const auto plan = plan_for(p, out, d, m.rates, nullptr, measure)) {
    out.set("panel", std::to_string(plan->rows) + "x" + std::to_string(plan->cols));
    out.set("depth", std::to_string(plan->depth));
    out.set("tile", std::to_string(plan->tile));
  }
  return out;
}

// The last run's operations on its first GPU, for a timeline (docs/out-of-core-notes.md): a file
// per problem, engine and budget in `dir`, overwritten by each trial; a line naming the plan, then
// the table kind,start_ms,end_ms (text, not a CSV: scripts/out-of-core-timeline reads it).
void write_timeline(const std::string& dir, const Problem& p, const Params& q, const Worker& w) {
  const std::string path = dir + "/" + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                           "-" + q.text("engine") + "-" + q.text("budget") + ".timeline.txt";
  std::ofstream f(path + ".part");
  f << "# out_of_core panel " << q.text("panel") << " depth " << q.text("depth") << " tile " << q.text("tile")
    << "\nkind,start_ms,end_ms\n" << w.timeline();
  f.close();
  if (f) std::rename((path + ".part").c_str(), path.c_str());
}

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

Reason supports(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (Reason why = fits_int(p)) return why;
  if (q.integer("gpus") > device_count())
    return "needs " + q.text("gpus") + " GPUs; this machine has " + std::to_string(device_count());
  const double free = double(free_device_bytes());
  if (double(q.bytes("budget")) > free)
    return "a device budget of " + q.text("budget") + " exceeds the " + std::to_string(long(free / (1 << 20))) +
           " MiB free";
  std::string why;  // whether any plan fits does not depend on the rates
  if (!plan_for(p, q, d, nominal_stream_rates(tensor(q)), &why)) return why;
  return std::nullopt;
}

std::size_t workspace(const Problem& p, const Params& q) {  // its own buffers per GPU (the engine's besides)
  return q.has("panel") ? plan_of(p, q).device_bytes : 0;
}

void run(const RunArgs& r) {
  State& state = *static_cast<State*>(r.state);
  const Problem& p = r.problem;
  const StreamPlan plan = plan_of(p, *r.params);
  const int gpus = int(r.params->integer("gpus")), count = device_count();
  const Pinned a(r.a, sizeof(float) * p.m * p.k), b(r.b, sizeof(float) * p.k * p.n), c(r.c, sizeof(float) * p.m * p.n);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int g = 0; g < gpus; ++g) workers.push_back(std::make_unique<Worker>(r, plan, (r.device->ordinal + g) % count, state, engine_of(*r.params)));
  std::vector<Totals> totals(gpus);
  std::vector<std::exception_ptr> failed(gpus);
  const auto share = [&](int g) {
    try {
      totals[g] = workers[g]->run(g, gpus);
    } catch (...) {
      failed[g] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;  // one host thread per further GPU; a failure is rethrown here
  for (int g = 1; g < gpus; ++g) threads.emplace_back(share, g);
  share(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  const std::lock_guard<std::mutex> hold(rates_lock);
  const StreamRates& rates = measured_on(*r.params, *r.device).rates;
  StreamedReport& out = state.last;
  out = {};
  double bytes = 0;
  for (const Totals& t : totals)  // the busiest GPU's
    out.compute_ms = std::max(out.compute_ms, t.compute_ms), out.copy_ms = std::max(out.copy_ms, t.copy_ms),
    bytes = std::max(bytes, t.bytes);
  // What the link carried while copies ran (in and out at once), and the engine's calibrated rate
  // for this plan's products.
  out.link_gbs = bytes / std::max(out.copy_ms, 1e-9) * 1e-6, out.gpus = gpus;
  out.local_gflops = rates.product_gflops(std::min(plan.rows, p.m), std::min(plan.tile, p.n), std::min(plan.depth, p.k));
  out.predicted_ms = predict_stream_ms(plan, p.m, p.n, p.k, gpus, rates);
  if (const char* dir = std::getenv("MMLAB_OUT_OF_CORE_TIMELINE")) write_timeline(dir, p, *r.params, *workers[0]);
  MMLAB_CHECK(cudaSetDevice(r.device->ordinal));
}

}  // namespace

MMLAB_ALGORITHM(out_of_core) {
  a.summary = "operands in host memory, streamed through the GPU in panels within a device budget, copies "
              "overlapped (homework report, question 6)";
  a.backend = Backend::streamed;
  a.variants = {{"default", "C in device-resident panels, A's slices reused across B's tiles, two streams of copies"}};
  a.axes = {{"budget", AxisKind::bytes, "device memory per GPU for the buffers: auto (what is free) or e.g. 8G", "auto",
             {"auto", "48M"}, {}},
            {"engine", AxisKind::choice,
             "the tile product: cublas (cublas:default, pure FP32), cuda_cores (flagship:cuda_cores, the FP32 "
             "flagship), tensor_cores (flagship:tensor_cores, the FP32-accurate flagship)",
             "cublas", kEngines, {}},
            {"max_side", AxisKind::integer,
             "the largest tile side and k step; the plan picks k whole, tiles as wide as the panel, or halves "
             "of it down to 64",
             "65536", {"65536", "64"}, {}, 1 << 20},
            {"gpus", AxisKind::integer, "GPUs from the chosen one on, each taking every gpus-th panel", "1", {"1"},
             {}, 64}};
  a.constraints = "m, n, k below 2^31; a budget that holds 64-row panels of 64 x 64 tiles; host memory for A, "
                  "B and C";
  a.resolve = resolve;
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = [] { return std::static_pointer_cast<void>(std::make_shared<State>()); };
  a.run = run;
  a.arithmetic_by = [](const Params& q) {  // its engine's
    const EngineSpec e = engine_of(q);
    return e.algorithm->arithmetic_of(e.params);
  };
  a.streamed_report = [](const RunArgs& r) { return static_cast<State*>(r.state)->last; };
  a.set_nondeterminism("default", "with the flagship engines, where they pick a kernel that splits k with atomics");
  a.is_nondeterministic = [](const Problem&, const Params& q) { return q.text("engine") != "cublas"; };
}

}  // namespace mmlab
