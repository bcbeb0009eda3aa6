// The results columns, listed once (core/schema.hpp says what each version added, and reads and
// writes them): each a typed identifier (Col), its name in the CSV, what it holds and its unit. Code
// names a column by its identifier (Col::median_ms), so a misspelled column does not compile; only
// the readers and writers in core turn names into columns.
#pragma once

#include <array>
#include <cstddef>

namespace mmlab {

// What a column holds: text (names, versions, free text), a choice among named values (parsed into
// an enum by the reader: scope, timer, inputs, status, ...), a whole number or a decimal one. Numbers
// are empty where a row has none.
enum class ColumnType { text, choice, whole, number };

// The values of the choice columns, as the lab writes them. The enums' names are read from these lists
// (core/scope.hpp, core/schema.hpp, core/random.hpp, core/verification.cpp), so each is written once.
inline constexpr const char* kInputsValues[] = {"uniform", "wide_exponent", "ill_conditioned", "badly_scaled"};
inline constexpr const char* kPrecisionValues[] = {"fp32", "tf32"};
inline constexpr const char* kScopeValues[] = {"kernel", "batched", "end_to_end"};
inline constexpr const char* kL2FlushValues[] = {"off", "on"};
inline constexpr const char* kTrialInputsValues[] = {"verified", "own"};
inline constexpr const char* kOrderValues[] = {"sequential", "interleaved"};
inline constexpr const char* kTimerValues[] = {"blocked", "blocked_graph", "events", "graph", "host"};
inline constexpr const char* kStatusValues[] = {"ok", "skipped", "failed"};

// A choice column's values: `count` names, and whether a value may also carry a parameter (`open`:
// inputs' exp_spread:PHI, any PHI in (0, 8]). Empty for the other columns.
struct Choices {
  const char* const* names = nullptr;
  std::size_t count = 0;
  bool open = false;
};
template <std::size_t N>
constexpr Choices choices(const char* const (&names)[N], bool open = false) {
  return {names, N, open};
}

// A column: its name, what it holds, its unit ("" where it has none) and, for a choice, its values.
struct Column {
  const char* name;
  ColumnType type;
  const char* unit;
  Choices values;
};

// X(identifier, name, type, unit) for each column, in the CSV's order.
// clang-format off
#define MMLAB_RESULT_COLUMNS(X) \
  /* identity */ \
  X(schema, "schema", whole, "") \
  X(run_id, "run_id", text, "") \
  X(timestamp, "timestamp", text, "ISO 8601") \
  X(git_revision, "git_revision", text, "") \
  X(host, "host", text, "") \
  X(device, "device", text, "") \
  X(sm_count, "sm_count", whole, "SMs") \
  X(compute_capability, "compute_capability", text, "") \
  X(cuda_runtime, "cuda_runtime", text, "") \
  X(cuda_driver, "cuda_driver", text, "") \
  X(driver, "driver", text, "") \
  X(seed, "seed", whole, "") \
  /* what ran */ \
  X(algorithm, "algorithm", text, "") \
  X(variant, "variant", text, "") \
  X(params, "params", text, "axis=value;...") \
  X(resolved, "resolved", text, "axis=value;...") \
  X(plugin, "plugin", text, "path") \
  X(plugin_hash, "plugin_hash", text, "") \
  X(block_x, "block_x", whole, "threads") \
  X(block_y, "block_y", whole, "threads") \
  X(block_z, "block_z", whole, "threads") \
  X(grid_x, "grid_x", whole, "blocks") \
  X(grid_y, "grid_y", whole, "blocks") \
  X(grid_z, "grid_z", whole, "blocks") \
  X(cluster_x, "cluster_x", whole, "blocks") \
  X(cluster_y, "cluster_y", whole, "blocks") \
  X(cluster_z, "cluster_z", whole, "blocks") \
  X(shared_bytes, "shared_bytes", whole, "bytes") \
  X(device_bytes, "device_bytes", whole, "bytes") \
  X(m, "m", whole, "") \
  X(n, "n", whole, "") \
  X(k, "k", whole, "") \
  X(inputs, "inputs", choice, "") \
  X(precision, "precision", choice, "") \
  X(scope, "scope", choice, "") \
  X(repeats, "repeats", whole, "launches") \
  X(l2_flush, "l2_flush", choice, "") \
  X(trial_inputs, "trial_inputs", choice, "") \
  X(warmup, "warmup", whole, "launches") \
  X(order, "order", choice, "") \
  X(interleave_group, "interleave_group", text, "") \
  X(timer, "timer", choice, "") \
  /* across ranks (distributed algorithms; a single-GPU row says ranks 1) */ \
  X(ranks, "ranks", whole, "") \
  X(gpus, "gpus", whole, "") \
  X(grid, "grid", text, "rows x cols x layers") \
  X(engine, "engine", text, "") \
  X(compute_ms, "compute_ms", number, "ms") \
  X(comm_ms, "comm_ms", number, "ms") \
  X(wait_ms, "wait_ms", number, "ms") \
  X(overlap, "overlap", number, "fraction") \
  X(predicted_ms, "predicted_ms", number, "ms") \
  X(link_gbs, "link_gbs", number, "GB/s") \
  X(local_gflops, "local_gflops", number, "GFLOP/s") \
  X(verified_entries, "verified_entries", whole, "entries") \
  X(layout_ms, "layout_ms", number, "ms") \
  X(bound_ms, "bound_ms", number, "ms") \
  X(latency_ms, "latency_ms", number, "ms") \
  /* statistics (ms per launch) */ \
  X(trials, "trials", whole, "") \
  X(min_ms, "min_ms", number, "ms") \
  X(max_ms, "max_ms", number, "ms") \
  X(mean_ms, "mean_ms", number, "ms") \
  X(std_ms, "std_ms", number, "ms") \
  X(median_ms, "median_ms", number, "ms") \
  X(ci_lo_ms, "ci_lo_ms", number, "ms") \
  X(ci_hi_ms, "ci_hi_ms", number, "ms") \
  X(ci_coverage, "ci_coverage", number, "fraction") \
  X(gflops, "gflops", number, "GFLOP/s") \
  /* the host's own time: its median time to enqueue a trial's work, per launch (GPU rows) */ \
  X(host_ms, "host_ms", number, "ms") \
  /* clocks during the trials (GPU rows): the SM clock after each trial (median, lowest), the run's */ \
  /* reference clock (its first trial's), trials below 95% of it, power (median), temperature (max) */ \
  /* and NVML's throttle reasons seen; the energy of a trial (the mean over the trials, every GPU of the */ \
  /* job together) */ \
  X(clock_source, "clock_source", text, "") \
  X(ref_clock_mhz, "ref_clock_mhz", number, "MHz") \
  X(clock_mhz, "clock_mhz", number, "MHz") \
  X(clock_min_mhz, "clock_min_mhz", number, "MHz") \
  X(slow_trials, "slow_trials", whole, "trials") \
  X(power_w, "power_w", number, "W") \
  X(energy_j, "energy_j", number, "J") \
  X(temp_c, "temp_c", number, "degrees C") \
  X(throttle, "throttle", text, "") \
  /* outcome */ \
  X(status, "status", choice, "") \
  X(reason, "reason", text, "") \
  X(verified, "verified", whole, "1: verified, 0: failed its verification") \
  X(max_rel_err, "max_rel_err", number, "") \
  X(max_abs_err, "max_abs_err", number, "") \
  X(mse, "mse", number, "") \
  X(frac_err_over_1e_3, "frac_err_over_1e-3", number, "fraction") \
  X(max_sumabs_err, "max_sumabs_err", number, "") \
  X(mean_sumabs_err, "mean_sumabs_err", number, "") \
  /* clang-format on */
// clang-format on

// A results column by identifier.
enum class Col : std::size_t {
#define MMLAB_COLUMN_ID(id, name, type, unit) id,
  MMLAB_RESULT_COLUMNS(MMLAB_COLUMN_ID)
#undef MMLAB_COLUMN_ID
};

#define MMLAB_COLUMN_ONE(id, name, type, unit) +1
inline constexpr std::size_t kResultColumnCount = 0 MMLAB_RESULT_COLUMNS(MMLAB_COLUMN_ONE);
#undef MMLAB_COLUMN_ONE

// Each choice column's values (the lists above).
constexpr Choices choices_of(Col c) {
  switch (c) {
    case Col::inputs: return choices(kInputsValues, true);
    case Col::precision: return choices(kPrecisionValues);
    case Col::scope: return choices(kScopeValues);
    case Col::l2_flush: return choices(kL2FlushValues);
    case Col::trial_inputs: return choices(kTrialInputsValues);
    case Col::order: return choices(kOrderValues);
    case Col::timer: return choices(kTimerValues);
    case Col::status: return choices(kStatusValues);
    default: return {};
  }
}

inline constexpr std::array<Column, kResultColumnCount> kResultColumns = {{
#define MMLAB_COLUMN_ENTRY(id, name, type, unit) {name, ColumnType::type, unit, choices_of(Col::id)},
    MMLAB_RESULT_COLUMNS(MMLAB_COLUMN_ENTRY)
#undef MMLAB_COLUMN_ENTRY
}};

// A column's name in the CSV.
constexpr const char* column_name(Col c) { return kResultColumns[static_cast<std::size_t>(c)].name; }

// Every choice column has values and only they have.
constexpr bool choices_complete() {
  for (const Column& c : kResultColumns)
    if ((c.type == ColumnType::choice) != (c.values.count > 0)) return false;
  return true;
}
static_assert(choices_complete(), "a choice column without values, or values on another column");

}  // namespace mmlab
