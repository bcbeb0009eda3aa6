// Hopper's own data movement, for the kernels that use it (algorithms/tma_tiled.cu): tensor maps
// and TMA tile loads (`cp.async.bulk.tensor`: one thread copies a whole 2D box of global memory into
// shared memory, zero-filling what lies outside the matrix), completing an mbarrier (mbarrier.cuh).
//
// A tensor map is encoded on the host by the driver's cuTensorMapEncodeTiled, reached through the
// runtime's entry-point query so that nothing links libcuda directly, and passed to the kernel as a
// __grid_constant__ parameter.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "algorithms/kernels/common.cuh"
#include "algorithms/ptx/mbarrier.cuh"

namespace mmlab {
namespace {

// Warp specialisation: a warpgroup that only issues loads hands its registers to the warpgroups that
// compute (setmaxnreg, sm_90a; every warp of the group executes it). Built for plain sm_90 these do
// nothing and the block keeps its launch registers.
template <int kRegisters>
__device__ inline void release_registers() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}
template <int kRegisters>
__device__ inline void claim_registers() {
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}

// The box of `map` at element (x, y) (x the contiguous dimension) into shared memory at `dst`,
// completing `bar`'s transaction count by the box's size.
__device__ inline void tma_load_2d(void* dst, const CUtensorMap& map, int x, int y, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(shared_address(bar))
      : "memory");
}

// The element types the tensor maps here describe: FP32 (the default) and FP16.
inline std::size_t element_bytes(CUtensorMapDataType type) {
  return type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? 2 : 4;
}

// A row-major matrix of `type` (rows x cols, pitch `ld` elements, 16-byte aligned rows) as a tensor map
// of boxes box_rows x box_cols (box_cols elements a multiple of 16 bytes, each dimension at most 256).
// Without swizzle a box lands in shared memory as a dense box_rows x box_cols row-major tile; with the
// 128-byte swizzle (rows of 128 bytes: 32 floats or 64 halves) the 16-byte chunk c of row r lands at
// chunk c ^ (r % 8), wgmma's layout (algorithms/ptx/wgmma.cuh).
inline CUtensorMap tensor_map(const void* base, long rows, long cols, long ld, int box_rows, int box_cols,
                              CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE,
                              CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    MMLAB_CHECK(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn)
      throw std::runtime_error("the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or newer needed)");
    return reinterpret_cast<Encode>(fn);
  }();
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * element_bytes(type)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult rc =
      encode(&map, type, 2, const_cast<void*>(base), dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed: CUresult " + std::to_string(rc));
  return map;
}

// Encoded tensor maps, kept as a library keeps its descriptors: a map depends only on the address, the
// shape and the box, and encoding one is host work of the order of the kernels of a small problem.
// An algorithm's state (make_state), so it lives as long as the harness's buffers do. get returns a copy
// (128 bytes): a later get may clear the cache.
class TensorMaps {
 public:
  CUtensorMap get(const void* base, long rows, long cols, long ld, int box_rows, int box_cols,
                  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE,
                  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32) {
    const Key key{base, rows, cols, ld, box_rows, box_cols, int(swizzle), int(type)};
    auto it = maps_.find(key);
    if (it == maps_.end()) {
      if (maps_.size() >= 64) maps_.clear();  // many problems in one run: keep the cache small
      it = maps_.emplace(key, tensor_map(base, rows, cols, ld, box_rows, box_cols, swizzle, type)).first;
    }
    return it->second;
  }
  static std::shared_ptr<void> make() { return std::make_shared<TensorMaps>(); }

 private:
  using Key = std::tuple<const void*, long, long, long, int, int, int, int>;
  std::map<Key, CUtensorMap> maps_;
};

// at (cols x rows, pitch ld_t) = src^T for src (rows x cols, pitch cols): 32 x 32 tiles through
// shared memory (pitch 33: the column reads fall on distinct banks), both sides coalesced.
__global__ void transpose_kernel(const float* __restrict__ src, int rows, int cols, float* __restrict__ at,
                                 int ld_t) {
  __shared__ float tile[32][33];
  const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int r = r0 + i, col = c0 + threadIdx.x;
    if (r < rows && col < cols) tile[i][threadIdx.x] = src[long(r) * cols + col];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int col = c0 + i, r = r0 + threadIdx.x;
    if (r < rows && col < cols) at[long(col) * ld_t + r] = tile[threadIdx.x][i];
  }
}

inline void transpose(const float* src, long rows, long cols, float* at, long ld_t, cudaStream_t s) {
  const dim3 grid(ceil_div(cols, 32), ceil_div(rows, 32));
  transpose_kernel<<<grid, dim3(32, 8), 0, s>>>(src, int(rows), int(cols), at, int(ld_t));
}

}  // namespace
}  // namespace mmlab
