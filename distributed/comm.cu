// The communicators of the distributed algorithms: NCCL between GPUs (enqueued on a stream) and
// MPI between host processes (blocking), behind dist::Comm.
#include <mpi.h>
#include <nccl.h>

#include <climits>
#include <stdexcept>

#include "distributed/context.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/job.hpp"

#define MMLAB_NCCL(call)                                                                                    \
  do {                                                                                                      \
    const ncclResult_t r_ = (call);                                                                         \
    if (r_ != ncclSuccess)                                                                                  \
      throw ::mmlab::CudaError(std::string(#call) + ": " + ncclGetErrorString(r_) + " (" +                  \
                               ::mmlab::repository_path(__FILE__) + ":" + std::to_string(__LINE__) + ")");  \
  } while (0)

namespace mmlab::dist {

namespace {

class NcclComm final : public Comm {
 public:
  NcclComm(ncclComm_t c, cudaStream_t* stream) : comm_(c), stream_(stream) {
    MMLAB_NCCL(ncclCommUserRank(c, &rank_));
    MMLAB_NCCL(ncclCommCount(c, &size_));
  }
  ~NcclComm() override { ncclCommDestroy(comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(const std::vector<Transfer>& ts) override {
    MMLAB_NCCL(ncclGroupStart());
    for (const Transfer& t : ts) {
      if (t.send_count) MMLAB_NCCL(ncclSend(t.send, t.send_count, ncclFloat, t.dst, comm_, *stream_));
      if (t.recv_count) MMLAB_NCCL(ncclRecv(t.recv, t.recv_count, ncclFloat, t.src, comm_, *stream_));
    }
    MMLAB_NCCL(ncclGroupEnd());
  }
  void broadcast(float* buf, std::size_t count, int root) override {
    if (size_ > 1 && count) MMLAB_NCCL(ncclBroadcast(buf, buf, count, ncclFloat, root, comm_, *stream_));
  }
  void reduce_sum(const float* send, float* recv, std::size_t count, int root) override {
    if (size_ > 1)
      MMLAB_NCCL(ncclReduce(send, recv, count, ncclFloat, ncclSum, root, comm_, *stream_));
    else if (send != recv)
      MMLAB_CHECK(cudaMemcpyAsync(recv, send, count * sizeof(float), cudaMemcpyDeviceToDevice, *stream_));
  }
  ncclComm_t get() const { return comm_; }
  void* native() const override { return comm_; }

 private:
  ncclComm_t comm_;
  cudaStream_t* stream_;
  int rank_ = 0, size_ = 1;
};

int mpi_count(std::size_t count) {
  if (count > std::size_t(INT_MAX)) throw std::runtime_error("MPI backend: a message over 2^31 floats");
  return int(count);
}

class MpiComm final : public Comm {
 public:
  explicit MpiComm(MPI_Comm c) : comm_(c) {
    MPI_Comm_rank(c, &rank_);
    MPI_Comm_size(c, &size_);
  }
  ~MpiComm() override {
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(const std::vector<Transfer>& ts) override {
    std::vector<MPI_Request> requests;
    for (const Transfer& t : ts) {
      if (t.recv_count) {
        requests.emplace_back();
        MPI_Irecv(t.recv, mpi_count(t.recv_count), MPI_FLOAT, t.src, 0, comm_, &requests.back());
      }
      if (t.send_count) {
        requests.emplace_back();
        MPI_Isend(t.send, mpi_count(t.send_count), MPI_FLOAT, t.dst, 0, comm_, &requests.back());
      }
    }
    Waiting w("MPI messages between ranks");
    MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
  void broadcast(float* buf, std::size_t count, int root) override {
    Waiting w("an MPI broadcast");
    if (size_ > 1 && count) MPI_Bcast(buf, mpi_count(count), MPI_FLOAT, root, comm_);
  }
  void reduce_sum(const float* send, float* recv, std::size_t count, int root) override {
    if (size_ == 1) {
      if (send != recv) std::copy(send, send + count, recv);
      return;
    }
    const void* in = rank_ == root && send == recv ? MPI_IN_PLACE : send;
    Waiting w("an MPI reduction");
    MPI_Reduce(in, recv, mpi_count(count), MPI_FLOAT, MPI_SUM, root, comm_);
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Comm> mpi_comm(int color, int key) {
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
  return std::make_unique<MpiComm>(c);
}

std::unique_ptr<Comm> nccl_world(CUstream_st** stream, int ctas) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (ctas > 0) config.maxCTAs = ctas;
  ncclUniqueId uid;
  if (job().rank == 0) MMLAB_NCCL(ncclGetUniqueId(&uid));
  Waiting w("NCCL's communicator set-up");
  MPI_Bcast(&uid, sizeof uid, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t c;
  MMLAB_NCCL(ncclCommInitRankConfig(&c, job().size, uid, job().rank, &config));
  return std::make_unique<NcclComm>(c, stream);
}

// A split shares the world's buffers and channels (splitShare): every communicator of a context
// enqueues on the context's one communication stream, so parent and children never run at once. Not
// shared, each of a sweep's 20-odd communicators per engine keeps its own buffers. A four-GPU sweep of
// 135 configurations per problem found a rank short of memory at N = 4096 with eight small runs held
// (e7da90c); with shared resources the rest of that sweep ran to 16384 (data/distributed/x4/
// sweep-2026-11-27b, memory.log). The communicators' share of that memory was not measured apart.
std::unique_ptr<Comm> nccl_split(Comm& world, int color, int key, CUstream_st** stream, int ctas) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (ctas > 0) config.maxCTAs = ctas;
  config.splitShare = 1;
  ncclComm_t c;
  MMLAB_NCCL(ncclCommSplit(static_cast<NcclComm&>(world).get(), color, key, &c, &config));
  return std::make_unique<NcclComm>(c, stream);
}

}  // namespace mmlab::dist
