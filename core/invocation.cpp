// One way to run an algorithm (core/invocation.hpp).
#include "core/invocation.hpp"

namespace mmlab {

void* StateCache::get(const Algorithm& a, int device) {
  if (!a.make_state) return nullptr;
  std::lock_guard<std::mutex> hold(lock_);
  auto [it, fresh] = states_.try_emplace({&a, device});
  if (fresh) it->second = a.make_state();
  return it->second.get();
}

Reason launch_limits(const LaunchConfig& lc, const DeviceInfo& d) {
  const auto threads = lc.block.volume();
  if (threads == 0) return "empty block";
  if (threads > (unsigned long long)d.max_threads_per_block)
    return "block " + std::to_string(lc.block.x) + "x" + std::to_string(lc.block.y) + "x" +
           std::to_string(lc.block.z) + " has " + std::to_string(threads) + " threads; the device allows " +
           std::to_string(d.max_threads_per_block);
  if (lc.shared_bytes > d.shared_per_block_optin)
    return "needs " + std::to_string(lc.shared_bytes) +
           " bytes of shared memory per block; the device allows " + std::to_string(d.shared_per_block_optin);
  if (lc.grid.y > d.max_grid_y || lc.grid.z > d.max_grid_z)
    return "grid " + std::to_string(lc.grid.x) + "x" + std::to_string(lc.grid.y) + "x" +
           std::to_string(lc.grid.z) + " exceeds the device's grid limits";
  return std::nullopt;
}

Params default_params(const Algorithm& a, const std::string& variant) {
  Params q(variant);
  for (const Axis& x : a.axes)
    if (x.applies_to(variant)) q.set(x.name, x.default_value);
  return q;
}

Params Invocation::resolve(const Problem& p, const Params& asked) const {
  if (!a_->resolve) return asked;
  const auto key = std::make_tuple(p.m, p.n, p.k, inputs_name(p.inputs), asked.variant() + "|" + asked.canonical());
  std::lock_guard<std::mutex> hold(resolved_->lock);
  auto it = resolved_->of.find(key);
  if (it == resolved_->of.end()) it = resolved_->of.emplace(key, a_->resolve(p, asked, *d_)).first;
  return it->second;
}

Reason Invocation::check(const Problem& p, const Params& resolved, LaunchConfig* launch) const {
  if (Reason why = a_->compiled.missing(a_->name, resolved)) return why;
  if (a_->supports)
    if (Reason why = a_->supports(p, resolved, *d_)) return why;
  if (!a_->launch_config || a_->backend == Backend::distributed) return std::nullopt;
  const LaunchConfig lc = a_->launch_config(p, resolved, *d_);
  if (launch) *launch = lc;
  if (a_->backend == Backend::device) return launch_limits(lc, *d_);
  return std::nullopt;
}

void Invocation::run(RunArgs args, StateCache& states) const {
  args.state = states.get(*a_, d_->ordinal);
  args.device = d_;
  a_->run(args);
}

}  // namespace mmlab
