// An engine: an algorithm another one runs for its local products (out_of_core's tile products, the
// distributed algorithms' per-rank products), named by an EngineSpec ("algorithm:variant[:params]",
// core/invocation.hpp) and run on products of any shape: each shape's prepared run, made once, and
// one workspace grown to the largest. C = A B, or C += A B and a C of any leading dimension: the
// algorithm's own where it `accumulates`, else the prepared run's partial product and device_add.
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
};

}  // namespace mmlab
