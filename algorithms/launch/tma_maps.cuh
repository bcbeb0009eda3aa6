// The host side of Hopper's data movement (ptx/tma.cuh): tensor maps, encoded by the driver's
// cuTensorMapEncodeTiled (reached through the runtime's entry-point query so that nothing links
// libcuda directly) and passed to a kernel as a __grid_constant__ parameter, their cache, and the
// transpose that gives TMA a k-major operand.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "algorithms/kernels/transpose.cuh"
#include "algorithms/launch/common.cuh"

namespace mmlab {
namespace {

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

inline void transpose(const float* src, long rows, long cols, float* at, long ld_t, cudaStream_t s) {
  const dim3 grid(ceil_div(cols, 32), ceil_div(rows, 32));
  transpose_kernel<<<grid, dim3(32, 8), 0, s>>>(src, int(rows), int(cols), at, int(ld_t));
}

}  // namespace
}  // namespace mmlab
