// An engine: an algorithm another one runs for its local products (out_of_core's tile products, the
// distributed algorithms' per-rank products), named by an EngineSpec ("algorithm:variant[:params]",
// core/invocation.hpp) and run on products of any shape: each shape's prepared run, made once, and
// one workspace grown to the largest. C = A B, or C += A B and a C of any leading dimension: the
// algorithm's own where it `accumulates`, else the prepared run's partial product and device_add.
// The lab's one engine class: the distributed algorithms' contexts hold one too (gemm: padded rows).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/invocation.hpp"
#include "runtime/gpu.hpp"

namespace mmlab {

// c (ldc) += t (m x n, dense), or = t without `accumulate`, on `stream`: the GPU's AddPartial.
void device_add(float* c, long ldc, const float* t, long m, long n, bool accumulate, CUstream_st* stream);

class Engine {
 public:
  // `device` describes the GPU it runs on (or the host, for a host algorithm); `states` outlives the
  // engine (its algorithm's state per GPU). `adds`: runs may ask for C += A B or a C wider than n
  // (an algorithm that cannot then takes a partial product in its workspace).
  Engine(EngineSpec spec, const DeviceInfo& device, StateCache& states, bool adds = true);
  const EngineSpec& spec() const { return spec_; }
  // The product p prepared: resolved as the harness resolves it, checked, sized. Thread-safe.
  const PreparedRun& prepared(const Problem& p);
  std::size_t workspace_bytes(const Problem& p) { return prepared(p).workspace_bytes(); }
  // The product p on io (C = A B, or C += A B with io.accumulate; io.ldc) on `stream`; io.workspace:
  // workspace_bytes(p), or null for the engine's own (grown when needed, which synchronizes the
  // device). A product it cannot run is a std::runtime_error naming why.
  void run(const Problem& p, Buffers io, CUstream_st* stream);

  // Whether the engine's algorithm runs on the host (its operands in host memory), else on the GPU.
  static bool on_host(const EngineSpec& spec);
  // The rows a GPU engine's variant wants its operands' to be a multiple of (Variant::row_alignment;
  // 1 on the host and where it wants none).
  static long row_alignment(const EngineSpec& spec);
  // C (m x n, ldc) = A (m x k) B (k x n), + C with `accumulate`, A and B contiguous, on `stream`. Where
  // the alignment asks and the rows are not of it (30001 over a 2 x 2 grid: rows of 15001), the product
  // runs padded: A into A' (m x k'), B into B' (k' x n'), C into C' (m x n'), k' and n' rounded up, A's
  // new columns and B's new rows zero (they add nothing), C's extra columns dropped; the copies are part
  // of the product's time (with them a 15001^3 cuBLAS TF32 product ran at 245-265 TFLOP/s on an H100,
  // unpadded at 122: data/distributed/x4/sweep-2026-11-27c). Their staging grows to the largest.
  void gemm(const float* a, const float* b, float* c, long ldc, long m, long n, long k, bool accumulate,
            CUstream_st* stream);
  // What runs a product of this shape (padded where gemm pads it), as a full engine spec
  // ("algorithm:variant:params", a dispatcher's pick included): what a row records of its products.
  std::string resolved(long m, long n, long k);
  // Gives back the padding's staging; it grows again on the next product that needs it.
  void release() { staging_ = Buffer(); }

 private:
  EngineSpec spec_;
  DeviceInfo device_;
  Invocation invocation_;
  StateCache* states_;
  bool adds_;
  std::mutex lock_;
  std::map<std::tuple<long, long, long, std::string>, PreparedRun> runs_;  // by shape and inputs
  Buffer device_workspace_;
  std::vector<char> host_workspace_;
  long align_ = 1;
  Buffer staging_;  // A', B' and C' of the largest padded product
};

}  // namespace mmlab
