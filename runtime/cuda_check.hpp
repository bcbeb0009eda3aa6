// One error path: MMLAB_CHECK wraps every CUDA runtime and cuBLAS call and turns a failure into a
// CudaError carrying the file, line and the call's text. MMLAB_CHECK_LAUNCH follows each kernel.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "core/revision.hpp"

namespace mmlab {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string error_site(const char* call, const char* file, int line) {
  return repository_path(file) + ":" + std::to_string(line) + ": " + call;
}

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw CudaError(error_site(call, file, line) + " failed: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
}

inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw CudaError(error_site(call, file, line) + " failed: " + cublasGetStatusName(status) + " (" +
                    cublasGetStatusString(status) + ")");
}

}  // namespace mmlab

#define MMLAB_CHECK(call) ::mmlab::check((call), #call, __FILE__, __LINE__)
#define MMLAB_CHECK_LAUNCH() ::mmlab::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
