// One problem's workbench: inputs, output buffers, the float64 reference.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/algorithm.hpp"
#include "core/verification.hpp"
#include "runtime/audit.hpp"
#include "runtime/gpu.hpp"

namespace mmlab {

// Device memory kept free for the CUDA context, cuBLAS and the comparison.
inline constexpr std::size_t kDeviceReserve = std::size_t(512) << 20;
// Host memory kept free for everything else (MemAvailable minus this is what a problem may use).
inline constexpr std::size_t kHostReserve = std::size_t(512) << 20;
std::size_t available_host_bytes();  // MemAvailable of /proc/meminfo (or free pages)
std::string gib(double bytes);       // "1.50 GiB"

// One problem's inputs, output buffers and reference. Made lazily, as configurations need them.
class Workbench {
 public:
  Workbench(const Problem& p, const DeviceInfo& d, unsigned long long seed);
  ~Workbench();
  const Problem& problem() const { return problem_; }
  unsigned long long seed() const { return seed_; }
  Reason prepare_device();  // A, B, C (+ the reference when it lives on the GPU)
  // Host copies of A and B, and a host C (+ room for the float64 reference when it is computed on
  // the host); a reason, before anything is allocated, when the host's available memory is short.
  Reason prepare_host();
  Verdict verify_device_output(const float* c_device, Precision precision);
  Verdict verify_host_output(const float* c_host, Precision precision);
  // Entries of the reference for the timed trials' sampled check (runtime/audit.hpp), drawn once per
  // problem when the reference is first made, and kept when a large reference is freed.
  const AuditSamples& audit_samples();
  // A and B as made from `seed` on the device (or the host), made again in place where they hold
  // others: each timed trial's own inputs under the same pointers (issue #81), and the verification's
  // (seed()) before anything is verified or judged against them. Nothing moves when they already are.
  void use_device_inputs(unsigned long long seed);
  void use_host_inputs(unsigned long long seed);
  const float* device_a() const { return d_a_.as<float>(); }
  const float* device_b() const { return d_b_.as<float>(); }
  float* device_c() const { return d_c_.as<float>(); }
  const float* host_a() const { return h_a_; }
  const float* host_b() const { return h_b_; }
  float* host_c() const { return h_c_; }
  CUstream_st* stream() const { return stream_; }
  // What the L2 flush overwrites before a trial, and what a fill's read-through reads
  // (fill_device_inputs): twice the L2, allocated and zeroed once, shared by the problem's configurations.
  const Buffer& l2_flush_buffer();
  // The float64 reference, made once (the verifications make it when they first need it).
  void ensure_reference();

 private:
  bool reference_on_device() const;
  void release_reference();
  void fill_device_inputs(unsigned long long seed);

  Problem problem_;
  DeviceInfo device_;
  unsigned long long seed_;
  unsigned long long device_seed_ = 0, host_seed_ = 0;  // what the device's and the host's A and B hold
  CUstream_st* stream_ = nullptr;
  Buffer d_a_, d_b_, d_c_, d_ref_, d_sumabs_, l2_flush_;
  Buffer pinned_;  // host A, B, C in one pinned allocation when a GPU is present
  std::vector<float> host_storage_;
  float *h_a_ = nullptr, *h_b_ = nullptr, *h_c_ = nullptr;
  std::vector<double> h_ref_, h_sumabs_;
  bool reference_ready_ = false;
  std::unique_ptr<AuditSamples> audit_samples_;
};

// Library handles and the like, made once per algorithm per run.

}  // namespace mmlab
