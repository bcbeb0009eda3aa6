// What a timed trial computed, checked against what was verified, on the GPU and off the clock: a
// kernel that races now and then can pass its one verification and be wrong while it is timed
// (issue #46: tma_tiled's `specialized` 128x128 kernel was), or compute on its first call only and
// leave that C in place. Each trial starts from a C of NaN (a memset ahead of its start event), and
// right behind its stop event, before the blocking kernel lets the stream go, the harness enqueues one
// audit kernel on the configuration's stream (so work another thread enqueues after the call returned
// lands behind it, unseen by the judge and by the clock alike: the C judged is the C timed):
//   deterministic configurations   a hash of every element of C, which must equal the verified C's
//                                  bit for bit (sum over i of a mix of i and C[i]'s bits, mod 2^64:
//                                  the same whatever order the GPU adds it in);
//   the others (split-k's atomics) C at `samples` entries against the float64 reference, judged as
//                                  the verification judges (verification.hpp): error over max |C|
//                                  on uniform inputs, over sum |a b| on the others.
// The counts stay on the GPU until result() reads them (one synchronisation, after the trials).
#pragma once

#include <cstddef>

#include "core/verification.hpp"
#include "runtime/gpu.hpp"

namespace mmlab {

// Entries of the float64 reference that the sampled check compares with (device arrays), and the
// largest |C| of the whole reference (the uniform inputs' scale).
struct AuditSamples {
  Buffer index, ref, sumabs;  // long long, double, double
  std::size_t count = 0;
  double max_abs_ref = 0;
};
// `count` entries of C (`elements` of them in all) drawn from `seed` (all of them when there are no
// more), gathered from a reference on the device or on the host.
inline constexpr std::size_t kAuditSamples = 4096;
// Entries of a trial on inputs of its own judged against float64 (each a dot product of length k made
// from the seed on the GPU): a C right on half its entries passes them with probability 2^-256.
inline constexpr unsigned kSeededSamples = 256;
AuditSamples audit_samples_device(const double* ref, const double* sumabs, std::size_t elements,
                                  unsigned long long seed, CUstream_st* stream);
AuditSamples audit_samples_host(const double* ref, const double* sumabs, std::size_t elements,
                                unsigned long long seed);
// The entries a verification compared (check_entries), with `max_abs_ref` the uniform inputs' scale.
AuditSamples audit_samples_of(const EntrySamples& entries, double max_abs_ref);

class OutputAudit {
 public:
  // The verified C (`elements` floats on the device) is hashed now when `deterministic`; otherwise
  // each trial's C is judged at `samples` against `tolerance` (relative to max |C| when `uniform`).
  OutputAudit(const float* verified_c, std::size_t elements, bool deterministic, const AuditSamples& samples,
              double tolerance, bool uniform, CUstream_st* stream);
  ~OutputAudit();
  OutputAudit(const OutputAudit&) = delete;
  OutputAudit& operator=(const OutputAudit&) = delete;
  void after_trial(const float* c, CUstream_st* stream);  // enqueued after a trial's work
  // A trial on inputs of its own, A (m x k) and B (k x n) of kind `inputs` made from `seed`: every entry
  // of C written (none still holding a poison), and kSeededSamples entries, drawn from the seed, against
  // float64 dot products made on the GPU from the seed itself (not from the buffers the algorithm held).
  // `c` may be a block of that C (a distributed rank's): `rows` x `cols` entries from (row0, col0),
  // row-major, its own width; the whole C by default.
  void after_fresh_trial(const float* c, CUstream_st* stream, long m, long n, long k, const Inputs& inputs,
                         unsigned long long seed, long row0 = 0, long col0 = 0, long rows = -1, long cols = -1);
  struct Result {
    long long trials = 0;   // trials audited
    long long differed = 0;  // trials whose C was not the verified one (hash), or failed a sampled entry
    long long entries = 0;   // sampled entries that failed, over all trials
    long long unwritten = 0;  // trials on fresh inputs whose C still held a poison (of `differed`)
    long long wrong = 0;      // trials on fresh inputs whose sampled entries failed (of `differed`)
  };
  Result result(CUstream_st* stream);  // synchronizes the stream
  bool deterministic() const { return deterministic_; }
  // Why the trials failed the audit, in words ("" when none did).
  static std::string describe(const Result& r, bool deterministic);

 private:
  void launch(const float* c, int mode, CUstream_st* stream);
  std::size_t elements_;
  bool deterministic_, uniform_;
  const AuditSamples& samples_;
  double tolerance_;
  Buffer state_;
};

}  // namespace mmlab
