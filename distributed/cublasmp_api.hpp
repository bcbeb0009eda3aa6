// cuBLASMp, NVIDIA's distributed GEMM (PBLAS-style, 2D block-cyclic operands, NCCL and NVSHMEM
// between GPUs), loaded at run time: dlopen, no build or link dependency, so the lab builds and runs
// where it is missing and the `cublasmp` algorithm then says why (as runtime/nvml.cpp loads NVML).
// Only the calls the lab uses, with cuBLASMp's C signatures of version 0.7 spelled out here (handles
// are opaque pointers, its enumerations ints).
//
// Where it is looked for: MMLAB_CUBLASMP_LIB (a path), libcublasmp.so.0 beside the mmlab program, in
// build/deps/nvidia-cublasmp (scripts/setup fetches nvidia-cublasmp-cu13==0.7.0.125 from PyPI, pinned by
// hash), then the loader's own search. Version 0.7 needs libnvshmem_host.so.3 (PyPI's
// nvidia-nvshmem-cu13; MMLAB_NVSHMEM_DIR, the loader's search, or the nvidia/nvshmem/lib folder of the
// system's Python packages), and NCCL, which the lab links.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mmlab::dist::cublasmp {

using Handle = void*;        // cublasMpHandle_t
using Grid = void*;          // cublasMpGrid_t
using Descriptor = void*;    // cublasMpMatrixDescriptor_t
using MatmulDesc = void*;    // cublasMpMatmulDescriptor_t
using Stream = void*;        // cudaStream_t
using NcclComm = void*;      // ncclComm_t

constexpr int kSuccess = 0;                   // CUBLASMP_STATUS_SUCCESS
constexpr int kGridColMajor = 0, kGridRowMajor = 1;  // cublasMpGridLayout_t
constexpr int kAttributeTransA = 0, kAttributeTransB = 1, kAttributeAlgo = 3;  // matmul descriptor attributes
constexpr int kAlgoSplitP2P = 1;              // CUBLASMP_MATMUL_ALGO_TYPE_SPLIT_P2P (no NVLink multicast)

struct Api {
  int (*create)(Handle*, Stream);
  int (*destroy)(Handle);
  int (*stream_set)(Handle, Stream);
  int (*get_version)(int*);
  int (*grid_create)(std::int64_t nprow, std::int64_t npcol, int layout, NcclComm, Grid*);
  int (*grid_destroy)(Grid);
  int (*descriptor_create)(std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb, std::int64_t rsrc,
                           std::int64_t csrc, std::int64_t lld, int type, Grid, Descriptor*);
  int (*descriptor_destroy)(Descriptor);
  int (*gemm_buffer_size)(Handle, int ta, int tb, std::int64_t m, std::int64_t n, std::int64_t k, const void* alpha,
                          const void* a, std::int64_t ia, std::int64_t ja, Descriptor, const void* b, std::int64_t ib,
                          std::int64_t jb, Descriptor, const void* beta, void* c, std::int64_t ic, std::int64_t jc,
                          Descriptor, int compute, std::size_t* device_bytes, std::size_t* host_bytes);
  int (*gemm)(Handle, int ta, int tb, std::int64_t m, std::int64_t n, std::int64_t k, const void* alpha,
              const void* a, std::int64_t ia, std::int64_t ja, Descriptor, const void* b, std::int64_t ib,
              std::int64_t jb, Descriptor, const void* beta, void* c, std::int64_t ic, std::int64_t jc, Descriptor,
              int compute, void* d_work, std::size_t device_bytes, void* h_work, std::size_t host_bytes);
  int (*matmul_desc_create)(MatmulDesc*, int compute);
  int (*matmul_desc_destroy)(MatmulDesc);
  int (*matmul_desc_set)(MatmulDesc, int attribute, const void* value, std::size_t bytes);
  int (*matmul_buffer_size)(Handle, MatmulDesc, std::int64_t m, std::int64_t n, std::int64_t k, const void* alpha,
                            const void* a, std::int64_t ia, std::int64_t ja, Descriptor, const void* b,
                            std::int64_t ib, std::int64_t jb, Descriptor, const void* beta, const void* c,
                            std::int64_t ic, std::int64_t jc, Descriptor, void* d, std::int64_t id, std::int64_t jd,
                            Descriptor, std::size_t* device_bytes, std::size_t* host_bytes);
  int (*matmul)(Handle, MatmulDesc, std::int64_t m, std::int64_t n, std::int64_t k, const void* alpha, const void* a,
                std::int64_t ia, std::int64_t ja, Descriptor, const void* b, std::int64_t ib, std::int64_t jb,
                Descriptor, const void* beta, const void* c, std::int64_t ic, std::int64_t jc, Descriptor, void* d,
                std::int64_t id, std::int64_t jd, Descriptor, void* d_work, std::size_t device_bytes, void* h_work,
                std::size_t host_bytes);
  // NVSHMEM's symmetric allocation (collective), which version 0.7's overlapping matmul wants for its
  // workspace; null where NVSHMEM's host library was not found.
  void* (*nvshmem_malloc)(std::size_t);
  void (*nvshmem_free)(void*);
  int version = 0;          // cublasMpGetVersion: 700 for 0.7.0
  std::string library;      // the file loaded
  std::string nvshmem;      // NVSHMEM's host library, or why it was not found
  // "cuBLASMp 0.7.0, NCCL 2.28.9, NVSHMEM 3.3.24": what a row of it ran with.
  std::string versions;
};

// The library, loaded once per process (NVSHMEM's host library first, with NVLink multicast off:
// NVSHMEM_DISABLE_NVLS=1 unless set); null, and `why` says what is missing, where it cannot be.
const Api* api(std::string* why = nullptr);

// The process's one cuBLASMp handle on the current GPU (cuBLASMp supports one handle per process and
// GPU; version 0.7 finalises NVSHMEM when a handle goes, which left the symmetric workspaces of the
// other runs held beside it dangling: four H100s, data/distributed/x4/run1-03968b8). Made on first use
// on `stream` (each call sets its own stream), destroyed when the job ends, before its communicators.
// Returns cuBLASMp's status.
int shared_handle(Stream stream, Handle* out);

// cuBLASMp's status as text.
std::string status_text(int status);

}  // namespace mmlab::dist::cublasmp
