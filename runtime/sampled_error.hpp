// The error of a product at sampled entries of C, judged as the lab judges a whole C
// (core/verification.hpp: error over max |C| on uniform inputs, over sum |a b| on the others): the
// FP32-accurate dispatcher's check of an FP32 kernel against cuBLAS SGEMM on the problem it would
// run (algorithms/composite/flagship.cu). The samples are up to 256 rows of C, m / 256 rows apart
// (rounded down: below m = 512, the first 256 rows) and up to 256 adjacent columns in the middle of
// n; their float64 reference is computed once, on the GPU, from those rows of A and columns of B.
#pragma once

#include <vector>

#include "core/algorithm.hpp"
#include "runtime/gpu.hpp"

namespace mmlab {

class SampledError {
 public:
  // A and B (device) of the problem `p`; the reference is complete when the constructor returns.
  SampledError(const float* a, const float* b, const Problem& p, CUstream_st* stream);
  // The verdict on C (device, complete once `stream` reaches here) at the samples, judged as the
  // verification judges (judged_error, typical_error). Synchronizes the stream.
  Verdict operator()(const float* c, CUstream_st* stream) const;

 private:
  long n_, k_, rows_, cols_, row_step_, col0_;
  Inputs inputs_;
  std::vector<double> ref_, sumabs_;
};

}  // namespace mmlab
