// libFuzzer: what mmlab reads of its own output, --resume (both files) and the writer's checks and
// repairs on opening. The input is a results file and a samples file (split at a line
// "--samples--"). Every outcome must be keys or a UsageError, and a refused file is left as it
// was (a finding otherwise: std::abort).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/schema.hpp"
#include "harness/resume.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmlab;
  const auto [rows, samples] = fuzz::split_files(data, size);
  RunPlan plan;
  plan.output = fuzz::scratch() + "/r.csv";
  plan.samples_output = samples_path_for(plan.output);
  fuzz::write_file(plan.output, rows);
  fuzz::write_file(plan.samples_output, samples);
  try {
    CsvWriter writer(plan.output, result_columns(), OpenMode::append);
    (void)recorded_keys(plan);
  } catch (const UsageError&) {
    // The writer refuses before touching the file; resume refuses before rewriting the samples.
    if (fuzz::read_file(plan.samples_output) != samples) std::abort();
  }
  fuzz::write_file(plan.samples_output, samples);
  try {
    CsvWriter writer(plan.samples_output, sample_columns(), OpenMode::append);
  } catch (const UsageError&) {
    if (fuzz::read_file(plan.samples_output) != samples) std::abort();
  }
  return 0;
}
