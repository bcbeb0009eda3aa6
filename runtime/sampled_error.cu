#include <algorithm>
#include <cmath>

#include "core/verification.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/sampled_error.hpp"

namespace mmlab {

constexpr long kSampledRows = 256, kSampledCols = 256;

SampledError::SampledError(const float* a, const float* b, const Problem& p, CUstream_st* stream)
    : n_(p.n),
      k_(p.k),
      rows_(std::min(p.m, kSampledRows)),
      cols_(std::min(p.n, kSampledCols)),
      row_step_(p.m / rows_),
      col0_((p.n - cols_) / 2),
      inputs_(p.inputs),
      ref_(rows_ * cols_),
      sumabs_(rows_ * cols_) {
  const std::size_t f = sizeof(float), d = sizeof(double);
  Buffer a_rows(f * rows_ * k_, Buffer::Kind::device), b_cols(f * k_ * cols_, Buffer::Kind::device),
      ref(d * rows_ * cols_, Buffer::Kind::device), sumabs(d * rows_ * cols_, Buffer::Kind::device);
  MMLAB_CHECK(cudaMemcpy2DAsync(a_rows.get(), f * k_, a, f * k_ * row_step_, f * k_, rows_,
                                cudaMemcpyDeviceToDevice, stream));
  MMLAB_CHECK(cudaMemcpy2DAsync(b_cols.get(), f * cols_, b + col0_, f * n_, f * cols_, k_,
                                cudaMemcpyDeviceToDevice, stream));
  reference_device(a_rows.as<float>(), b_cols.as<float>(), ref.as<double>(), sumabs.as<double>(), rows_,
                   cols_, k_, stream);
  MMLAB_CHECK(cudaStreamSynchronize(stream));
  copy_to_host(ref_.data(), ref.get(), d * ref_.size());
  copy_to_host(sumabs_.data(), sumabs.get(), d * sumabs_.size());
}

Verdict SampledError::operator()(const float* c, CUstream_st* stream) const {
  const std::size_t f = sizeof(float);
  std::vector<float> samples(ref_.size());
  MMLAB_CHECK(cudaMemcpy2DAsync(samples.data(), f * cols_, c + col0_, f * n_ * row_step_, f * cols_, rows_,
                                cudaMemcpyDeviceToHost, stream));
  MMLAB_CHECK(cudaStreamSynchronize(stream));
  return judge(compare_host(samples.data(), ref_.data(), sumabs_.data(), samples.size()), k_, inputs_);
}

}  // namespace mmlab
