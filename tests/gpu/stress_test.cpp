// The kernels with asynchronous pipelines (TMA loads and mbarriers, producer and consumer warps,
// bulk copies and DSMEM between the blocks of a cluster), every configuration run again and again on
// shapes of thousands of output tiles in several waves, odd tile counts and part-filled edge tiles,
// every entry checked against float64 each time: a race that strikes only when many blocks share
// the SMs (issue #46: tma_tiled's `specialized` 128x128 kernel, right on every shape of the other
// tests) fails here. MMLAB_STRESS_REPEATS sets the runs per configuration (3).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/cuda_check.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace mmlab {
namespace {

// Named here, not in the harness: the algorithms whose kernels pass stages between threads or blocks
// by mbarriers, TMA, bulk copies or DSMEM.
const char* const kPipelined[] = {"tma_tiled", "streamk", "tf32x3", "small", "cluster_cannon", "cluster_dns"};

class Pipelined : public ::testing::TestWithParam<const char*> {};

TEST_P(Pipelined, EveryConfigurationAgainAndAgainOnThousandsOfTiles) {
  const Algorithm* alg = test::lab().find(GetParam());
  ASSERT_NE(alg, nullptr) << GetParam();
  const DeviceInfo device = query_device(0);
  const char* env = std::getenv("MMLAB_STRESS_REPEATS");
  const int repeats = env ? std::max(1, std::atoi(env)) : 3;
  StateCache states;
  std::size_t runs = 0, skipped = 0;
  // 36 x 125 tiles of 128 (4500, the last row and column part-filled); 24 x 17 with a deeper k.
  for (const Problem p : {Problem{4541, 15918, 149}, Problem{3001, 2053, 517}}) {
    Workbench bench(p, device, 2026);
    for (const Params& params : test::tested_parameter_points(*alg)) {
      const std::string what = alg->name + " " + params.variant() + " " + params.canonical() + " at " +
                               std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
      for (int rep = 0; rep < repeats; ++rep) {
        Outcome o;
        try {
          o = run_configuration(bench, Configuration{alg, params, p, Scope::kernel, false}, device, states, nullptr);
        } catch (const CudaError& e) {
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what << ": sticky CUDA error: " << e.what();
          ADD_FAILURE() << what << ": " << e.what();
          break;
        }
        if (o.status == Status::skipped) {
          ++skipped;
          break;
        }
        EXPECT_EQ(o.status, Status::ok) << what << ", run " << rep + 1 << ": " << o.reason;
        ++runs;
      }
    }
  }
  std::printf("%s: %zu runs checked entry by entry, %zu configurations skipped\n", alg->name.c_str(), runs, skipped);
  EXPECT_GT(runs, 0u);
}

INSTANTIATE_TEST_SUITE_P(Stress, Pipelined, ::testing::ValuesIn(kPipelined),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace mmlab
