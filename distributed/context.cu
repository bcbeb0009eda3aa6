#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>

#include "distributed/context.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/gpu.hpp"
#include "runtime/timing.hpp"
#include "core/random.hpp"

namespace mmlab::dist {

// How long a held run's blocking kernel waits for every rank to enqueue its work before it gives up:
// the slowest rank's enqueueing (the copy engines' handshakes over MPI among it) and the meeting.
// A run enqueues tens of operations; a rank that takes seconds waits for the GPU inside, and the
// pipeline then times its configuration on the host's clock, the row saying why.
constexpr double kDistributedGateTimeoutSeconds = 2.0;

namespace {

using Clock = std::chrono::steady_clock;

class DeviceMemory final : public Memory {
 public:
  explicit DeviceMemory(std::size_t count) : b_(count * sizeof(float), Buffer::Kind::device) {}
  float* get() override { return b_.as<float>(); }

 private:
  Buffer b_;
};

class HostMemory final : public Memory {
 public:
  explicit HostMemory(std::size_t count) : v_(count) {}
  float* get() override { return v_.data(); }

 private:
  std::vector<float> v_;
};

__global__ void fill_block_kernel(float* __restrict__ x, long rows, long cols, long row0, long col0,
                                  long matrix_rows, long matrix_cols, Inputs kind, unsigned long long seed,
                                  unsigned long long id) {
  const long count = rows * cols;
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    const long r = e / cols, c = e % cols;
    x[e] = input_value(kind, seed, id, row0 + r, col0 + c, matrix_rows, matrix_cols);
  }
}

// Communicators live as long as the process: NCCL's and MPI's splits are collective and costly.
std::map<std::string, std::unique_ptr<Comm>>& comms() {
  static std::map<std::string, std::unique_ptr<Comm>> all;
  return all;
}

std::map<std::string, std::unique_ptr<Context>>& contexts() {
  static std::map<std::string, std::unique_ptr<Context>> all = [] {
    at_job_end([] {  // communicators go before MPI does
      comms().clear();
      contexts().clear();
    });
    return std::map<std::string, std::unique_ptr<Context>>{};
  }();
  return all;
}

}  // namespace

struct Context::Impl {
  cudaStream_t compute = nullptr, comm = nullptr;
  struct Span {
    cudaEvent_t begin, end;
    Phase phase;
  };
  std::vector<Span> spans;
  std::size_t used = 0;
  Span& next(Phase phase) {
    if (used == spans.size()) {
      Span s{};
      MMLAB_CHECK(cudaEventCreate(&s.begin));
      MMLAB_CHECK(cudaEventCreate(&s.end));
      spans.push_back(s);
    }
    spans[used].phase = phase;
    return spans[used++];
  }
  cudaEvent_t compute_done = nullptr, comm_done = nullptr;
  // A held run: the blocking kernel (made at the first held run) and the events around its work.
  std::vector<cudaEvent_t> marks;  // mark_communication's events, reused from each start()
  std::size_t marks_used = 0;
  std::unique_ptr<StreamGate> gate;
  cudaEvent_t run_begin = nullptr, run_end = nullptr;
  std::string id;  // engine:transport; communicators are this context's own (they enqueue on its stream)
};

Transport transport_of(const std::string& name) {
  return name == "copy_engine" ? Transport::copy_engine : Transport::nccl;
}

std::string copy_engine_unavailable() {
  if (job().local_size == job().size) return {};
  return "copy_engine needs every rank on one host (" + std::to_string(job().local_size) + " of " +
         std::to_string(job().size) + " ranks on this one): NCCL instead";
}

Context::Context(const std::string& engine, Transport transport, const DeviceInfo& device)
    : impl_(std::make_unique<Impl>()),
      device_(!mmlab::Engine::on_host(engine_spec(engine))),
      transport_(transport) {
  ensure_mpi();
  impl_->id = engine + (transport == Transport::copy_engine ? ":copy_engine" : "");
  // NVLink multicast (NVLS) stays off in this lab's multi-GPU runs, for every rank, unless asked.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  if (device_) {
    MMLAB_CHECK(cudaStreamCreateWithFlags(&impl_->compute, cudaStreamNonBlocking));
    MMLAB_CHECK(cudaStreamCreateWithFlags(&impl_->comm, cudaStreamNonBlocking));
    MMLAB_CHECK(cudaEventCreateWithFlags(&impl_->compute_done, cudaEventDisableTiming));
    MMLAB_CHECK(cudaEventCreateWithFlags(&impl_->comm_done, cudaEventDisableTiming));
  }
  engine_ = std::make_unique<mmlab::Engine>(engine_spec(engine), device, states_);
}

Context::~Context() {
  if (!device_) return;
  for (auto& s : impl_->spans) cudaEventDestroy(s.begin), cudaEventDestroy(s.end);
  if (impl_->run_begin) cudaEventDestroy(impl_->run_begin), cudaEventDestroy(impl_->run_end);
  for (cudaEvent_t e : impl_->marks) cudaEventDestroy(e);
  cudaEventDestroy(impl_->compute_done);
  cudaEventDestroy(impl_->comm_done);
  cudaStreamDestroy(impl_->compute);
  cudaStreamDestroy(impl_->comm);
}

CUstream_st* Context::compute_stream() const { return impl_->compute; }

Comm& Context::comm(const std::string& name, int color, int key, int ctas) {
  const bool nccl = device_ && transport_ == Transport::nccl;
  const std::string suffix = nccl && ctas > 0 ? ":ctas" + std::to_string(ctas) : "";
  const std::string id = impl_->id + ":" + name + suffix;
  auto it = comms().find(id);
  if (it != comms().end()) return *it->second;
  if (!device_) return *(comms()[id] = mpi_comm(color, key));
  if (!nccl) return *(comms()[id] = copy_engine_comm(color, key, &impl_->comm));
  auto world = comms().find(impl_->id + ":world" + suffix);
  if (world == comms().end())
    world = comms().emplace(impl_->id + ":world" + suffix, nccl_world(&impl_->comm, ctas)).first;
  if (name == "world") return *world->second;
  return *(comms()[id] = nccl_split(*world->second, color, key, &impl_->comm, ctas));
}

void Context::release_peers() {
  if (!device_ || transport_ != Transport::copy_engine) return;
  close_peer_memory();
  barrier();
}

std::shared_ptr<Memory> Context::allocate(std::size_t count) {
  if (device_) return std::make_shared<DeviceMemory>(count);
  return std::make_shared<HostMemory>(count);
}

void Context::fill(float* x, long rows, long cols, long row0, long col0, const Problem& whole,
                   unsigned long long seed, unsigned long long id) {
  if (rows <= 0 || cols <= 0) return;
  const long matrix_rows = id == kMatrixA ? whole.m : whole.k,
             matrix_cols = id == kMatrixA ? whole.k : whole.n;
  if (device_) {
    const long blocks = std::min<long>((rows * cols + 255) / 256, 65535);
    fill_block_kernel<<<unsigned(blocks), 256, 0, impl_->compute>>>(x, rows, cols, row0, col0, matrix_rows,
                                                                    matrix_cols, whole.inputs, seed, id);
    MMLAB_CHECK_LAUNCH();
    MMLAB_CHECK(cudaStreamSynchronize(impl_->compute));
    return;
  }
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c)
      x[r * cols + c] = input_value(whole.inputs, seed, id, row0 + r, col0 + c, matrix_rows, matrix_cols);
}

void Context::fill_nan(float* x, std::size_t count) {
  if (device_) {
    // 0xFFFFFFFF is a NaN; done when this returns (the run's streams do not wait for the legacy one)
    MMLAB_CHECK(cudaMemsetAsync(x, 0xFF, count * sizeof(float), compute_stream()));
    MMLAB_CHECK(cudaStreamSynchronize(compute_stream()));
    return;
  }
  std::fill(x, x + count, std::nanf(""));
}

void Context::copy_to_host(float* dst, const float* src, std::size_t count) {
  if (device_)
    MMLAB_CHECK(cudaMemcpy(dst, src, count * sizeof(float), cudaMemcpyDeviceToHost));
  else
    std::copy(src, src + count, dst);
}

void Context::copy_2d(float* dst, long ld_dst, const float* src, long ld_src, long rows, long cols) {
  if (rows <= 0 || cols <= 0) return;
  if (device_) {
    MMLAB_CHECK(cudaMemcpy2DAsync(dst, ld_dst * sizeof(float), src, ld_src * sizeof(float),
                                  cols * sizeof(float), rows, cudaMemcpyDeviceToDevice, impl_->comm));
    return;
  }
  for (long r = 0; r < rows; ++r) std::copy(src + r * ld_src, src + r * ld_src + cols, dst + r * ld_dst);
}

void Context::product(const float* a, const float* b, float* c, long m, long n, long k, bool accumulate, long ldc) {
  if (m == 0 || n == 0) return;
  if (ldc == 0) ldc = n;
  if (k == 0) {
    if (accumulate) return;
    if (device_)
      MMLAB_CHECK(cudaMemset2DAsync(c, sizeof(float) * ldc, 0, sizeof(float) * n, m, impl_->compute));
    else
      for (long r = 0; r < m; ++r) std::fill(c + r * ldc, c + r * ldc + n, 0.f);
    return;
  }
  engine_->gemm(a, b, c, ldc, m, n, k, accumulate, impl_->compute);  // contiguous A and B
}

void Context::product_of_band(const float* a, long lda, const float* b, float* c, long m, long n, long k,
                              bool accumulate, float* scratch) {
  if (lda != k && m > 0 && k > 0) {
    if (device_)
      MMLAB_CHECK(cudaMemcpy2DAsync(scratch, k * sizeof(float), a, lda * sizeof(float), k * sizeof(float), m,
                                    cudaMemcpyDeviceToDevice, impl_->compute));
    else
      for (long r = 0; r < m; ++r) std::copy(a + r * lda, a + r * lda + k, scratch + r * k);
    a = scratch;
  }
  product(a, b, c, m, n, k, accumulate);
}

bool Context::hold_next_run(const std::function<void()>& all_enqueued) {
  if (!device_) return false;
  if (!impl_->gate) {
    impl_->gate = std::make_unique<StreamGate>(kDistributedGateTimeoutSeconds);
    MMLAB_CHECK(cudaEventCreate(&impl_->run_begin));
    MMLAB_CHECK(cudaEventCreate(&impl_->run_end));
  }
  all_enqueued_ = all_enqueued;
  return true;
}

void Context::start() {
  phases_ = {};
  impl_->used = 0, impl_->marks_used = 0;
  gpu_ms_ = -1, gate_timed_out_ = false;
  held_ = bool(all_enqueued_);
  if (!held_) return;
  // Both streams behind the blocking kernel: the communication stream waits for the compute stream's
  // start, which waits for the kernel.
  impl_->gate->hold(impl_->compute);
  MMLAB_CHECK(cudaEventRecord(impl_->run_begin, impl_->compute));
  MMLAB_CHECK(cudaEventRecord(impl_->compute_done, impl_->compute));
  MMLAB_CHECK(cudaStreamWaitEvent(impl_->comm, impl_->compute_done, 0));
}

void Context::compute(const std::function<void()>& f) { timed(Phase::compute, f); }
void Context::communicate(const std::function<void()>& f) { timed(Phase::comm, f); }
void Context::relayout(const std::function<void()>& f) { timed(Phase::layout, f); }

namespace {
void add_phase(PhaseTimes& t, Context::Phase phase, double ms) {
  if (phase == Context::Phase::compute) {
    t.compute_ms += ms;
    return;
  }
  t.comm_ms += ms;
  if (phase == Context::Phase::layout) t.layout_ms += ms;
}
}  // namespace

void Context::timed(Phase phase, const std::function<void()>& f) {
  if (!device_) {  // MPI and Eigen return complete: the host clock times them
    const auto t0 = Clock::now();
    f();
    add_phase(phases_, phase, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    return;
  }
  const cudaStream_t stream = phase == Phase::compute ? impl_->compute : impl_->comm;
  Impl::Span& s = impl_->next(phase);
  MMLAB_CHECK(cudaEventRecord(s.begin, stream));
  f();
  MMLAB_CHECK(cudaEventRecord(s.end, stream));
}

void Context::compute_waits_for_communication() {
  if (!device_) return;  // MPI calls return complete
  MMLAB_CHECK(cudaEventRecord(impl_->comm_done, impl_->comm));
  MMLAB_CHECK(cudaStreamWaitEvent(impl_->compute, impl_->comm_done, 0));
}

int Context::mark_communication() {
  if (!device_) return 0;  // MPI calls return complete
  if (impl_->marks_used == impl_->marks.size()) {
    cudaEvent_t e = nullptr;
    MMLAB_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    impl_->marks.push_back(e);
  }
  MMLAB_CHECK(cudaEventRecord(impl_->marks[impl_->marks_used], impl_->comm));
  return int(impl_->marks_used++);
}

void Context::compute_waits_for(int mark) {
  if (!device_) return;
  MMLAB_CHECK(cudaStreamWaitEvent(impl_->compute, impl_->marks.at(std::size_t(mark)), 0));
}

void Context::communication_waits_for_compute() {
  if (!device_) return;
  MMLAB_CHECK(cudaEventRecord(impl_->compute_done, impl_->compute));
  MMLAB_CHECK(cudaStreamWaitEvent(impl_->comm, impl_->compute_done, 0));
}

void Context::finish() {
  if (!device_) return;
  const bool held = held_;
  if (held) {  // the stop event after both streams' work; then every rank meets, then the streams go
    const std::function<void()> meet = std::move(all_enqueued_);
    all_enqueued_ = nullptr, held_ = false;
    MMLAB_CHECK(cudaEventRecord(impl_->comm_done, impl_->comm));
    MMLAB_CHECK(cudaStreamWaitEvent(impl_->compute, impl_->comm_done, 0));
    MMLAB_CHECK(cudaEventRecord(impl_->run_end, impl_->compute));
    try {
      meet();
    } catch (...) {
      impl_->gate->release();
      throw;
    }
    impl_->gate->release();
  }
  Waiting w("the GPU's products and transfers (NCCL's wait for the other ranks among them)");
  MMLAB_CHECK(cudaStreamSynchronize(impl_->compute));
  MMLAB_CHECK(cudaStreamSynchronize(impl_->comm));
  if (held) {
    float ms = 0;
    MMLAB_CHECK(cudaEventElapsedTime(&ms, impl_->run_begin, impl_->run_end));
    gpu_ms_ = ms, gate_timed_out_ = impl_->gate->timed_out();
  }
  for (std::size_t i = 0; i < impl_->used; ++i) {
    float ms = 0;
    MMLAB_CHECK(cudaEventElapsedTime(&ms, impl_->spans[i].begin, impl_->spans[i].end));
    add_phase(phases_, impl_->spans[i].phase, ms);
  }
}

Context& context(const std::string& engine, Transport transport, const DeviceInfo& device) {
  auto& c = contexts()[engine + (transport == Transport::copy_engine ? ":copy_engine" : "")];
  if (!c) c = std::make_unique<Context>(engine, transport, device);
  return *c;
}

}  // namespace mmlab::dist
