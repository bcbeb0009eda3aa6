// --resume: which configurations the output already holds; samples of unfinished ones are dropped.
#include <cstdio>
#include <fstream>

#include "harness/runner.hpp"
#include "harness/schema.hpp"

namespace mmlab {

std::set<std::string> recorded_keys(const RunPlan& plan) {
  std::set<std::string> keys, run_ids;
  std::ifstream probe(plan.output);
  if (!probe) return keys;
  probe.close();
  const CsvTable t = read_csv(plan.output);
  if (t.header.empty()) return keys;
  if (t.header != result_columns())
    throw UsageError(plan.output + ": existing file has a different header; cannot resume into it");
  auto col = [&](const char* name) { return std::size_t(t.column(name)); };
  for (const CsvRow& r : t.rows) {
    keys.insert(configuration_key(r[col("algorithm")], r[col("variant")], r[col("params")],
                                  std::stol(r[col("m")]), std::stol(r[col("n")]), std::stol(r[col("k")]),
                                  r[col("scope")], r[col("l2_flush")]));
    run_ids.insert(r[col("run_id")]);
  }
  std::ifstream sp(plan.samples_output);
  if (!sp) return keys;
  sp.close();
  const CsvTable s = read_csv(plan.samples_output);
  std::vector<CsvRow> keep;
  for (const CsvRow& r : s.rows)
    if (run_ids.count(r[0])) keep.push_back(r);
  if (keep.size() == s.rows.size()) return keys;
  const std::string tmp = plan.samples_output + ".tmp";
  {
    std::ofstream o(tmp, std::ios::trunc);
    o << csv_line(sample_columns());
    for (const CsvRow& r : keep) o << csv_line(r);
    if (!o) throw UsageError(tmp + ": cannot be written");
  }
  std::rename(tmp.c_str(), plan.samples_output.c_str());
  std::fprintf(stderr, "mmlab: dropped %zu samples of unfinished configurations from %s\n",
               s.rows.size() - keep.size(), plan.samples_output.c_str());
  return keys;
}

}  // namespace mmlab
