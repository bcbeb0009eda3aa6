// The operands of the kernels that read A and B by TMA (tma_tiled, streamk), written once: A transposed
// into the workspace (k x m, its pitch m rounded up to 4 floats: TMA's rows are 16-byte aligned), B
// padded there when its rows are not (launch/aligned.cuh), and the checks that go with them.
#pragma once

#include <string>

#include "algorithms/launch/aligned.cuh"
#include "algorithms/launch/tma_maps.cuh"

namespace mmlab {
namespace {

inline long pitch_t(const Problem& p) { return round4(p.m); }

// Floats of workspace the operands take: A^T, then B padded where needed.
inline std::size_t tma_operand_floats(const Problem& p) {
  return std::size_t(p.k * pitch_t(p)) + padding(p).b_floats;
}

// What `who` needs of the device and the problem to read its operands by TMA.
inline Reason tma_operands_fit(const Problem& p, const DeviceInfo& d, const std::string& who) {
  if (d.present && d.cc_major < 9) return who + " needs TMA and mbarrier transactions: compute capability 9.0";
  if (p.m > 65535L * 32) return "the transpose of A runs m / 32 blocks in y: m must be at most 2097120";
  if (p.k * pitch_t(p) >= (1L << 31)) return who + " indexes with 32 bits: A^T must have fewer than 2^31 elements";
  return fits_aligned_int(p, who);
}

struct TmaOperands {
  float* at;        // A^T (k x m, pitch pitch_t)
  const float* b;   // B, or its padded copy
  long ldb;         // B's pitch
  float* after;     // the workspace past them
};

// A transposed and B padded (where needed) into the workspace, on the run's stream.
inline TmaOperands tma_operands(const RunArgs& r) {
  const Problem& p = r.problem;
  float* at = static_cast<float*>(r.workspace);
  transpose(r.a, p.m, p.k, at, pitch_t(p), r.stream);
  const Padding d = padding(p);
  TmaOperands o{at, r.b, d.ldb, at + p.k * pitch_t(p)};
  if (d.b) {
    pad(r.b, p.k, p.n, o.after, p.k, d.ldb, r.device->sm_count, r.stream);
    o.b = o.after;
    o.after += d.b_floats;
  }
  return o;
}

}  // namespace
}  // namespace mmlab
