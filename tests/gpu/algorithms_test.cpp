// Every registered algorithm, every variant, every value of every axis, on every awkward shape,
// against the float64 reference with the output NaN-poisoned first. A sticky CUDA error (the
// context is lost) ends the test at the configuration that raised it, named, instead of failing
// every later configuration with an error that is not theirs.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/cuda_check.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace mmlab {
namespace {

class EveryAlgorithm : public ::testing::TestWithParam<const Algorithm*> {};

TEST_P(EveryAlgorithm, MatchesFloat64OnAwkwardShapes) {
  const Algorithm& alg = *GetParam();
  const DeviceInfo device = query_device(0);
  StateCache states;
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

// The inputs beyond U(-1, 1): each variant's default point, on a few awkward shapes, judged by the
// error relative to sum |a b| (verification.hpp). A kernel that loses the small parts of products,
// mixes large and small terms badly, or assumes one range for a whole matrix fails here where uniform
// inputs would hide it.
TEST_P(EveryAlgorithm, MatchesFloat64OnHarderInputs) {
  const Algorithm& alg = *GetParam();
  const DeviceInfo device = query_device(0);
  StateCache states;
  std::size_t verified = 0;
  for (Inputs kind : kAllInputs)
    if (kind != Inputs::uniform)
      for (Problem p : {Problem{127, 129, 131}, Problem{1041, 1247, 139}, Problem{300, 260, 1028},
                        Problem{1, 3001, 2053}, Problem{2053, 2, 1031}}) {
        p.inputs = kind;
        Workbench bench(p, device, 4321);
        for (const Variant& v : alg.variants) {
          const std::vector<Params> points = parameter_points(alg, v.name, {});
          Configuration cfg{&alg, points.front(), p, Scope::kernel, false};
          const std::string what = alg.name + " " + v.name + " " + points.front().canonical() + " at " +
                                   std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                                   std::to_string(p.k) + " " + inputs_name(kind);
          const Outcome o = run_configuration(bench, cfg, device, states, nullptr);
          if (o.status == Status::skipped) continue;
          EXPECT_EQ(o.status, Status::ok) << what << ": " << o.reason;
          verified += o.status == Status::ok;
        }
      }
  std::printf("%s: %zu configurations verified on wide, cancelling and badly scaled inputs\n",
              alg.name.c_str(), verified);
}

// Short sums on inputs whose exponents spread: each variant's default point at k = 7 ... 129 on
// wide-exponent, exp_spread and badly scaled inputs. Where a split product's parts cannot hold small
// values (FP16's range after scaling) or a short sum is ruled by one term, the error relative to
// sum |a b| shows it (tf32x3's half variants failed here at k <= 48 before issue #46).
TEST_P(EveryAlgorithm, MatchesFloat64AtShortKOnSpreadExponents) {
  const Algorithm& alg = *GetParam();
  const DeviceInfo device = query_device(0);
  StateCache states;
  std::size_t verified = 0;
  for (const Inputs kind : {Inputs::wide_exponent, Inputs::exp_spread(2), Inputs::exp_spread(4),
                            Inputs::badly_scaled})
    for (long k : {7L, 17L, 31L, 48L, 64L, 129L}) {
      Problem p{515, 263, k};
      p.inputs = kind;
      Workbench bench(p, device, 4646);
      for (const Variant& v : alg.variants) {
        const std::vector<Params> points = parameter_points(alg, v.name, {});
        Configuration cfg{&alg, points.front(), p, Scope::kernel, false};
        const std::string what = alg.name + " " + v.name + " " + points.front().canonical() + " at k = " +
                                 std::to_string(k) + " " + inputs_name(kind);
        const Outcome o = run_configuration(bench, cfg, device, states, nullptr);
        if (o.status == Status::skipped) continue;
        EXPECT_EQ(o.status, Status::ok) << what << ": " << o.reason;
        verified += o.status == Status::ok;
      }
    }
  std::printf("%s: %zu configurations verified at short k on spread exponents\n", alg.name.c_str(), verified);
}

// A configuration its variant calls deterministic gives a bit-identical C when run again (`mmlab
// list` marks the variants; split-k's atomics are not, and are left out here when they split).
TEST_P(EveryAlgorithm, DeterministicConfigurationsRepeatBitForBit) {
  const Algorithm& alg = *GetParam();
  if (alg.backend == Backend::distributed)
    GTEST_SKIP() << "the distributed pipeline keeps its C on the ranks";
  const DeviceInfo device = query_device(0);
  StateCache states;
  std::size_t repeated = 0, exempt = 0;
  for (const Problem p : {Problem{127, 129, 131}, Problem{1041, 1247, 139}, Problem{300, 260, 1028},
                          Problem{1025, 1025, 1025}, Problem{256, 256, 8192}, Problem{16, 4096, 512},
                          Problem{1, 4099, 2053}, Problem{2053, 1, 4099}}) {
    Workbench bench(p, device, 999);
    for (const Params& params : test::tested_parameter_points(alg)) {
      const Configuration cfg{&alg, params, p, Scope::kernel, false};
      const std::string what = alg.name + " " + params.variant() + " " + params.canonical() + " at " +
                               std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
      const std::unique_ptr<Prepared> prepared = prepare(bench, cfg, device, states, TimingOptions{});
      if (!prepared->ready()) continue;  // skipped here, or failed: the test above says so
      if (!alg.deterministic(p, prepared->outcome().resolved)) {
        ++exempt;
        continue;
      }
      const std::size_t count = std::size_t(p.m * p.n);
      auto c_now = [&] {
        std::vector<float> c(count);
        if (alg.backend == Backend::host || alg.backend == Backend::streamed)
          std::copy(bench.host_c(), bench.host_c() + count, c.begin());
        else
          copy_to_host(c.data(), bench.device_c(), count * sizeof(float));
        return c;
      };
      const std::vector<float> first = c_now();  // the verified run's C
      // Once more on the verified inputs (a warm-up run: every timed trial runs on inputs of its own,
      // issue #81, so its C is another product).
      prepared->warmup();
      synchronize_device();
      const std::vector<float> second = c_now();
      EXPECT_EQ(std::memcmp(first.data(), second.data(), count * sizeof(float)), 0) << what << ": C differs";
      ++repeated;
    }
  }
  std::printf("%s: %zu configurations bit-identical twice, %zu nondeterministic by design\n",
              alg.name.c_str(), repeated, exempt);
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryAlgorithm, ::testing::ValuesIn(test::lab().all()),
                         [](const auto& info) { return info.param->name; });

}  // namespace
}  // namespace mmlab
