// Every registered algorithm, every variant, every value of every axis, on every awkward shape,
// against the float64 reference with the output NaN-poisoned first. A sticky CUDA error (the
// context is lost) ends the test at the configuration that raised it, named, instead of failing
// every later configuration with an error that is not theirs.
#include <gtest/gtest.h>

#include "harness/cuda_check.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace mmlab {
namespace {

class EveryAlgorithm : public ::testing::TestWithParam<const Algorithm*> {};

TEST_P(EveryAlgorithm, MatchesFloat64OnAwkwardShapes) {
  const Algorithm& alg = *GetParam();
  const DeviceInfo device = query_device(0);
  AlgorithmStates states;
  std::size_t verified = 0, skipped = 0;
  for (const Problem& p : test::tested_shapes()) {
    Workbench bench(p, device, 12345);
    for (const Params& params : test::tested_parameter_points(alg)) {
      Configuration cfg{&alg, params, p, Scope::kernel, false};
      Outcome o;
      const std::string what = alg.name + " " + params.variant() + " " + params.canonical() + " at " +
                               std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
      try {
        o = run_configuration(bench, cfg, device, states, nullptr);
      } catch (const CudaError& e) {
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what << ": sticky CUDA error: " << e.what();
        ADD_FAILURE() << what << ": " << e.what();
        continue;
      }
      if (o.status == Status::skipped) {
        ++skipped;
        EXPECT_FALSE(o.reason.empty()) << what << ": skipped without a reason";
        continue;
      }
      ASSERT_TRUE(o.verdict.has_value()) << what;
      EXPECT_EQ(o.status, Status::ok) << what << ": " << o.reason;
      EXPECT_TRUE(o.verdict->ok) << what << ": max_rel_err " << o.verdict->max_rel_err;
      verified += o.status == Status::ok;
    }
  }
  std::printf("%s: %zu configurations verified, %zu skipped\n", alg.name.c_str(), verified, skipped);
  EXPECT_GT(verified, 0u) << alg.name << " verified nothing";
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryAlgorithm, ::testing::ValuesIn(registry()),
                         [](const auto& info) { return info.param->name; });

}  // namespace
}  // namespace mmlab
