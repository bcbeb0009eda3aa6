// Executes a run plan: per problem, make inputs and the float64 reference once; per
// configuration, check it can run, verify it, time it, and append its row.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "harness/algorithm.hpp"
#include "harness/csv.hpp"
#include "harness/gpu.hpp"
#include "harness/options.hpp"
#include "harness/stats.hpp"
#include "harness/verification.hpp"

namespace mmlab {

const CsvRow& result_columns();  // the CSV schema (DESIGN.md)
const CsvRow& sample_columns();  // run_id, trial, ms

enum class Status { ok, skipped, failed, interrupted };
const char* status_name(Status s);

struct Outcome {
  Status status = Status::ok;
  std::string reason;
  LaunchConfig launch;
  bool launch_known = false;     // false: the algorithm does not say (e.g. a library call)
  std::size_t device_bytes = 0;  // A, B, C and the workspace this configuration used
  std::optional<Verdict> verdict;
  std::vector<double> samples;  // ms per launch, in trial order
  Stats stats;
};

// One problem's inputs, output buffers and reference. Made lazily, as configurations need them.
class Workbench {
 public:
  Workbench(const Problem& p, const DeviceInfo& d, unsigned long long seed);
  ~Workbench();
  const Problem& problem() const { return problem_; }
  Reason prepare_device();  // A, B, C (+ the reference when it lives on the GPU)
  void prepare_host();      // host copies of A and B, and a host C
  Verdict verify_device_output(const float* c_device);
  Verdict verify_host_output(const float* c_host);
  const float* device_a() const { return d_a_.as<float>(); }
  const float* device_b() const { return d_b_.as<float>(); }
  float* device_c() const { return d_c_.as<float>(); }
  const float* host_a() const { return h_a_; }
  const float* host_b() const { return h_b_; }
  float* host_c() const { return h_c_; }
  CUstream_st* stream() const { return stream_; }

 private:
  bool reference_on_device() const;
  void ensure_reference();

  Problem problem_;
  DeviceInfo device_;
  unsigned long long seed_;
  CUstream_st* stream_ = nullptr;
  Buffer d_a_, d_b_, d_c_, d_ref_;
  Buffer pinned_;  // host A, B, C in one pinned allocation when a GPU is present
  std::vector<float> host_storage_;
  float *h_a_ = nullptr, *h_b_ = nullptr, *h_c_ = nullptr;
  std::vector<double> h_ref_;
  bool reference_ready_ = false;
};

// Library handles and the like, made once per algorithm per run.
class AlgorithmStates {
 public:
  void* get(const Algorithm& a);

 private:
  std::map<const Algorithm*, std::shared_ptr<void>> states_;
};

// Runs one configuration. Without `timing`, it is only checked and verified (the GPU tests).
Outcome run_configuration(Workbench& bench, const Configuration& cfg, const DeviceInfo& device,
                          AlgorithmStates& states, const TimingOptions* timing,
                          const std::atomic<bool>* interrupted = nullptr);

// The whole plan; returns the exit status (0, 1 when a configuration failed, 130 interrupted).
int execute(const RunPlan& plan, const DeviceInfo& device, const std::atomic<bool>& interrupted);

}  // namespace mmlab
