// out_of_core: C = A B with A, B and C in host memory, as large as the host holds, streamed
// through the GPU within a device budget: "divide them into blocks that fit, stream the blocks of A
// and B through the GPU, multiply, send the block of C back, and double-buffer" (homework report,
// question 6).
//
// The plan and its model are models/out_of_core_plan.hpp, the pipeline composite/out_of_core_worker.cuh:
// C in panels that stay on the device while computed, k in steps, A's slice of a step reused by
// every B tile of it. Per GPU three streams (copies in, products, copies out) and two buffers of
// each kind; events order them: an A slice or B tile is refilled only after the product that read
// it, a C panel is written only after its last copy out, so the next copies run under the current
// product and a panel's copy out under the next panel's products. Each product runs on the engine (a lab algorithm: cuBLAS in pure FP32,
// the flagship's FP32 dispatcher, or its FP32-accurate tensor-core one) into a tile, added into the
// panel. With `gpus` > 1, GPU g takes every g-th panel (as cuBLASXt spreads its tiles).
// Host memory must be pinned for the copies to overlap: pinned memory is used as it is, other
// memory is registered (cudaHostRegister) for the run. The row records what it measured: products
// and copies (compute_ms, comm_ms, overlap: the share of the copies hidden), and its model
// (predicted_ms) from the link rate (link_gbs) and the engine's rate on one full tile
// (local_gflops), both measured on this GPU.
// Example: mmlab run --algorithms out_of_core,cublasxt,cublas --size 32768 --out_of_core.budget 2G,8G
#include <exception>
#include <thread>

#include "algorithms/composite/out_of_core_worker.cuh"
#include "algorithms/registry.hpp"

namespace mmlab {
namespace {

using namespace out_of_core;

enum class Engine { cublas, cuda_cores, tensor_cores };
const std::vector<std::string> kEngines = {"cublas", "cuda_cores", "tensor_cores"};

EngineAlgorithm engine_of(const Params& q) {
  const auto e = Engine(std::find(kEngines.begin(), kEngines.end(), q.text("engine")) - kEngines.begin());
  if (e == Engine::cublas) return {algorithms::cublas(), "default"};
  return {algorithms::flagship(), e == Engine::cuda_cores ? "cuda_cores" : "tensor_cores"};
}

// Nominal rates the plan is chosen by; the row's model takes the rates measured on the GPU.
StreamRates nominal(const Params& q) {
  const bool tensor = q.text("engine") == "tensor_cores";
  return {tensor ? 190000.0 : 55000.0, 30, 30, 0.01, tensor ? 512.0 : 256.0};
}

StreamPlan plan_of(const Problem& p, const Params& q) {  // from the resolved parameters
  const Shape2 panel = q.shape("panel");
  return make_plan(p.m, p.n, p.k, panel.x, panel.y, q.integer("depth"), q.integer("tile"), nullptr);
}

std::optional<StreamPlan> plan_for(const Problem& p, const Params& q, const DeviceInfo& d, std::string* why) {
  const EngineAlgorithm e = engine_of(q);
  const WorkspaceOf ws = [&](long m, long n, long k) { return engine_workspace(e, {m, n, k, p.inputs}, d); };
  return plan_stream(p.m, p.n, p.k, std::size_t(q.bytes("budget")), int(q.integer("gpus")), q.integer("max_side"),
                     ws, nominal(q), why);
}

// The budget: as given, or (auto) what the GPU has free less a margin for the context and libraries.
Params resolve(const Problem& p, const Params& q, const DeviceInfo& d) {
  if (!d.present) return q;
  Params out = q;
  if (q.bytes("budget") == 0) {
    const double free = double(free_device_bytes()) * 0.95 - double(std::size_t(512) << 20);
    out.set("budget", std::to_string(std::max(1L, long(free / (1 << 20)))) + "M");
  }
  if (const auto plan = plan_for(p, out, d, nullptr)) {
    out.set("panel", std::to_string(plan->rows) + "x" + std::to_string(plan->cols));
    out.set("depth", std::to_string(plan->depth));
    out.set("tile", std::to_string(plan->tile));
  }
  return out;
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
  std::string why;
  if (!plan_for(p, q, d, &why)) return why;
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
  // The model's rates: measured once per GPU, plan and engine (the first run of a configuration is
  // its verification run, untimed); then C is made again, as measure() overwrote part of it.
  const std::string key = std::to_string(r.device->ordinal) + "|" + r.params->canonical();
  auto [it, fresh] = state.rates.try_emplace(key);
  if (fresh) {
    it->second = workers[0]->measure();
    it->second.launch_ms = 0;
    totals[0] = workers[0]->run(0, gpus);
  }
  StreamedReport& out = state.last;
  out = {};
  for (const Totals& t : totals)  // the busiest GPU's
    out.compute_ms = std::max(out.compute_ms, t.compute_ms), out.copy_ms = std::max(out.copy_ms, t.copy_ms);
  out.link_gbs = it->second.in_gbs, out.local_gflops = it->second.gflops, out.gpus = gpus;
  out.predicted_ms = predict_stream_ms(plan, p.m, p.n, p.k, gpus, it->second);
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
             "the tile product: cublas (pure FP32), cuda_cores (the FP32 flagship), tensor_cores (the "
             "FP32-accurate flagship)", "cublas", kEngines, {}},
            {"max_side", AxisKind::integer,
             "the largest tile side and k step (panels up to four times taller); the plan picks at most it, "
             "halving",
             "8192", {"8192", "64"}, {}, 65536},
            {"gpus", AxisKind::integer, "GPUs from the chosen one on, each taking every gpus-th panel", "1", {"1"},
             {}, 64}};
  a.constraints = "m, n, k below 2^31; a budget that holds 64-row panels of 64 x 64 tiles; host memory for A, "
                  "B and C";
  a.resolve = resolve;
  a.supports = supports;
  a.workspace_bytes = workspace;
  a.make_state = [] { return std::static_pointer_cast<void>(std::make_shared<State>()); };
  a.run = run;
  a.streamed_report = [](const RunArgs& r) { return static_cast<State*>(r.state)->last; };
  a.set_nondeterminism("default", "with the flagship engines, where they pick a kernel that splits k with atomics");
  a.is_nondeterministic = [](const Problem&, const Params& q) { return q.text("engine") != "cublas"; };
}

}  // namespace mmlab
