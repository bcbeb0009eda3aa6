// out_of_core's rates (algorithms/composite/out_of_core.cu chooses its plan by them): the engine's
// products, the copies beside them and the add pass, measured on one GPU for one engine with the
// pipeline's own pieces (composite/out_of_core_worker.cuh).
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/composite/out_of_core_worker.cuh"
#include "runtime/timing.hpp"

namespace mmlab::out_of_core {

// The rates the plan and the model take, measured on one GPU for one engine, each the median of three
// after a warm-up. calibrate(): the engine's products with outputs of side 1024 to 16384 at depth
// kRateDepth, and of side 8192 at depths 512 to 16384 (as far as half the free memory allows); then,
// while the engine's products run on another stream (as in a run: measured on the H100, a copy of
// 16 KiB rows 128 KiB apart moved 49 GB/s alone and 33 beside a product), copies in and out with rows
// of 2 to 64 KiB 128 KiB apart and of whole rows, each alone and both directions at once, and the add
// pass. product_gflops(): the engine's product of one shape (a plan's candidate tile).
class RateProbe {
 public:
  RateProbe(const EngineSpec& engine, const DeviceInfo& gpu) : gpu_(gpu), engine_(engine, gpu_, states_, false) {
    MMLAB_CHECK(cudaSetDevice(gpu_.ordinal));
    for (cudaStream_t* s : {&s_, &t_, &u_}) MMLAB_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  }
  ~RateProbe() {
    cudaSetDevice(gpu_.ordinal);
    for (cudaStream_t s : {s_, t_, u_}) cudaStreamDestroy(s);
  }

  std::optional<double> product_gflops(long m, long n, long k) {
    MMLAB_CHECK(cudaSetDevice(gpu_.ordinal));
    const auto o = operands(m, n, k);
    if (!o) return std::nullopt;
    return 2e-6 * double(m) * n * k / median_ms([&] { engine_.run(o->p, o->io, s_); });
  }

  StreamRates calibrate() {
    MMLAB_CHECK(cudaSetDevice(gpu_.ordinal));
    StreamRates r;
    for (long side = 1024; side <= 16384; side *= 2)
      if (const auto g = product_gflops(side, side, kRateDepth)) r.gflops.points.push_back({double(side), *g});
    const std::optional<double> at = product_gflops(8192, 8192, kRateDepth);
    for (long depth = 512; depth <= 16384 && at; depth *= 2)
      if (const auto g = depth == kRateDepth ? at : product_gflops(8192, 8192, depth))
        r.depth_gain.points.push_back({double(depth), *g / *at});
    // The load: the engine's products of 4096 on stream t_, as many as cover the copies measured.
    const auto load = operands(4096, 4096, 4096);
    MMLAB_CHECK(load ? cudaSuccess : cudaErrorMemoryAllocation);
    const double product_ms = 2e-6 * 4096.0 * 4096 * 4096 / r.gflops.at(4096);
    const auto under_load = [&](double bytes, const std::function<void()>& enqueue) {
      const long products = long(4 * bytes / 20e6 / product_ms) + 2;  // 4 copies at 20 GB/s or more
      for (long i = 0; i < products; ++i) engine_.run(load->p, load->io, t_);
      const double ms = median_ms(enqueue);
      MMLAB_CHECK(cudaStreamSynchronize(t_));
      return ms;
    };
    const std::size_t f = sizeof(float), pitch = std::size_t(128) << 10, span = 4096 * pitch;
    Buffer host(2 * span, Buffer::Kind::pinned_host), device(2 * span, Buffer::Kind::device);
    float *h = host.as<float>(), *d = device.as<float>(), *h2 = h + span / f, *d2 = d + span / f;
    std::memset(h, 0, 2 * span);
    cudaEvent_t go, done;
    MMLAB_CHECK(cudaEventCreateWithFlags(&go, cudaEventDisableTiming));
    MMLAB_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    for (double row = 2048; row <= 2 * 65536; row *= 2) {
      const bool whole = row > 65536;  // then 64 MiB of contiguous memory
      const long cols = whole ? long((64 << 20) / f) : long(row / f);
      const long rows = whole ? 1 : std::min(4096L, (64L << 20) / long(row)), ld = whole ? cols : long(pitch / f);
      const double bytes = double(f) * rows * cols, point = whole ? kWholeRows : row;
      const double in = under_load(bytes, [&] { copy_rows(d, cols, h, ld, rows, cols, cudaMemcpyHostToDevice, s_); });
      const double out = under_load(bytes, [&] { copy_rows(h, ld, d, cols, rows, cols, cudaMemcpyDeviceToHost, s_); });
      const double both = under_load(2 * bytes, [&] {  // in on s_, out on u_ (other buffers), at once
        MMLAB_CHECK(cudaEventRecord(go, s_));
        MMLAB_CHECK(cudaStreamWaitEvent(u_, go));
        copy_rows(d, cols, h, ld, rows, cols, cudaMemcpyHostToDevice, s_);
        copy_rows(h2, ld, d2, cols, rows, cols, cudaMemcpyDeviceToHost, u_);
        MMLAB_CHECK(cudaEventRecord(done, u_));
        MMLAB_CHECK(cudaStreamWaitEvent(s_, done));
      });
      r.in_gbs.points.push_back({point, 1e-6 * bytes / in});
      r.out_gbs.points.push_back({point, 1e-6 * bytes / out});
      // Both at once as the model takes it: (in alone + out alone) / together; 1 when they share the link.
      r.both.points.push_back({point, std::max(1.0, (in + out) / both)});
    }
    cudaEventDestroy(go), cudaEventDestroy(done);
    // The add pass over 4096 x 4096 floats: read the tile and the panel, write the panel.
    const long rows = 4096, cols = 4096;
    const double add = median_ms([&] { device_add(d + rows * cols, cols, d, rows, cols, true, s_); });
    r.add_gbs = 12e-6 * double(rows) * cols / add;
    return r;
  }

 private:
  struct Operands {  // a product's operands, made once
    Buffer a, b, c, w;
    Problem p;
    Buffers io;
  };

  // Operands of an m x n x k product; null where they take more than half the free memory or the
  // engine cannot run it.
  std::unique_ptr<Operands> operands(long m, long n, long k) {
    const Problem p{m, n, k, Inputs::uniform};
    const std::size_t f = sizeof(float);
    const PreparedRun& run = engine_.prepared(p);
    if (!run.ready() || f * (m * k + k * n + m * n) + run.workspace_bytes() > free_device_bytes() / 2) return nullptr;
    auto o = std::make_unique<Operands>();
    o->p = p;
    o->a = Buffer(f * m * k, Buffer::Kind::device), o->b = Buffer(f * k * n, Buffer::Kind::device);
    o->c = Buffer(f * m * n, Buffer::Kind::device);
    o->w = Buffer(std::max<std::size_t>(run.workspace_bytes(), 1), Buffer::Kind::device);
    fill_input_device(o->a.as<float>(), m, k, Inputs::uniform, 1, kMatrixA, s_);
    fill_input_device(o->b.as<float>(), k, n, Inputs::uniform, 1, kMatrixB, s_);
    o->io.a = o->a.as<float>(), o->io.b = o->b.as<float>(), o->io.c = o->c.as<float>(), o->io.workspace = o->w.get();
    return o;
  }

  // What `enqueue` takes on s_: the median of three after a warm-up.
  double median_ms(const std::function<void()>& enqueue) { return median_call_ms(enqueue, s_, 1); }

  DeviceInfo gpu_;
  StateCache states_;
  Engine engine_;  // on gpu_, each product shape prepared once
  cudaStream_t s_ = nullptr, t_ = nullptr, u_ = nullptr;
};

}  // namespace mmlab::out_of_core
