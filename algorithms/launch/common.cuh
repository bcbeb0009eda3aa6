// Host-side helpers shared by the algorithm files' launchers and descriptors: the kernel table,
// 32-bit indexing checks, launch-configuration conversions, the shared-memory opt-in.
#pragma once

#include <algorithm>
#include <climits>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/algorithm.hpp"
#include "runtime/cuda_check.hpp"

namespace mmlab {

inline unsigned ceil_div(long a, long b) { return unsigned((a + b - 1) / b); }

inline Dim3 dim(const dim3& d) { return {d.x, d.y, d.z}; }
inline dim3 dim(const Dim3& d) { return dim3(d.x, d.y, d.z); }

// Kernels index with 32-bit ints where each matrix dimension fits; the products use 64 bits.
inline Reason fits_int(const Problem& p) {
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return "m, n and k must each be below 2^31";
  return std::nullopt;
}
// The same, as a descriptor's `supports`.
inline Reason supports_int_indexing(const Problem& p, const Params&, const DeviceInfo&) {
  return fits_int(p);
}

inline long round4(long x) { return (x + 3) / 4 * 4; }

// Reason a problem's operands, their rows padded to multiples of 4 (launch/aligned.cuh), cannot be
// indexed with 32 bits, or nullopt.
inline Reason fits_aligned_int(const Problem& p, const std::string& who) {
  const long k = round4(p.k), n = round4(p.n);
  if (p.m * k >= (1L << 31) || k * n >= (1L << 31) || p.m * p.n >= (1L << 31))
    return who + " indexes with 32 bits: every matrix must have fewer than 2^31 elements";
  return fits_int(p);
}

// The usual launcher of one compiled kernel instance.
using Launcher = void (*)(const RunArgs&, const LaunchConfig&);

// The kernels an algorithm compiled, each behind a launcher `Fn` (a pointer to a template
// instance), with the parameter point it implements. The descriptor takes `compiled()`, so the
// list below is the one source of what exists; `at` finds the launcher or throws.
template <class Fn>
class KernelTable {
 public:
  struct Entry {
    CompiledPoint point;
    Fn launch;
  };
  KernelTable(std::initializer_list<Entry> entries) : KernelTable(std::vector<Entry>(entries)) {}
  explicit KernelTable(const std::vector<Entry>& entries) {
    std::vector<CompiledPoint> points;
    for (const Entry& e : entries) points.push_back(e.point), launchers_.push_back(e.launch);
    set_ = CompiledSet(std::move(points));
  }
  const CompiledSet& compiled() const { return set_; }
  Fn at(const Params& q) const {
    if (auto i = set_.find(q); i && set_.governs(q.variant())) return launchers_[*i];
    throw std::logic_error("no compiled kernel for " + q.variant() + " " + q.canonical());
  }

 private:
  CompiledSet set_;
  std::vector<Fn> launchers_;
};

// The descriptor hooks of an algorithm whose kernels all sit in `kernels`: what is compiled (axes'
// values and the constraint text follow), the launch configuration, and run().
template <class Fn>
void use_kernels(Algorithm& a, const KernelTable<Fn>& kernels,
                 std::function<LaunchConfig(const Problem&, const Params&, const DeviceInfo&)> launch,
                 std::function<void(const RunArgs&)> run) {
  a.set_compiled(kernels.compiled());
  a.launch_config = std::move(launch);
  a.run = std::move(run);
}

// Raise a kernel's dynamic shared-memory limit when it needs more than the default 48 KiB.
template <class Kernel>
void allow_shared_bytes(Kernel* kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    MMLAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// Blocks of `kernel` an SM of this device holds at once (0 where none fits).
template <class Kernel>
int resident_blocks(Kernel* kernel, int threads, std::size_t shared) {
  allow_shared_bytes(kernel, shared);
  int blocks = 0;
  MMLAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared));
  return blocks;
}

// The same without a GPU: the launch bounds' blocks per SM, as many as an H100 SM's 228 KiB of shared
// memory holds (1 KiB of it reserved per block).
inline long h100_resident_blocks(int launch_bound_blocks, std::size_t shared) {
  return std::min<long>(launch_bound_blocks, 233472 / long(shared + 1024));
}

}  // namespace mmlab
