// A Redistribution (core/layout.hpp) made executable on one rank's buffers: the messages of one
// grouped exchange on the communication stream (NCCL, the copy engines or MPI), each sent straight
// from the source buffer and received straight into the destination where it is one contiguous
// rectangle there, through a staging buffer otherwise; the rank's own rectangles copied locally.
#pragma once

#include <map>
#include <memory>

#include "core/layout.hpp"
#include "distributed/context.hpp"

namespace mmlab::dist {

class Mover {
 public:
  // `from_pitch` and `to_pitch`: the local buffers' row lengths (Share::cols) on this rank.
  Mover(Context& ctx, Redistribution plan, long from_pitch, long to_pitch);
  // `from` -> `to` on the communication stream, with `world` (all ranks call it; a rank with nothing
  // to move still takes part). With plan.in_place `to` is `from` and nothing local is copied.
  void run(Comm& world, const float* from, float* to);
  const Redistribution& plan() const { return plan_; }
  std::size_t staging_bytes() const { return staging_ * sizeof(float); }

 private:
  Context& ctx_;
  Redistribution plan_;
  long from_pitch_, to_pitch_;
  // Where each peer's message is staged (offset in floats), for those that are not one contiguous
  // rectangle on this rank's side.
  std::map<int, std::size_t> send_at_, recv_at_;
  std::size_t staging_ = 0;
  std::shared_ptr<Memory> stage_;
};

}  // namespace mmlab::dist
