// 16-byte-aligned operands for the kernels that copy A and B in 16-byte pieces (register_tiled and
// the cluster kernels): an operand whose rows are not 16-byte aligned (k % 4 != 0 for A, n % 4 != 0
// for B) is first copied into the workspace with its pitch rounded up to a multiple of 4 and zeros
// in the pad. The kernels then read A's last chunk of four whole (the pad is zero) and never read
// B's rows past k.
#pragma once

#include <algorithm>

#include "algorithms/launch/operands.hpp"
#include "algorithms/kernels/pad.cuh"
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

struct Padding {
  bool a, b;
  long lda, ldb;
  std::size_t a_floats, b_floats;
};
inline Padding padding(const Problem& p) {
  Padding d;
  d.a = p.k % 4 != 0, d.b = p.n % 4 != 0;
  d.lda = round4(p.k), d.ldb = round4(p.n);
  d.a_floats = d.a ? std::size_t(p.m * d.lda) : 0;
  d.b_floats = d.b ? std::size_t(p.k * d.ldb) : 0;
  return d;
}

// The workspace the padded copies need (the descriptor's workspace_bytes).
inline std::size_t aligned_workspace(const Problem& p, const Params&) {
  const Padding d = padding(p);
  return sizeof(float) * (d.a_floats + d.b_floats);
}

inline void pad(const float* src, long rows, long cols, float* dst, long rows_dst, long cols_dst, int sms,
                cudaStream_t s) {
  const long total = rows_dst * cols_dst;
  const unsigned blocks = unsigned(std::min<long>((total + 255) / 256, 16L * std::max(sms, 1)));
  pad_copy<<<blocks, 256, 0, s>>>(src, int(rows), int(cols), dst, int(rows_dst), int(cols_dst));
}

// A and B as the kernels read them: the caller's, or padded copies in r.workspace.
inline Operands aligned_operands(const RunArgs& r) {
  const Problem& p = r.problem;
  const Padding d = padding(p);
  Operands o{r.a, r.b, int(p.k), int(p.n), int(p.k)};
  float* work = static_cast<float*>(r.workspace);
  if (d.a) {
    pad(r.a, p.m, p.k, work, p.m, d.lda, r.device->sm_count, r.stream);
    o.a = work, o.lda = int(d.lda);
  }
  if (d.b) {
    pad(r.b, p.k, p.n, work + d.a_floats, p.k, d.ldb, r.device->sm_count, r.stream);
    o.b = work + d.a_floats, o.ldb = int(d.ldb);
  }
  return o;
}

}  // namespace
}  // namespace mmlab
