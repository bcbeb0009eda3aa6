// libFuzzer: mmlab-analyze's reader of results and samples, and the statistics on what it read.
// The input is a results file and a samples file (split at a line "--samples--"). Every outcome
// must be rows or an AnalysisError.
#include <cstdint>
#include <string>

#include "core/results.hpp"
#include "analysis/statistics.hpp"
#include "core/csv.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmlab::analysis;
  const auto [rows, samples] = mmlab::fuzz::split_files(data, size);
  const std::string path = mmlab::fuzz::scratch() + "/a.csv";
  mmlab::fuzz::write_file(path, rows);
  mmlab::fuzz::write_file(mmlab::samples_path_for(path), samples);
  try {
    const std::vector<Result> loaded = select_run(load_results({path}, true), "latest");
    for (const Result& r : loaded)
      if (r.ok() && !r.samples.empty()) {
        (void)mann_whitney(r.samples, loaded.front().samples.empty() ? r.samples : loaded.front().samples);
        (void)median(r.samples);
      }
  } catch (const AnalysisError&) {
  }
  return 0;
}
