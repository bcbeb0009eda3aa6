// Moving a matrix between layouts (redistribute.hpp).
#include "distributed/redistribute.hpp"

#include <utility>
#include <vector>

namespace mmlab::dist {

namespace {

// A message is sent (or received) in place when it is one rectangle of whole rows of its buffer.
bool contiguous(const std::vector<LocalCopy>& list, long pitch, bool source) {
  if (list.size() != 1) return false;
  const LocalCopy& c = list.front();
  return c.rows == 1 || (c.cols == pitch && (source ? c.src_col0 : c.dst_col0) == 0);
}

std::size_t entries(const std::vector<LocalCopy>& list) {
  std::size_t n = 0;
  for (const LocalCopy& c : list) n += std::size_t(c.count());
  return n;
}

}  // namespace

Mover::Mover(Context& ctx, Redistribution plan, long from_pitch, long to_pitch)
    : ctx_(ctx), plan_(std::move(plan)), from_pitch_(from_pitch), to_pitch_(to_pitch) {
  for (const auto& [peer, list] : plan_.sends)
    if (!contiguous(list, from_pitch_, true)) send_at_[peer] = staging_, staging_ += entries(list);
  for (const auto& [peer, list] : plan_.receives)
    if (!contiguous(list, to_pitch_, false)) recv_at_[peer] = staging_, staging_ += entries(list);
  if (staging_) stage_ = ctx_.allocate(staging_);
}

void Mover::run(Comm& world, const float* from, float* to) {
  std::vector<Transfer> transfers;
  for (const auto& [peer, list] : plan_.sends) {
    const float* data;
    if (auto at = send_at_.find(peer); at != send_at_.end()) {  // packed, rectangle after rectangle
      float* packed = stage_->get() + at->second;
      for (const LocalCopy& c : list) {
        ctx_.copy_2d(packed, c.cols, from + c.src_row0 * from_pitch_ + c.src_col0, from_pitch_, c.rows, c.cols);
        packed += c.count();
      }
      data = stage_->get() + at->second;
    } else {
      data = from + list.front().src_row0 * from_pitch_ + list.front().src_col0;
    }
    transfers.push_back({data, entries(list), peer, nullptr, 0, peer});
  }
  for (const auto& [peer, list] : plan_.receives) {
    auto at = recv_at_.find(peer);
    float* data = at != recv_at_.end() ? stage_->get() + at->second
                                       : to + list.front().dst_row0 * to_pitch_ + list.front().dst_col0;
    transfers.push_back({nullptr, 0, peer, data, entries(list), peer});
  }
  for (const LocalCopy& c : plan_.local)
    ctx_.copy_2d(to + c.dst_row0 * to_pitch_ + c.dst_col0, to_pitch_, from + c.src_row0 * from_pitch_ + c.src_col0,
                 from_pitch_, c.rows, c.cols);
  // Every rank takes part in the group, also one with nothing to move (the copy engines' handshakes
  // and NCCL's group need no partner then).
  world.exchange(transfers);
  for (const auto& [peer, at] : recv_at_) {  // unpacked, in the order the sender packed
    const float* packed = stage_->get() + at;
    for (const LocalCopy& c : plan_.receives.at(peer)) {
      ctx_.copy_2d(to + c.dst_row0 * to_pitch_ + c.dst_col0, to_pitch_, packed, c.cols, c.rows, c.cols);
      packed += c.count();
    }
  }
}

}  // namespace mmlab::dist
