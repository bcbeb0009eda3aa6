// The runner without a GPU: the host algorithm verified on the awkward shapes, and a planted
// host bug caught.
#include <gtest/gtest.h>

#include "harness/pipeline.hpp"
#include "tests/lab.hpp"

namespace mmlab {
namespace {

using test::no_gpu;

TEST(HostRun, EigenMatchesFloat64OnAwkwardShapes) {
  const Algorithm& eigen = *test::lab().find("eigen");
  StateCache states;
  for (const Problem p : {Problem{1, 1, 1}, Problem{7, 7, 7}, Problem{17, 33, 65}, Problem{127, 129, 131},
                          Problem{1041, 1247, 139}, Problem{535, 792, 414}}) {
    Workbench bench(p, no_gpu(), 3);
    for (const std::string threads : {"1", "2"}) {
      Params params("default");
      params.set("threads", threads);
      const Outcome o =
          run_configuration(bench, {&eigen, params, p, Scope::kernel, false}, no_gpu(), states, nullptr);
      EXPECT_EQ(o.status, Status::ok) << p.m << "x" << p.n << "x" << p.k << ": " << o.reason;
    }
  }
}

TEST(HostRun, GpuAlgorithmsAreSkippedWithTheReason) {
  Workbench bench({8, 8, 8}, no_gpu(), 3);
  StateCache states;
  Params params("default");
  params.set("tile", "16");
  const Outcome o = run_configuration(
      bench, {test::lab().find("tiled"), params, {8, 8, 8}, Scope::kernel, false}, no_gpu(), states, nullptr);
  EXPECT_EQ(o.status, Status::skipped);
  EXPECT_EQ(o.reason, "no CUDA GPU (test)");
}

TEST(HostRun, AWrongHostAlgorithmFailsVerification) {
  Algorithm wrong;
  wrong.name = "wrong";
  wrong.backend = Backend::host;
  wrong.variants = {{"default", ""}};
  wrong.run = [](const RunArgs& r) {  // C = A * B with the last term of every dot product missing
    const Problem& p = r.problem;
    for (long i = 0; i < p.m; ++i)
      for (long j = 0; j < p.n; ++j) {
        float s = 0;
        for (long q = 0; q + 1 < p.k; ++q) s += r.a[i * p.k + q] * r.b[q * p.n + j];
        r.c[i * p.n + j] = s;
      }
  };
  Workbench bench({40, 30, 20}, no_gpu(), 3);
  StateCache states;
  const Outcome o = run_configuration(bench, {&wrong, Params("default"), {40, 30, 20}, Scope::kernel, false},
                                      no_gpu(), states, nullptr);
  EXPECT_EQ(o.status, Status::failed);
  EXPECT_FALSE(o.verdict->ok);

  TimingOptions t;
  const Outcome batched = run_configuration(
      bench, {test::lab().find("eigen"), Params("default"), {40, 30, 20}, Scope::batched, false}, no_gpu(),
      states, &t);
  EXPECT_EQ(batched.status, Status::skipped);
}

}  // namespace
}  // namespace mmlab
