// Enqueued work captured once into a CUDA graph and replayed: one launch's host cost per call, whatever
// the work enqueues (a transpose or split pass, a memset, a kernel). The flagship dispatchers' launch=graph.
// Work that cannot be captured (it synchronizes, or calls what a graph cannot hold) is remembered as
// such and run directly from then on. Not thread-safe: the caller holds its own lock.
#pragma once

#include <cstddef>
#include <functional>
#include <map>

#include "runtime/cuda_check.hpp"

namespace mmlab {
namespace {

template <class Key>
class GraphReplays {
 public:
  explicit GraphReplays(std::size_t most = 1024) : most_(most) {}  // graphs kept at once; all dropped past it
  GraphReplays(const GraphReplays&) = delete;
  GraphReplays& operator=(const GraphReplays&) = delete;
  ~GraphReplays() { drop(); }

  // `enqueue`'s work on `stream`: its graph replayed, captured first on the key's first call.
  void run(const Key& key, cudaStream_t stream, const std::function<void()>& enqueue) {
    if (replays_.size() >= most_) drop();
    Replay& replay = replays_[key];
    if (!replay.exec && replay.capturable) capture(replay, stream, enqueue);
    if (!replay.exec) return enqueue();
    MMLAB_CHECK(cudaGraphLaunch(replay.exec, stream));
  }

 private:
  struct Replay {
    cudaGraphExec_t exec = nullptr;
    bool capturable = true;  // false once a capture failed: the work runs directly
  };

  static void capture(Replay& replay, cudaStream_t stream, const std::function<void()>& enqueue) {
    MMLAB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      replay.capturable = false;  // e.g. work that synchronizes
      return;
    }
    if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || !graph) {
      (void)cudaGetLastError();  // the capture was invalidated (a call a graph cannot hold)
      replay.capturable = false;
    } else {
      MMLAB_CHECK(cudaGraphInstantiate(&replay.exec, graph, 0));
    }
    if (graph) MMLAB_CHECK(cudaGraphDestroy(graph));
  }

  void drop() {
    for (auto& [key, r] : replays_)
      if (r.exec) cudaGraphExecDestroy(r.exec);
    replays_.clear();
  }

  std::size_t most_;
  std::map<Key, Replay> replays_;
};

}  // namespace
}  // namespace mmlab
