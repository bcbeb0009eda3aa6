// Issue #81 for distributed rows, on the CPU backend in a job of one rank: every timed trial on inputs
// of its own (every rank's blocks of A and B made again from the trial's seed), so a run that keeps its
// verified C and hands it back on inputs it has seen, or never takes the new inputs, fails; its honest
// twin (the same bookkeeping, the product every run) passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/distributed.hpp"
#include "harness/pipeline.hpp"
#include "tests/lab.hpp"

namespace mmlab {
namespace {

using test::no_gpu;

enum class Trick { none, memo, stale };

// dist_cannon's run with a trick: `memo` keeps the C of the verification's inputs and copies it back
// whenever those inputs return (no product); `stale` never takes new inputs; `none` (the twin) keeps
// the same books and multiplies every run.
class Tricked final : public DistributedRun {
 public:
  Tricked(std::unique_ptr<DistributedRun> inner, unsigned long long verified, Trick trick)
      : inner_(std::move(inner)), verified_(verified), now_(verified), trick_(trick) {}
  bool use_inputs(unsigned long long seed) override {
    now_ = seed;
    return trick_ == Trick::stale ? true : inner_->use_inputs(seed);
  }
  void poison() override { inner_->poison(); }
  void run() override {
    float* c = const_cast<float*>(inner_->c_data());  // the CPU backend's: host memory
    const std::size_t count = inner_->c_block().values.size();
    if (trick_ == Trick::memo && now_ == verified_ && !kept_.empty()) {
      std::copy(kept_.begin(), kept_.end(), c);
      return;
    }
    inner_->run();
    if (now_ == verified_ && kept_.empty()) kept_.assign(c, c + count);
  }
  PhaseTimes phases() const override { return inner_->phases(); }
  CBlock c_block() override { return inner_->c_block(); }
  const float* c_data() const override { return inner_->c_data(); }
  Model model() const override { return inner_->model(); }
  std::string engine() override { return inner_->engine(); }
  double local_gflops() override { return inner_->local_gflops(); }
  double link_gbytes_per_s(double bytes) override { return inner_->link_gbytes_per_s(bytes); }
  double latency_ms() override { return inner_->latency_ms(); }
  std::size_t bytes_per_rank() const override { return inner_->bytes_per_rank(); }
  void release_memory() override { inner_->release_memory(); }

 private:
  std::unique_ptr<DistributedRun> inner_;
  unsigned long long verified_, now_;
  Trick trick_;
  std::vector<float> kept_;
};

Outcome tricked(Trick trick, const Problem& p) {
  const Algorithm& cannon = *test::lab().find("dist_cannon");
  Algorithm a = cannon;
  a.make_distributed = [inner = cannon.make_distributed, trick](const DistributedSetup& s) {
    return std::make_unique<Tricked>(inner(s), s.seed, trick);
  };
  Params params("direct");
  params.set("grid", "1x1");
  params.set("engine", "eigen");
  params.set("transport", "nccl");  // resolved to MPI between host processes
  params.set("comm_ctas", "auto");
  params.set("slabs", "1");
  Workbench bench(p, no_gpu(), 7);
  StateCache states;
  TimingOptions timing;
  timing.stop.min_trials = timing.stop.max_trials = 8;
  return run_configuration(bench, {&a, params, p, Scope::kernel, false}, no_gpu(), states, &timing);
}

// A product of 0.05 ms or more on one core (the rule's floor): 320x256x192 is 31 MFLOP.
const Problem kShape{320, 256, 192};

TEST(DistributedFresh, TheTwinPasses) {
  const Outcome o = tricked(Trick::none, kShape);
  EXPECT_EQ(o.status, Status::ok) << o.reason;
  EXPECT_EQ(o.samples.size(), 8u);
}

TEST(DistributedFresh, ARunThatKeepsItsAnswersFails) {
  const Outcome o = tricked(Trick::memo, kShape);
  EXPECT_EQ(o.status, Status::failed);
  EXPECT_NE(o.reason.find("answers from memory"), std::string::npos) << o.reason;
}

TEST(DistributedFresh, ARunThatNeverTakesNewInputsFails) {
  const Outcome o = tricked(Trick::stale, {33, 17, 9});
  EXPECT_EQ(o.status, Status::failed);
  EXPECT_NE(o.reason.find("is not the product of that trial's inputs"), std::string::npos) << o.reason;
}

}  // namespace
}  // namespace mmlab

namespace mmlab {
namespace {

// The rule itself: two fast trials on seen inputs against five slow own ones only raise a suspicion;
// the confirming trials decide.
TEST(FreshTrials, ASuspicionIsConfirmedOrCleared) {
  std::vector<double> seen{1.0, 1.1}, own{5, 5.2, 5.1, 5.3, 5.4};
  EXPECT_TRUE(FreshTrials::suspicious(seen, own));
  EXPECT_FALSE(FreshTrials::suspicious({1.0}, own));                  // one trial on seen inputs
  EXPECT_FALSE(FreshTrials::suspicious(seen, {5, 5, 5, 5}));         // four own trials
  EXPECT_FALSE(FreshTrials::suspicious({0.01, 0.01}, {0.04, 0.04, 0.04, 0.04, 0.04}));  // below the floor
  EXPECT_TRUE(FreshTrials::suspicious({4.7, 1.0}, own));             // one seen trial slow: a host's jitter
  EXPECT_FALSE(FreshTrials::suspicious({4.7, 4.6}, own));            // both as fast as the own ones
  // A memo: every trial on seen inputs fast.
  std::vector<double> s1 = seen, o1 = own;
  const Reason memo = FreshTrials::confirm(s1, o1, [](bool fresh) { return fresh ? 5.0 : 1.0; });
  ASSERT_TRUE(memo.has_value());
  EXPECT_NE(memo->find("answers from memory"), std::string::npos);
  EXPECT_EQ(s1.size(), 2u + FreshTrials::kConfirmPairs);
  EXPECT_EQ(o1.size(), 5u + FreshTrials::kConfirmPairs);
  // A memo whose seen trials come out slow once (a host's jitter): still confirmed.
  std::vector<double> s3 = seen, o3 = own;
  int slow = 0;
  EXPECT_TRUE(FreshTrials::confirm(s3, o3, [&](bool fresh) { return fresh ? 5.0 : slow++ == 3 ? 6.0 : 1.0; }));
  // A memo whose seen trials come out slow twice: still confirmed (two are 2 x kConfirmPairs pairs).
  std::vector<double> s4 = seen, o4 = own;
  slow = 0;
  EXPECT_TRUE(FreshTrials::confirm(s4, o4, [&](bool fresh) {
    if (fresh) return 5.0;
    ++slow;
    return slow == 3 || slow == 9 ? 6.0 : 1.0;
  }));
  // Two modes by chance: the confirming trials land in both, on either inputs.
  std::vector<double> s2 = seen, o2 = own;
  int call = 0;
  std::string cleared;
  EXPECT_FALSE(FreshTrials::confirm(s2, o2, [&](bool) { return ++call % 3 ? 5.0 : 1.7; }, &cleared));
  EXPECT_NE(cleared.find("a suspicion of answers from memory"), std::string::npos) << cleared;
  EXPECT_NE(cleared.find("cleared by 12 more trials of each"), std::string::npos) << cleared;
}

}  // namespace
}  // namespace mmlab

namespace mmlab {
namespace {

// The confirmation's false-alarm bound, counted: of the C(2N, N) orders of N honest trials of each kind
// (exchangeable, ties aside), those with at most kConfirmInversions pairs seen-slower-than-own.
TEST(FreshTrials, HonestTrialsAreConfirmedAsAMemoAtMostOnceInTwoHundred) {
  constexpr int n = FreshTrials::kConfirmPairs;
  // ways[i][j][u]: orders of i seen and j own trials with u pairs where the seen one is the slower.
  std::vector<std::vector<std::vector<double>>> ways(
      n + 1, std::vector<std::vector<double>>(n + 1, std::vector<double>(n * n + 1, 0)));
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j)
      for (int u = 0; u <= n * n; ++u) {
        if (i == 0 || j == 0) {
          ways[i][j][u] = u == 0;
          continue;
        }
        // The slowest trial is a seen one (slower than all j own ones) or an own one.
        ways[i][j][u] = (u >= j ? ways[i - 1][j][u - j] : 0) + ways[i][j - 1][u];
      }
  double total = 0, alarm = 0;
  for (int u = 0; u <= n * n; ++u) total += ways[n][n][u], alarm += u <= FreshTrials::kConfirmInversions ? ways[n][n][u] : 0;
  EXPECT_LE(alarm / total, 0.005);
  EXPECT_GE(FreshTrials::kConfirmInversions, 2 * n);  // two slow seen trials do not clear a memo
}

}  // namespace
}  // namespace mmlab
