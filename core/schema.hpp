// The results CSV schema (its columns listed once in core/columns.hpp): mmlab writes them and core's
// reader reads them (README, "The CSV"); here, what each version added, the choices' values and the
// checks of an existing file. Version 9 added `trial_inputs` (issue #81): `own` where every timed trial
// ran on inputs of its own, A and B made again from a seed of its own outside the clock (with l2_flush
// off they start in the L2 as their writes left it), `verified` where the trials repeated the
// verification's inputs (every row before; empty in older files and where nothing was timed). Version 8 added `layout_ms` (a distributed row's moves of A, B and C between
// the starting layout, 2D blocks over the ranks, and its schedule's), `bound_ms` (the least time its
// decomposition allows here), `latency_ms` (a message's fixed cost on its links, in its model) and `energy_j` (the GPUs' energy per trial, from NVML's counter), an
// `energy_j` column to the samples, and made a distributed row's `engine` the full spec of what ran its
// local products (it held the engine axis's value; the analysis reads older rows' values as the specs
// they named). Version 7 added `timer` (how the trials were timed: core/scope.hpp; GPU rows of
// older files were timed with events on an idle stream, `events` or `graph`, which the analysis fills
// in) and `host_ms` (the median of the host's time to enqueue a trial's work), and a `host_ms` column
// to the samples. Version 6 added `plugin` and `plugin_hash` (the shared library an algorithm
// came from and a hash of the file; empty for the built-ins). Version 5 added the trial order (`order`:
// sequential or interleaved, and `interleave_group`, shared by the configurations timed round-robin: trial i
// of each ran in round i), `ci_coverage` (the exact coverage of the median's CI; the CI is empty below 3
// trials, std below 2) and the clocks (`clock_source` ... `throttle`), and a `clock_mhz` column to the
// samples. Version 4 added `inputs` (what A and B are made of; uniform before), `precision` (fp32, or tf32
// for a variant judged by the TF32 tolerance; fp32 before) and the error relative to sum |a b|
// (max_sumabs_err, mean_sumabs_err). Version 3 added the distributed columns (ranks ... verified_entries).
// Version 2 added `schema`, `resolved` and `cuda_driver`, made `driver` the NVIDIA driver version, wrote
// versions as text
// ("sm_90", "CUDA 13.0"), `l2_flush` as off/on and left `verified` empty where nothing ran. The analysis
// still reads versions 1 (no `schema` column), 2 and 3, translating them on the way in.
#pragma once

#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/columns.hpp"
#include "core/csv.hpp"
#include "core/params.hpp"
#include "core/random.hpp"
#include "core/scope.hpp"
#include "core/verification.hpp"

namespace mmlab {

inline constexpr const char* kSchemaVersion = "9";
inline constexpr long long kSchemaVersionNumber = 9;  // the same, as the `schema` column's number
static_assert(kSchemaVersion[0] == '0' + kSchemaVersionNumber && kSchemaVersion[1] == '\0', "one schema version");

// The type's word, as the lab's JSON and Python name it.
inline const char* column_type_name(ColumnType t) {
  switch (t) {
    case ColumnType::text: return "text";
    case ColumnType::choice: return "choice";
    case ColumnType::whole: return "whole";
    case ColumnType::number: return "number";
  }
  return "text";
}

// The column named `name`, or null.
inline const Column* result_column(const std::string& name) {
  for (const Column& c : kResultColumns)
    if (name == c.name) return &c;
  return nullptr;
}

inline const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> out;
    for (const Column& c : kResultColumns) out.push_back(c.name);
    return out;
  }();
  return columns;
}

inline bool added_in_v9(const std::string& c) { return c == "trial_inputs"; }
inline bool added_in_v8(const std::string& c) {
  return c == "layout_ms" || c == "bound_ms" || c == "latency_ms" || c == "energy_j";
}
inline bool added_in_v7(const std::string& c) { return c == "timer" || c == "host_ms"; }
inline bool added_in_v6(const std::string& c) { return c == "plugin" || c == "plugin_hash"; }
inline bool added_in_v5(const std::string& c) {
  for (const char* x : {"order", "interleave_group", "ci_coverage", "clock_source", "ref_clock_mhz",
                        "clock_mhz", "clock_min_mhz", "slow_trials", "power_w", "temp_c", "throttle"})
    if (c == x) return true;
  return false;
}
// The columns version 4 added, version 3 added (the distributed group), and version 2 added to version 1.
inline bool added_in_v4(const std::string& c) {
  return c == "inputs" || c == "precision" || c == "max_sumabs_err" || c == "mean_sumabs_err";
}
inline bool added_in_v3(const std::string& c) {
  for (const char* x : {"ranks", "gpus", "grid", "engine", "compute_ms", "comm_ms", "wait_ms", "overlap",
                        "predicted_ms", "link_gbs", "local_gflops", "verified_entries"})
    if (c == x) return true;
  return false;
}
inline bool added_in_v2(const std::string& c) {
  return c == "schema" || c == "resolved" || c == "cuda_driver";
}

// The columns of an older version's files (the same order, without what came later).
inline std::vector<std::string> result_columns_of(int version) {
  std::vector<std::string> out;
  for (const std::string& c : result_columns())
    if (!(version < 9 && added_in_v9(c)) && !(version < 8 && added_in_v8(c)) && !(version < 7 && added_in_v7(c)) && !(version < 6 && added_in_v6(c)) && !(version < 5 && added_in_v5(c)) &&
        !(version < 4 && added_in_v4(c)) && !(version < 3 && added_in_v3(c)) &&
        !(version < 2 && added_in_v2(c)))
      out.push_back(c);
  return out;
}

// The version of a file whose header holds the columns `has` says it holds: the latest whose columns are
// all there (version 1 had no `schema`).
template <class Has>
int schema_version_of(const Has& has) {
  for (int v = std::atoi(kSchemaVersion); v > 1; --v) {
    bool all = true;
    for (const std::string& c : result_columns_of(v)) all = all && has(c);
    if (all) return v;
  }
  return 1;
}

// A row's outcome (its `status` column). `interrupted`: a configuration stopped by Ctrl-C, which the
// harness reports but writes no row of.
enum class Status { ok, skipped, failed, interrupted };

// The `status` column's values (core/columns.hpp), in the order of the enum; `interrupted` is never written.
inline const char* status_name(Status s) {
  return s == Status::interrupted ? "interrupted" : kStatusValues[static_cast<int>(s)];
}

// The status a row's text names (ok, skipped or failed), or nothing.
inline std::optional<Status> parse_status(const std::string& text) {
  for (Status s : {Status::ok, Status::skipped, Status::failed})
    if (text == status_name(s)) return s;
  return std::nullopt;
}

// A trial order's name (the `order` column): one configuration's trials after another, or round-robin.
inline const char* order_name(bool interleaved) { return kOrderValues[interleaved ? 1 : 0]; }

// The values a choice column takes (its Column's, core/columns.hpp); `open` where a value may also
// carry a parameter (inputs: exp_spread:PHI, any PHI in (0, 8]). Empty for a column that is not a choice.
struct Domain {
  std::vector<std::string> values;
  bool open = false;
};
inline Domain column_domain(const std::string& name) {
  Domain d;
  if (const Column* c = result_column(name)) {
    d.values.assign(c->values.names, c->values.names + c->values.count);
    d.open = c->values.open;
  }
  return d;
}
// The column's values as an error message lists them ("kernel, batched, end_to_end").
inline std::string domain_names(const std::string& column) {
  if (column == "inputs") return inputs_names();
  std::string out;
  for (const std::string& v : column_domain(column).values) out += (out.empty() ? "" : ", ") + v;
  return out;
}
// Whether `value` is one of the column's values (or, for an open one, of its kinds with a parameter).
inline bool in_domain(const std::string& column, const std::string& value) {
  if (column == "inputs") return parse_inputs_name(value).has_value();
  const Domain d = column_domain(column);
  for (const std::string& v : d.values)
    if (v == value) return true;
  return false;
}

// The columns that hold numbers (whole or decimal; empty where a row has none): what a reader may
// parse as numbers, and what the writers and --resume check in an existing file.
inline bool numeric_column(const std::string& name) {
  const Column* c = result_column(name);
  return c && (c->type == ColumnType::whole || c->type == ColumnType::number);
}

// A row of `header` that this mmlab could have written: its `schema` (where the header has one) is
// this version, and its numeric columns hold numbers or nothing. The check the writers make on an
// existing file's last rows and --resume on all of them. UsageError naming `where` and the column.
inline void check_existing_row(const CsvRow& header, const CsvRow& row, const std::string& where) {
  for (std::size_t i = 0; i < header.size() && i < row.size(); ++i) {
    if (header[i] == "schema" && row[i] != kSchemaVersion)
      throw UsageError(where + ": column 'schema': '" + row[i] + "': a row of another schema (this mmlab writes " +
                       kSchemaVersion + "); left untouched: write to another file");
    if (row[i].empty() || !numeric_column(header[i])) continue;
    char* end = nullptr;
    std::strtod(row[i].c_str(), &end);
    if (end == row[i].c_str() || *end)
      throw UsageError(where + ": column '" + header[i] + "': '" + row[i] +
                       "' is not a number; not a row mmlab writes (left untouched)");
  }
}

// The samples: a line per trial; clock_mhz (version 5) is the SM clock sampled after it, host_ms
// (version 7) the host's time to enqueue its work, per launch, energy_j (version 8) the GPUs' energy
// over it; each empty where none was measured (host algorithms, older files).
inline constexpr std::array<Column, 6> kSampleColumns = {{{"run_id", ColumnType::text, "", {}},
                                                          {"trial", ColumnType::whole, "", {}},
                                                          {"ms", ColumnType::number, "ms", {}},
                                                          {"clock_mhz", ColumnType::number, "MHz", {}},
                                                          {"host_ms", ColumnType::number, "ms", {}},
                                                          {"energy_j", ColumnType::number, "J", {}}}};
// The samples' column named `name`, or null.
inline const Column* sample_column(const std::string& name) {
  for (const Column& c : kSampleColumns)
    if (name == c.name) return &c;
  return nullptr;
}
inline const std::vector<std::string>& sample_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> out;
    for (const Column& c : kSampleColumns) out.push_back(c.name);
    return out;
  }();
  return columns;
}

}  // namespace mmlab
