// GPU services: device query, owned buffers, inputs, the float64 reference and the comparison
// against it. The harness makes a problem's operands with them; an algorithm receives its operands
// and workspace and uses at most a Buffer of its own (tf32x3's one-int probe of the build).
#pragma once

#include <cstddef>
#include <utility>

#include "core/algorithm.hpp"
#include "core/verification.hpp"
#include "runtime/job.hpp"

namespace mmlab {

DeviceInfo query_device(int ordinal);  // never throws for a missing GPU: present = false
// Every rank's GPU against the others' (a collective: every rank calls it once its GPU is chosen):
// ranks that share one (NCCL refuses them), ranks on one host whose GPUs cannot map each other's
// memory (the copy engines need it). The same answer on every rank.
Placement find_placement(const DeviceInfo& device);
std::size_t free_device_bytes();
void synchronize_device();  // throws CudaError carrying a sticky error, if any

// Device or pinned-host memory that frees itself.
class Buffer {
 public:
  enum class Kind { device, pinned_host };
  Buffer() = default;
  Buffer(std::size_t bytes, Kind kind);
  ~Buffer();
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer t(std::move(o));
    swap(t);
    return *this;
  }
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(kind_, o.kind_);
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  Kind kind_ = Kind::device;
};

// All of these are enqueued on `stream` (the default stream when null).
// How the L2 keeps what a fill writes or a read brings in: as any access (normal), or among the lines
// it drops first (evict_first: st.global.cs / ld.global.cs).
enum class L2Keep { normal, evict_first };
// A rows x cols matrix of `kind` (random.hpp; id kMatrixA or kMatrixB).
void fill_input_device(float* x, long rows, long cols, Inputs kind, unsigned long long seed,
                       unsigned long long id, CUstream_st* stream, L2Keep keep = L2Keep::normal);
// x's `count` floats read, never written, each 1 KiB of them by `readers` blocks far apart in the grid
// (on different SMs, as blocks are placed): x left in the L2 as a product's blocks leave it, rather
// than as a fill's writes do. kInputReaders: the harness's count (on an H200, 4 left outer_product at
// 256 1.02x its time on inputs the trials before had read, 8 1.00x; data/cheats/h200-cd6ea9c/).
// Read evict_first, a buffer of twice the L2 is meant to take the place of the L2's evict-first lines
// (written back where they were written) and leave the others where they are: inferred from trial times
// (data/cheats/h200-13ff038/), the L2's lines were not observed.
inline constexpr int kInputReaders = 8;
void read_from_blocks(const float* x, std::size_t count, int readers, CUstream_st* stream,
                      L2Keep keep = L2Keep::normal);
// Every element set to the NaN `bits` (core/verification.hpp: the verification's, or a trial's).
void poison_device(float* x, std::size_t count, CUstream_st* stream, std::uint32_t bits = kPoisonBits);
// ref = A B and sumabs = |A| |B|, in float64.
void reference_device(const float* a, const float* b, double* ref, double* sumabs, long m, long n, long k,
                      CUstream_st* stream);
ErrorStats compare_device(const float* c, const double* ref, const double* sumabs, std::size_t count,
                          CUstream_st* stream);
void copy_to_host(void* dst, const void* src, std::size_t bytes);

}  // namespace mmlab
