// poison_cost_probe: what filling C with a poison before every timed trial (issue #60) does to the
// time of a small problem. Each case is one configuration on one problem, timed by the lab's own
// trial timer (the blocking kernel holds the stream; CUDA events around the work) in pairs of trials,
// the two orders alternating: one right after C is filled with a trial's NaN (as the harness does,
// ahead of the blocking kernel and the start event), one without. C stays where the previous call left
// it in L2 in both (the previous trial wrote it), so what the fill can change is what else it evicts
// (A and B, where C is large beside the L2) and the GPU's state at the start event.
//   build/bin/mmlab-poison-cost-probe [--pairs N] [SPEC ...]   (SPEC: algorithm:variant[:params])
// A line per case: the median with and without the fill, their ratio, and the median of the paired
// ratios (with / without) with its 5th-95th percentiles.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "core/invocation.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/timing.hpp"

namespace mmlab {
namespace {

double quantile(std::vector<double> x, double q) {
  std::sort(x.begin(), x.end());
  return x[std::size_t(q * double(x.size() - 1) + 0.5)];
}

int probe(int argc, char** argv) {
  int pairs = 200;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--pairs") && i + 1 < argc) pairs = std::atoi(argv[++i]);
    else specs.push_back(argv[i]);
  }
  if (specs.empty()) specs = {"cublas:default", "flagship:cuda_cores", "flagship:tensor_cores"};
  const DeviceInfo d = query_device(0);
  if (!d.present) {
    std::puts("no GPU");
    return 77;
  }
  const long shapes[][3] = {{64, 64, 64},    {128, 128, 128},  {256, 256, 256}, {512, 512, 512},
                            {1024, 1024, 1024}, {2048, 2048, 2048}, {383, 405, 1508}, {1375, 526, 130},
                            {4096, 4096, 256}};
  std::printf("device %s, %d pairs per case\n", d.name.c_str(), pairs);
  std::printf("%-28s %16s %12s %12s %8s %22s\n", "spec", "m x n x k", "with ms", "without ms", "ratio",
              "paired ratio (5-95%)");
  StateCache states;
  cudaStream_t s = nullptr;
  MMLAB_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (const std::string& text : specs) {
    const EngineSpec e = EngineSpec::parse(text, algorithms::single_process());
    for (const auto& shape : shapes) {
      Problem p;
      p.m = shape[0], p.n = shape[1], p.k = shape[2];
      PreparedRun run = Invocation(*e.algorithm, d).prepare(p, e.params, states);
      if (!run.ready()) continue;
      const std::size_t f = sizeof(float), c_count = std::size_t(p.m) * p.n;
      Buffer a(f * p.m * p.k, Buffer::Kind::device), b(f * p.k * p.n, Buffer::Kind::device),
          c(f * c_count, Buffer::Kind::device),
          w(std::max<std::size_t>(run.workspace_bytes(), 1), Buffer::Kind::device);
      fill_input_device(a.as<float>(), p.m, p.k, p.inputs, 1, kMatrixA, s);
      fill_input_device(b.as<float>(), p.k, p.n, p.inputs, 1, kMatrixB, s);
      DeviceTiming t;
      t.run = &run;
      t.io.a = a.as<float>(), t.io.b = b.as<float>(), t.io.c = c.as<float>(), t.io.workspace = w.get();
      t.stream = s;
      const std::unique_ptr<TrialTimer> timer = make_device_timer(t);
      for (int i = 0; i < 5; ++i) timer->untimed();
      std::vector<double> with, without, ratio;
      for (int i = 0; i < pairs; ++i) {
        double x[2];
        for (int j = 0; j < 2; ++j) {
          const bool poisoned = (i + j) % 2 == 0;  // the order alternates pair by pair
          if (poisoned) poison_device(c.as<float>(), c_count, s, trial_poison_bits(std::uint64_t(i)));
          x[poisoned] = timer->trial().ms;
        }
        with.push_back(x[1]), without.push_back(x[0]), ratio.push_back(x[1] / x[0]);
      }
      MMLAB_CHECK(cudaStreamSynchronize(s));
      const double mw = quantile(with, 0.5), mo = quantile(without, 0.5);
      char dims[48];
      std::snprintf(dims, sizeof dims, "%ldx%ldx%ld", p.m, p.n, p.k);
      std::printf("%-28s %16s %12.5f %12.5f %8.4f %8.4f (%.4f-%.4f)\n", text.c_str(), dims, mw, mo, mw / mo,
                  quantile(ratio, 0.5), quantile(ratio, 0.05), quantile(ratio, 0.95));
      std::fflush(stdout);
    }
  }
  cudaStreamDestroy(s);
  return 0;
}

}  // namespace
}  // namespace mmlab

int main(int argc, char** argv) {
  try {
    return mmlab::probe(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poison_cost_probe: %s\n", e.what());
    return 1;
  }
}
