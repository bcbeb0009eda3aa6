// The machinery the distributed algorithms share: a communicator (between GPUs NCCL, or the copy
// engines through CUDA IPC; MPI between host processes), a local engine for each rank's products
// (cuBLAS, register_tiled, the flagship's tensor_cores, Eigen), the two streams that let
// communication overlap the products, and phase timing. The algorithms (dist_cannon, dist_summa,
// dist_dns) hold only their schedules; the decompositions' arithmetic is core/decompositions.hpp.
#pragma once

#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "core/decompositions.hpp"
#include "core/distributed.hpp"
#include "core/invocation.hpp"
#include "runtime/engine.hpp"
#include "runtime/job.hpp"

namespace mmlab::dist {

// One send and one receive of a grouped exchange (either count may be 0).
struct Transfer {
  const float* send = nullptr;
  std::size_t send_count = 0;
  int dst = 0;
  float* recv = nullptr;
  std::size_t recv_count = 0;
  int src = 0;
};

// A communicator over device buffers (NCCL, enqueued on the communication stream) or host
// buffers (MPI, blocking). Ranks are this communicator's own.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void exchange(const std::vector<Transfer>& transfers) = 0;  // as one group
  virtual void broadcast(float* buf, std::size_t count, int root) = 0;
  virtual void reduce_sum(const float* send, float* recv, std::size_t count, int root) = 0;
  // The library's own handle (an ncclComm_t for NCCL's communicators), for a library that takes one
  // (cuBLASMp); null for the others.
  virtual void* native() const { return nullptr; }
};

// The transports between GPUs: NCCL's kernels, or the copy engines (copy_engine: each receiver
// pulls from its peers' buffers, mapped through CUDA IPC handles exchanged over MPI, by
// cudaMemcpyAsync; no SM takes part, except in a reduction's sums).
enum class Transport { nccl, copy_engine };
Transport transport_of(const std::string& name);
// copy_engine needs every rank on one host; "" when it can run here, else why not.
std::string copy_engine_unavailable();


// Memory of one rank's run: device memory for GPU engines, host memory for Eigen.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual float* get() = 0;
};

// The building blocks (comm.cu, engines.cu). Device communicators enqueue on *stream.
std::unique_ptr<Comm> mpi_comm(int color, int key);  // MPI_Comm_split of the world
std::unique_ptr<Comm> nccl_world(CUstream_st** stream, int ctas);
std::unique_ptr<Comm> nccl_split(Comm& world, int color, int key, CUstream_st** stream, int ctas);
std::unique_ptr<Comm> copy_engine_comm(int color, int key, CUstream_st** stream);  // copy_engine.cu
// Unmaps every peer buffer this process mapped (copy_engine). Each mapping is made once and kept
// until then; a rank frees memory a peer may have mapped only after every rank has called this.
void close_peer_memory();
// The engine the `engine` axis's value names, as an engine spec (engines.cu); its products run by the
// lab's Engine (runtime/engine.hpp).
EngineSpec engine_spec(const std::string& name);
// The rows its products want (Variant::row_alignment; 1 on the host): shorter ones are padded.
long engine_row_alignment(const std::string& name);

// One rank's context for one engine and transport: backend, streams, communicators, phase timing.
class Context {
 public:
  Context(const std::string& engine, Transport transport, const DeviceInfo& device);
  ~Context();
  bool on_device() const { return device_; }
  mmlab::Engine& engine() { return *engine_; }
  CUstream_st* compute_stream() const;  // null on the host
  // A communicator of the ranks that share `color` (ordered by `key`); made once per job and kept.
  // `ctas` > 0 caps the thread blocks NCCL runs its transfers with (ncclConfig_t::maxCTAs): fewer
  // SMs taken from the products that the transfers overlap. 0: NCCL's choice.
  Comm& comm(const std::string& name, int color, int key, int ctas = 0);
  // Collective: every rank unmaps its peers' memory, then all meet. Called before memory a peer
  // may have read is freed (a no-op, without the meeting, for transports that map nothing).
  void release_peers();

  std::shared_ptr<Memory> allocate(std::size_t count);
  // x (rows x cols, row-major, pitch cols) = the block at (row0, col0) of matrix `id` (kMatrixA or
  // kMatrixB) of the problem `whole`, made from the seed: every rank makes its own blocks, no scatter.
  void fill(float* x, long rows, long cols, long row0, long col0, const Problem& whole,
            unsigned long long seed, unsigned long long id);
  void fill_nan(float* x, std::size_t count);
  void copy_to_host(float* dst, const float* src, std::size_t count);  // synchronous
  // dst (rows x cols, pitch ld_dst) = src (rows x cols, pitch ld_src), on the communication stream
  void copy_2d(float* dst, long ld_dst, const float* src, long ld_src, long rows, long cols);

  // The local product, through the engine, with empty shapes handled (k = 0 gives C = 0).
  // C's rows `ldc` apart (0: n; a band of C's columns where ldc > n).
  void product(const float* a, const float* b, float* c, long m, long n, long k, bool accumulate, long ldc = 0);
  // The same with A's rows `lda` apart (a band of its columns): the band is first copied into
  // `scratch` (m x k, contiguous) on the compute stream, as the engines take contiguous operands.
  void product_of_band(const float* a, long lda, const float* b, float* c, long m, long n, long k, bool accumulate,
                       float* scratch);

  enum class Phase { compute, comm, layout };
  // Phases, timed: a product on the compute stream, communication on the communication stream;
  // `relayout`: communication that moves blocks between the starting layout and the schedule's
  // (counted in comm_ms and in layout_ms).
  void compute(const std::function<void()>& f);
  void communicate(const std::function<void()>& f);
  void relayout(const std::function<void()>& f);
  void compute_waits_for_communication();  // the next product needs what was just received
  // A point on the communication stream (what was enqueued there so far), for a later product to wait
  // for while more is enqueued behind it (a slab's fetch, then the next slab's); 0 on the host.
  int mark_communication();
  void compute_waits_for(int mark);
  void communication_waits_for_compute();  // the next receive overwrites what the product read
  void finish();                           // wait for both streams; sum this run's phase times
  void start();                            // begin a run: phase times from zero
  // The next run (start() to finish()) timed on the GPU: start() holds both streams behind the
  // blocking kernel and records the start event; finish() records the stop event once both streams'
  // work is enqueued, calls `all_enqueued` (the ranks' meeting), lets the streams go, then waits.
  // False on the host (nothing to hold).
  bool hold_next_run(const std::function<void()>& all_enqueued);
  double gpu_ms() const { return gpu_ms_; }  // the last held run's time between its events; < 0: none
  bool gate_timed_out() const { return gate_timed_out_; }
  PhaseTimes phases() const { return phases_; }
  // The local rate measured for products of m x n x k on this context's engine (0 until measured).
  double& measured_gflops(long m, long n, long k) { return rates_[{m, n, k}]; }

 private:
  void timed(Phase phase, const std::function<void()>& f);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool device_ = false;
  Transport transport_ = Transport::nccl;
  StateCache states_;  // the engine's algorithm's state (before the engine, which holds it)
  std::unique_ptr<mmlab::Engine> engine_;
  PhaseTimes phases_;
  std::map<std::tuple<long, long, long>, double> rates_;
  std::function<void()> all_enqueued_;  // set: the run in progress is held (hold_next_run)
  bool held_ = false, gate_timed_out_ = false;
  double gpu_ms_ = -1;
};

// The shared context of this process (one per engine and transport; communicators persist across
// runs).
Context& context(const std::string& engine, Transport transport, const DeviceInfo& device);

// The axes every distributed algorithm has: its process grid, the engine of the local products,
// the transport between GPUs and NCCL's thread blocks.
Axis grid_axis(const std::string& default_value, std::vector<std::string> values);
Axis engine_axis();
Axis transport_axis();
Axis comm_ctas_axis();
// Common checks: the grid against the job, the engine and transport against the machine.
Reason check_job(const Grid& grid, const Params& q, const DeviceInfo& device);

}  // namespace mmlab::dist
