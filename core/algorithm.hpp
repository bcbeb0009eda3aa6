// The plugin interface: what an algorithm file exports and what the harness may ask of it.
//
// An algorithm knows nothing of timing, CSV or the CLI; the harness knows no algorithm by name.
// This header is CUDA-free (the stream is the runtime's opaque handle), so the CPU parts of the
// lab and its tests build without nvcc.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/compiled.hpp"
#include "core/params.hpp"
#include "core/random.hpp"
#include "core/revision.hpp"
#include "core/verification.hpp"

struct CUstream_st;  // = cudaStream_t without including the CUDA runtime

namespace mmlab {

// C (m x n) = A (m x k) * B (k x n), all row-major float32, A and B made as `inputs` says.
struct Problem {
  long m = 0, n = 0, k = 0;
  Inputs inputs = Inputs::uniform;
  bool operator==(const Problem& o) const { return m == o.m && n == o.n && k == o.k && inputs == o.inputs; }
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  unsigned long long volume() const { return 1ull * x * y * z; }
};

// A row of a linear cost model (algorithms/models/): ms = c0 + c1 f1 + c2 f2 + c3 f3 for the
// configurations of `variant` with each axis value of `params` (canonical; "": every one of the
// variant's), on `kernel` where one configuration runs one of several kernels by shape ("" otherwise).
struct LinearFit {
  const char* variant;
  const char* params;
  const char* kernel;
  double c0, c1, c2, c3;
};

// A configuration's terms f1, f2, f3 and the row that weighs them (Algorithm::model_terms).
struct ModelTerms {
  std::array<double, 3> f{};
  const LinearFit* fit = nullptr;  // null: no model of this configuration
  double ms() const {
    return fit ? fit->c0 + fit->c1 * f[0] + fit->c2 * f[1] + fit->c3 * f[2] : std::numeric_limits<double>::quiet_NaN();
  }
};

// What a configuration launches; recorded in every CSV row.
struct LaunchConfig {
  Dim3 grid, block, cluster;
  std::size_t shared_bytes = 0;  // dynamic + static shared memory per block
};

// What the harness knows of the GPU (present == false on a machine without one).
// What does a product's multiply-adds, and in how many passes (issue #60): FP32 lanes once, TF32
// tensor cores (once, or three times for FP32 accuracy), FP16/BF16 tensor cores (split values, 2-9
// passes), INT8. A row's ceiling is that unit's peak at the boost clock over its passes.
enum class MathUnit { fp32, tf32_tensor, fp16_tensor, int8_tensor };
struct Arithmetic {
  MathUnit unit = MathUnit::fp32;
  int passes = 1;
};
std::string arithmetic_name(const Arithmetic& a);  // "FP32 units", "TF32 tensor cores x 3"

struct DeviceInfo {
  bool present = false;
  std::string absent_reason;  // why there is no device, when !present
  int ordinal = -1;           // the CUDA device ordinal
  std::string name = "none";
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int max_threads_per_block = 0;
  std::size_t shared_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t l2_bytes = 0;
  unsigned max_grid_y = 65535, max_grid_z = 65535;
  int clock_khz = 0;           // the SMs' boost clock
  int cuda_runtime = 0;        // e.g. 13000 = CUDA 13.0
  int cuda_driver = 0;         // the CUDA version the driver supports, same encoding
  std::string driver_version;  // the NVIDIA driver, e.g. "580.159.04" ("" when unknown)

  // FP32 lanes per SM (FFMA per clock) for the compute capabilities we know; 0 otherwise.
  int fp32_lanes_per_sm() const;
  // sm_count x lanes x 2 FLOP x clock; 0 when the lanes are unknown.
  double fp32_peak_gflops() const { return 2e-6 * sm_count * fp32_lanes_per_sm() * double(clock_khz); }
  // A ceiling no product done by `a` passes here: its unit's dense rate at the boost clock over its
  // passes (FP32: lanes x 2; TF32 tensor cores half FP16's; INT8 twice). A row whose median implies
  // more did not measure its work (pipeline.cpp); 0 where the GPU is not known.
  double peak_gflops(const Arithmetic& a) const;
};

// The H100 SXM the lab's models were fitted on, described without a GPU (present stays false: the
// fitted occupancies stand in for the device's): 132 SMs, compute capability 9.0, its launch limits.
// `mmlab terms` and the flagship's golden picks (tests/cpu/registry_test.cpp) price on it.
DeviceInfo h100_description();
// The SMs the models and dispatchers plan with: the device's, or where none is known (a machine without
// a GPU resolving its skipped rows' configurations) the H100 description's.
int planning_sms(const DeviceInfo& d);

enum class Backend {
  device,       // A, B, C are device pointers; work is enqueued on `stream`
  host,         // A, B, C are host pointers; run() returns when C is complete
  distributed,  // every rank of an MPI job takes part: make_distributed (core/distributed.hpp)
  streamed,     // A, B, C are pinned host pointers, possibly larger than the GPU: run() moves them
                // through the GPU itself and returns when C is complete in host memory. Timed from
                // host to host (scope end_to_end), verified on a sample of entries.
};

// What a streamed algorithm's last run() did, for its row: its products and copies (each summed
// over the run, whether hidden or not), and its model of the run from the rates it measured.
struct StreamedReport {
  double compute_ms = 0, copy_ms = 0;
  double predicted_ms = 0;
  double link_gbs = 0;      // host-to-device copies, GB/s
  double local_gflops = 0;  // the engine's product of one full tile, in device memory
  int gpus = 1;
};

class DistributedRun;
struct DistributedSetup;

// A configuration a composite variant chooses among (the flagship's candidates), as data.
struct Choice {
  std::string algorithm, variant, params;  // params: canonical, "" for none
};

struct Variant {
  std::string name;
  std::string summary;
  // The arithmetic its results are judged by: fp32, or tf32 for a variant that rounds its operands
  // to TF32 on purpose (verification.hpp).
  Precision precision = Precision::fp32;
  // Left out of `all` (and so of a sweep that names no variant): run only when named, e.g. a
  // tensor-core variant of the FP32 baseline, which must not stand in for it unasked.
  bool on_request = false;
  // When its C may differ from run to run, in words ("partial tiles added atomically"); empty: C is
  // bit-identical on every run (the GPU tests check it). Algorithm::is_nondeterministic narrows it.
  std::string nondeterminism = {};
  // Its fast paths need rows (leading dimensions) that are a multiple of this many floats: cuBLAS's
  // TF32 kernels load 16-byte rows (4 floats). A product of other rows still runs, slower (cuBLAS
  // TF32 at 15001^3: 122 TFLOP/s against 386 at 8192^3 on an H100, data/distributed/x4/
  // sweep-2026-11-27b); an engine that owns its operands' layout may pad them (distributed/engines.cu).
  // 1: any rows (the lab's tensor-core kernels run odd rows at the rate of even ones: padding them
  // only cost the copies, sweep-2026-11-27c).
  int row_alignment = 1;
  // A composite variant's candidates and the numbers of its rules (e.g. {"fp32_below_k", 128}), the
  // same its summary words: `mmlab list --format json` exports them for the scripts that reprice its
  // picks (scripts/pick-regret). Empty for a variant that runs its own kernels.
  std::vector<Choice> candidates = {};
  std::vector<std::pair<std::string, double>> rules = {};
};

// The variant of `q` as the algorithm's own enum, whose enumerators follow `variants` in order:
// variant names are compared here, once, and nowhere in an algorithm file.
template <class Kind>
Kind variant_kind(const std::vector<Variant>& variants, const Params& q) {
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (variants[i].name == q.variant()) return Kind(i);
  throw std::logic_error("unknown variant '" + q.variant() + "' reached an algorithm");
}

// Everything run() receives. The buffers belong to the harness.
struct RunArgs {
  const float* a = nullptr;  // (m, k)
  const float* b = nullptr;  // (k, n)
  float* c = nullptr;        // (m, n)
  Problem problem;
  const Params* params = nullptr;
  void* workspace = nullptr;  // workspace_bytes(problem, params) bytes, device memory
  CUstream_st* stream = nullptr;
  void* state = nullptr;               // what make_state() returned, e.g. a library handle
  const DeviceInfo* device = nullptr;  // the GPU it runs on (SM count, limits)
  // For an algorithm that `accumulates` (out_of_core's products into its panels): C's leading
  // dimension (0: n) and C += A B instead of C = A B. The harness leaves both as they are.
  long ldc = 0;
  bool accumulate = false;
};

using Reason = std::optional<std::string>;  // nullopt: supported

struct Algorithm {
  std::string name;     // = file stem = CLI value = CSV value
  std::string summary;  // one line, with its source paper
  std::string source;   // the file that holds it (a plugin's: the shared library)
  std::string plugin_hash;  // a plugin's: its file's hash (core/plugin.hpp); empty for the built-ins
  Backend backend = Backend::device;
  std::vector<Variant> variants;  // at least one
  std::vector<Axis> axes;
  std::string constraints;  // the limits supports() enforces, in words (the compiled list is added)
  // The configurations kernels were compiled for (see compiled.hpp); empty: any value runs.
  CompiledSet compiled;

  // What a configuration runs as: e.g. a `tuned` variant resolves to the tile, warp tile and split
  // it picks for the problem and the device. Every hook below, and the CSV's `resolved` column,
  // receive the resolved parameters. Optional: null means "as given".
  std::function<Params(const Problem&, const Params&, const DeviceInfo&)> resolve;
  // Reason the configuration cannot run, or nullopt. Optional: null means "always".
  // The harness itself already rejects points outside `compiled`, blocks over the device's
  // thread limit, shared memory over its opt-in limit and grids over its grid limits.
  std::function<Reason(const Problem&, const Params&, const DeviceInfo&)> supports;
  std::function<LaunchConfig(const Problem&, const Params&, const DeviceInfo&)> launch_config;
  std::function<double(const Problem&)> flops;                                // null: 2 m n k
  std::function<std::size_t(const Problem&, const Params&)> workspace_bytes;  // null: none
  std::function<std::shared_ptr<void>()> make_state;                          // null: none
  // Its own model of a resolved configuration's time in ms, where it has one (a dispatcher weighs
  // candidates by it; every row records it as predicted_ms). NaN: no model of this configuration.
  // Optional.
  std::function<double(const Problem&, const Params&, const DeviceInfo&)> predict_ms;
  // Its linear model's terms of a resolved configuration and the fitted row that weighs them
  // (algorithms/models/; predict_ms is then their ms()). scripts/fit-flagship reads them through
  // `mmlab terms`. Optional: null where the model is not of that form or there is none.
  std::function<ModelTerms(const Problem&, const Params&, const DeviceInfo&)> model_terms;
  std::function<void(const RunArgs&)> run;
  // run() honours RunArgs::ldc and RunArgs::accumulate (every variant). False: it writes C (m x n, dense).
  bool accumulates = false;
  // Backend::streamed: its report of the last run() with these arguments. Optional: null means
  // the row has no phases (a library call).
  std::function<StreamedReport(const RunArgs&)> streamed_report;
  // Backend::distributed: this rank's run of a configuration, its inputs made (instead of run).
  std::function<std::unique_ptr<DistributedRun>(const DistributedSetup&)> make_distributed;
  // The algorithm that runs a configuration's products where that is another one's (a distributed
  // algorithm's engine: its `engine` value's spec, core/invocation.hpp), so that where it runs (GPUs
  // or the host) is that algorithm's, never read from a name. Optional: null means itself.
  std::function<const Algorithm*(const Params&)> engine_of;
  // Why it cannot run on this machine at all (a library it loads at run time is missing), in words;
  // `mmlab list` says it and supports() refuses every configuration with it. Optional: null or ""
  // means it is available.
  std::function<std::string()> unavailable;
  // Which (resolved) configurations of a variant with a `nondeterminism` are so, e.g. only those that
  // split k. Optional: null means all of them.
  std::function<bool(const Problem&, const Params&)> is_nondeterministic;
  // Whether C is bit-identical from run to run for this resolved configuration.
  bool deterministic(const Problem& p, const Params& resolved) const {
    const Variant* v = find_variant(resolved.variant());
    if (!v || v->nondeterminism.empty()) return true;
    return is_nondeterministic && !is_nondeterministic(p, resolved);
  }

  double flop_count(const Problem& p) const {
    return flops ? flops(p) : 2.0 * double(p.m) * double(p.n) * double(p.k);
  }
  std::size_t workspace(const Problem& p, const Params& q) const {
    return workspace_bytes ? workspace_bytes(p, q) : 0;
  }
  // The arithmetic a configuration's results are judged by, where an axis decides it (e.g. the
  // distributed algorithms' TF32 engine). Optional: null means its variant's.
  std::function<Precision(const Params&)> precision_by;
  // What does a configuration's multiply-adds (its ceiling's unit and passes). Optional: null means
  // TF32 tensor cores once for a tf32 configuration, FP32 lanes otherwise.
  std::function<Arithmetic(const Params&)> arithmetic_by;
  Arithmetic arithmetic_of(const Params& q) const {
    if (arithmetic_by) return arithmetic_by(q);
    return precision_of(q) == Precision::tf32 ? Arithmetic{MathUnit::tf32_tensor, 1} : Arithmetic{};
  }
  const Variant* find_variant(const std::string& v) const;
  std::string variant_names() const;  // "default, tf32, ..." for messages
  Precision precision_of(const Params& q) const {
    if (precision_by) return precision_by(q);
    const Variant* v = find_variant(q.variant());
    return v ? v->precision : Precision::fp32;
  }
  const Axis* find_axis(const std::string& a) const;
  // Marks `variant` nondeterministic, in words (std::logic_error for an unknown variant).
  void set_nondeterminism(const std::string& variant, std::string text);
  // The compiled set, filled in: each axis it fixes takes its values from it (what `all` and the
  // GPU tests sweep), and the constraints end with its listing.
  void set_compiled(CompiledSet set);
};

// "algorithms/tiled.cu", "algorithms/composite/flagship.cu": the file's path in the repository (the
// folders under the source tree), from the compiler's path of the file.
inline std::string algorithm_source(const char* file) { return repository_path(file); }

// Defines mmlab::algorithms::NAME(): the descriptor, built once, named NAME with the file that
// holds it as its source; the body that follows the macro fills in the rest of `a`:
//   MMLAB_ALGORITHM(tiled) { a.summary = "..."; a.variants = ...; a.run = run; }
#define MMLAB_ALGORITHM(NAME)                \
  namespace algorithms {                     \
  void describe_##NAME(Algorithm& a);        \
  const Algorithm& NAME() {                  \
    static const Algorithm a = [] {          \
      Algorithm a;                           \
      a.name = #NAME;                        \
      a.source = algorithm_source(__FILE__); \
      describe_##NAME(a);                    \
      return a;                              \
    }();                                     \
    return a;                                \
  }                                          \
  }                                          \
  void algorithms::describe_##NAME(Algorithm& a)

// The algorithms a program offers, in listing order. A value the program is given (mmlab's main
// joins algorithms/registry.hpp's list and distributed/registry.hpp's; the fuzz targets pass a
// small one), as CUTLASS's profiler is given its manifest: never a symbol resolved at link time.
class Registry {
 public:
  Registry() = default;
  // The lists joined in order; a name given twice is a std::logic_error.
  Registry(std::initializer_list<std::vector<const Algorithm*>> lists);
  const std::vector<const Algorithm*>& all() const { return all_; }
  const Algorithm* find(const std::string& name) const;  // nullptr when absent
  std::string names() const;                             // "naive, tiled, ..." for messages
  // Algorithms of the lab this build left out, and why (`cutlass` without CUTLASS's headers): a name
  // asked for is then "not built here", not unknown.
  void add_not_built(const std::string& name, const std::string& why) { not_built_[name] = why; }
  const std::map<std::string, std::string>& not_built() const { return not_built_; }
  // The message for a name that is no algorithm here: why it was not built, or the valid names.
  std::string unknown(const std::string& name) const;

 private:
  std::vector<const Algorithm*> all_;
  std::map<std::string, std::string> not_built_;
};

}  // namespace mmlab
