// The copy-engine transport (transport = copy_engine): blocks move between the GPUs of one host by
// cudaMemcpyAsync from a peer's buffer, on the DMA copy engines, so no SM is taken from the products
// a transfer overlaps (NCCL moves data with kernels of its own).
//
// Protocol of one exchange (a Comm call, made by every rank of the communicator in the same order):
//   1. each sender records an interprocess event after the data it sends (its communication stream)
//      and sends each receiver an offer over MPI: the CUDA IPC handle of the allocation holding the
//      data, the offset and count, and the event's handle;
//   2. each receiver maps the allocation (once: mappings are kept until close_peer_memory), makes its
//      stream wait for the sender's event, copies, records its own event and answers with its handle;
//   3. each sender makes its stream wait for its receivers' events, so nothing it does later on that
//      stream (or on the compute stream, ordered after it) overwrites data still being read.
// MPI carries only the handshakes, on the host, as the calls are enqueued; the GPUs never wait for
// MPI. An exchange's pulls from several peers run at once (side streams forked from the communication
// stream and joined back), so a rank that receives from two peers keeps two links busy. Broadcasts are pulls from the root; a reduction's sums are a kernel on the root reading its
// peers' mapped partials (the reductions follow the products, so that kernel overlaps none).
#include <cuda.h>
#include <mpi.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/context.hpp"
#include "runtime/cuda_check.hpp"

namespace mmlab::dist {

namespace {

struct Offer {
  cudaIpcMemHandle_t memory;  // the allocation holding the data
  cudaIpcEventHandle_t ready;  // recorded after the data was complete
  unsigned long long offset = 0, count = 0;
};
struct Answer {
  cudaIpcEventHandle_t done;  // recorded after the receiver's copy
};
constexpr int kOfferTag = 7101, kAnswerTag = 7102;

template <class Handle>
std::string key_of(int peer, const Handle& h) {
  return std::to_string(peer) + ":" + std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

// Peer allocations mapped into this process, by the peer's world rank and handle; shared by every
// communicator (an allocation is mapped once per process).
std::map<std::string, char*>& mapped() {
  static std::map<std::string, char*> all;
  return all;
}

// The start of the allocation holding `p` (IPC handles name whole allocations).
char* allocation_base(const void* p) {
  using Fn = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  static const Fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    MMLAB_CHECK(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !f)
      throw std::runtime_error("copy_engine: the driver has no cuMemGetAddressRange");
    return reinterpret_cast<Fn>(f);
  }();
  CUdeviceptr base = 0;
  std::size_t bytes = 0;
  if (fn(&base, &bytes, CUdeviceptr(p)) != CUDA_SUCCESS)
    throw std::runtime_error("copy_engine: a buffer that is not device memory of this process");
  return reinterpret_cast<char*>(base);
}

// The partials a pass of the reduction's kernel adds (passed by value).
template <int N>
struct Peers {
  const float* p[N];
  int n = 0;
};

__global__ void sum_kernel(float* __restrict__ out, const float* base, Peers<7> peers, std::size_t count) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < count;
       e += std::size_t(gridDim.x) * blockDim.x) {
    float s = base[e];
    for (int i = 0; i < peers.n; ++i) s += peers.p[i][e];
    out[e] = s;
  }
}

class CopyEngineComm final : public Comm {
 public:
  CopyEngineComm(MPI_Comm c, cudaStream_t* stream) : comm_(c), stream_(stream) {
    MPI_Comm_rank(c, &rank_);
    MPI_Comm_size(c, &size_);
    MPI_Comm_group(c, &group_);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group_);
    const unsigned flags = cudaEventDisableTiming | cudaEventInterprocess;
    MMLAB_CHECK(cudaEventCreateWithFlags(&ready_, flags));
    MMLAB_CHECK(cudaEventCreateWithFlags(&done_, flags));
    MMLAB_CHECK(cudaIpcGetEventHandle(&ready_handle_, ready_));
    MMLAB_CHECK(cudaIpcGetEventHandle(&done_handle_, done_));
    MMLAB_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  }
  ~CopyEngineComm() override {
    for (auto& e : peer_events_) cudaEventDestroy(e.second);
    for (Side& x : sides_) cudaStreamDestroy(x.stream), cudaEventDestroy(x.joined);
    cudaEventDestroy(fork_);
    MPI_Barrier(comm_);  // no rank destroys its events while another still holds them open
    cudaEventDestroy(ready_);
    cudaEventDestroy(done_);
    MPI_Group_free(&group_);
    MPI_Group_free(&world_group_);
    MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void exchange(const std::vector<Transfer>& ts) override {
    bool sends = false, receives = false;
    for (const Transfer& t : ts) sends |= t.send_count > 0, receives |= t.recv_count > 0;
    if (sends) MMLAB_CHECK(cudaEventRecord(ready_, *stream_));
    std::vector<Offer> in(ts.size()), out(ts.size());
    std::vector<MPI_Request> req;
    // A rank's transfers to itself are copies; the k-th such send feeds the k-th such receive.
    std::vector<const Transfer*> self_send, self_recv;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const Transfer& t = ts[i];
      if (t.recv_count && t.src == rank_) self_recv.push_back(&t);
      if (t.send_count && t.dst == rank_) self_send.push_back(&t);
      if (t.recv_count && t.src != rank_) post_recv(&in[i], sizeof(Offer), t.src, kOfferTag, req);
      if (t.send_count && t.dst != rank_) {
        out[i] = offer(t.send, t.send_count);
        post_send(&out[i], sizeof(Offer), t.dst, kOfferTag, req);
      }
    }
    wait(req);
    if (self_send.size() != self_recv.size()) throw std::logic_error("copy_engine: unmatched transfers to self");
    for (std::size_t i = 0; i < self_send.size(); ++i) {
      if (self_send[i]->send_count != self_recv[i]->recv_count)
        throw std::logic_error("copy_engine: a transfer to self of another size");
      MMLAB_CHECK(cudaMemcpyAsync(self_recv[i]->recv, self_send[i]->send, self_send[i]->send_count * sizeof(float),
                                  cudaMemcpyDeviceToDevice, *stream_));
    }
    // The pulls from peers at once: the first on the communication stream, each other on a side stream
    // forked from it (the copy engines of several links busy together), all joined before `done`.
    MMLAB_CHECK(cudaEventRecord(fork_, *stream_));
    std::size_t side = 0;
    bool first = true;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      if (!ts[i].recv_count || ts[i].src == rank_) continue;
      if (first) {
        pull(ts[i].src, in[i], ts[i].recv, ts[i].recv_count, *stream_);
        first = false;
        continue;
      }
      Side& x = side_stream(side++);
      MMLAB_CHECK(cudaStreamWaitEvent(x.stream, fork_, 0));
      pull(ts[i].src, in[i], ts[i].recv, ts[i].recv_count, x.stream);
      MMLAB_CHECK(cudaEventRecord(x.joined, x.stream));
    }
    for (std::size_t k = 0; k < side; ++k) MMLAB_CHECK(cudaStreamWaitEvent(*stream_, sides_[k].joined, 0));
    if (receives) MMLAB_CHECK(cudaEventRecord(done_, *stream_));
    const Answer mine{done_handle_};
    std::vector<Answer> answers(ts.size());
    for (std::size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].recv_count && ts[i].src != rank_) post_send(&mine, sizeof mine, ts[i].src, kAnswerTag, req);
      if (ts[i].send_count && ts[i].dst != rank_) post_recv(&answers[i], sizeof(Answer), ts[i].dst, kAnswerTag, req);
    }
    wait(req);
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (ts[i].send_count && ts[i].dst != rank_) wait_for(ts[i].dst, answers[i].done);
  }

  void broadcast(float* buf, std::size_t count, int root) override {
    if (size_ == 1 || count == 0) return;
    std::vector<MPI_Request> req;
    if (rank_ == root) {
      MMLAB_CHECK(cudaEventRecord(ready_, *stream_));
      const Offer o = offer(buf, count);
      std::vector<Answer> answers(static_cast<std::size_t>(size_));
      for (int r = 0; r < size_; ++r)
        if (r != root) post_send(&o, sizeof o, r, kOfferTag, req), post_recv(&answers[r], sizeof(Answer), r, kAnswerTag, req);
      wait(req);
      for (int r = 0; r < size_; ++r)
        if (r != root) wait_for(r, answers[r].done);
      return;
    }
    Offer o;
    post_recv(&o, sizeof o, root, kOfferTag, req);
    wait(req);
    pull(root, o, buf, count, *stream_);
    MMLAB_CHECK(cudaEventRecord(done_, *stream_));
    const Answer mine{done_handle_};
    post_send(&mine, sizeof mine, root, kAnswerTag, req);
    wait(req);
  }

  void reduce_sum(const float* send, float* recv, std::size_t count, int root) override {
    if (size_ == 1 || count == 0) {
      if (send != recv && count)
        MMLAB_CHECK(cudaMemcpyAsync(recv, send, count * sizeof(float), cudaMemcpyDeviceToDevice, *stream_));
      return;
    }
    std::vector<MPI_Request> req;
    if (rank_ != root) {
      MMLAB_CHECK(cudaEventRecord(ready_, *stream_));
      const Offer o = offer(send, count);
      Answer answer;
      post_send(&o, sizeof o, root, kOfferTag, req);
      post_recv(&answer, sizeof answer, root, kAnswerTag, req);
      wait(req);
      wait_for(root, answer.done);
      return;
    }
    std::vector<Offer> offers(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r)
      if (r != root) post_recv(&offers[r], sizeof(Offer), r, kOfferTag, req);
    wait(req);
    // recv = send + the peers' partials, read over the links, seven peers per pass.
    const float* base = send;
    Peers<7> group;
    for (int r = 0; r < size_; ++r) {
      if (r == root) continue;
      group.p[group.n++] = mapped_data(r, offers[r], count);
      wait_for(r, offers[r].ready);
      if (group.n == 7 || r == last_peer(root)) {
        sum_kernel<<<std::min<std::size_t>((count + 255) / 256, 4096), 256, 0, *stream_>>>(recv, base, group, count);
        MMLAB_CHECK_LAUNCH();
        base = recv, group.n = 0;
      }
    }
    MMLAB_CHECK(cudaEventRecord(done_, *stream_));
    const Answer mine{done_handle_};
    for (int r = 0; r < size_; ++r)
      if (r != root) post_send(&mine, sizeof mine, r, kAnswerTag, req);
    wait(req);
  }

 private:
  int last_peer(int root) const { return root == size_ - 1 ? size_ - 2 : size_ - 1; }
  int world_rank(int r) const {
    int w = 0;
    MPI_Group_translate_ranks(group_, 1, &r, world_group_, &w);
    return w;
  }
  void post_send(const void* p, std::size_t bytes, int to, int tag, std::vector<MPI_Request>& req) {
    req.emplace_back();
    MPI_Isend(p, int(bytes), MPI_BYTE, to, tag, comm_, &req.back());
  }
  void post_recv(void* p, std::size_t bytes, int from, int tag, std::vector<MPI_Request>& req) {
    req.emplace_back();
    MPI_Irecv(p, int(bytes), MPI_BYTE, from, tag, comm_, &req.back());
  }
  static void wait(std::vector<MPI_Request>& req) {
    Waiting w("the copy engines' handshake with the other ranks");
    MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE);
    req.clear();
  }

  Offer offer(const float* data, std::size_t count) const {
    Offer o;
    char* base = allocation_base(data);
    MMLAB_CHECK(cudaIpcGetMemHandle(&o.memory, base));
    o.ready = ready_handle_;
    o.offset = static_cast<unsigned long long>(reinterpret_cast<const char*>(data) - base);
    o.count = count;
    return o;
  }
  // The peer's data, mapped into this process (once per allocation until close_peer_memory).
  const float* mapped_data(int peer, const Offer& o, std::size_t expected) {
    if (o.count != expected)
      throw std::logic_error("copy_engine: rank " + std::to_string(peer) + " offered " + std::to_string(o.count) +
                             " floats where " + std::to_string(expected) + " were expected");
    char*& base = mapped()[key_of(world_rank(peer), o.memory)];
    if (!base) {
      void* p = nullptr;
      MMLAB_CHECK(cudaIpcOpenMemHandle(&p, o.memory, cudaIpcMemLazyEnablePeerAccess));
      base = static_cast<char*>(p);
    }
    return reinterpret_cast<const float*>(base + o.offset);
  }
  void pull(int peer, const Offer& o, float* dst, std::size_t count, cudaStream_t on) {
    const float* src = mapped_data(peer, o, count);
    wait_for(peer, o.ready, on);
    MMLAB_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyDeviceToDevice, on));
  }
  // A stream waits for the peer's event as last recorded (its record preceded its message).
  void wait_for(int peer, const cudaIpcEventHandle_t& h, cudaStream_t on) {
    cudaEvent_t& e = peer_events_[key_of(peer, h)];
    if (!e) MMLAB_CHECK(cudaIpcOpenEventHandle(&e, h));
    MMLAB_CHECK(cudaStreamWaitEvent(on, e, 0));
  }
  void wait_for(int peer, const cudaIpcEventHandle_t& h) { wait_for(peer, h, *stream_); }

  // A side stream for a pull beside the first, and its event joining the communication stream (made
  // as an exchange first needs that many).
  struct Side {
    cudaStream_t stream = nullptr;
    cudaEvent_t joined = nullptr;
  };
  Side& side_stream(std::size_t k) {
    while (sides_.size() <= k) {
      Side x;
      MMLAB_CHECK(cudaStreamCreateWithFlags(&x.stream, cudaStreamNonBlocking));
      MMLAB_CHECK(cudaEventCreateWithFlags(&x.joined, cudaEventDisableTiming));
      sides_.push_back(x);
    }
    return sides_[k];
  }

  MPI_Comm comm_;
  MPI_Group group_, world_group_;
  cudaStream_t* stream_;
  int rank_ = 0, size_ = 1;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  cudaIpcEventHandle_t ready_handle_{}, done_handle_{};
  std::map<std::string, cudaEvent_t> peer_events_;
  cudaEvent_t fork_ = nullptr;  // the communication stream where an exchange's pulls begin
  std::vector<Side> sides_;
};

}  // namespace

std::unique_ptr<Comm> copy_engine_comm(int color, int key, CUstream_st** stream) {
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
  return std::make_unique<CopyEngineComm>(c, stream);
}

void close_peer_memory() {
  for (auto& m : mapped()) cudaIpcCloseMemHandle(m.second);
  mapped().clear();
}

}  // namespace mmlab::dist
