// One way to run an algorithm (core/invocation.hpp).
#include "core/invocation.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace mmlab {

namespace {
constexpr std::size_t kPartialAlign = 256;  // the partial product's alignment in the workspace
}  // namespace

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
  if (a_->unavailable)
    if (std::string why = a_->unavailable(); !why.empty()) return why;
  if (a_->supports)
    if (Reason why = a_->supports(p, resolved, *d_)) return why;
  if (!a_->launch_config || a_->backend == Backend::distributed) return std::nullopt;
  const LaunchConfig lc = a_->launch_config(p, resolved, *d_);
  if (launch) *launch = lc;
  if (a_->backend == Backend::device) return launch_limits(lc, *d_);
  return std::nullopt;
}

PreparedRun Invocation::prepare(const Problem& p, const Params& asked, StateCache& states, AddPartial add) const {
  PreparedRun r;
  r.a_ = a_, r.d_ = d_, r.p_ = p, r.add_ = add;
  r.params_ = std::make_shared<const Params>(resolve(p, asked));
  LaunchConfig lc;
  if ((r.skip_ = check(p, *r.params_, &lc))) return r;
  if (a_->launch_config && a_->backend != Backend::distributed) r.launch_ = lc;
  r.workspace_ = a_->workspace(p, *r.params_);
  if (add && !a_->accumulates)  // room for a partial product
    r.partial_ = sizeof(float) * std::size_t(p.m) * std::size_t(p.n) + kPartialAlign;
  r.predicted_ms_ = a_->predict_ms ? a_->predict_ms(p, *r.params_, *d_) : std::nan("");
  r.state_ = states.get(*a_, d_->ordinal);
  return r;
}

RunArgs PreparedRun::args(const Buffers& io, CUstream_st* stream) const {
  RunArgs r;
  r.a = io.a, r.b = io.b, r.c = io.c, r.problem = p_, r.params = params_.get(), r.workspace = io.workspace;
  r.stream = stream, r.state = state_, r.device = d_, r.ldc = io.ldc, r.accumulate = io.accumulate;
  return r;
}

void PreparedRun::run(const Buffers& io, CUstream_st* stream) const {
  if (skip_) throw std::logic_error(a_->name + ": run of a configuration that cannot run here: " + *skip_);
  RunArgs r = args(io, stream);
  const long n = p_.n, ldc = io.ldc ? io.ldc : n;
  if (a_->accumulates || (!io.accumulate && ldc == n)) return a_->run(r);
  // C += A B, or C wider than n, with an algorithm that writes a dense C: the product into the
  // partial (after the algorithm's workspace), then added or copied into C.
  if (!partial_)
    throw std::logic_error(a_->name + ": a run that accumulates or writes a strided C, prepared without an add");
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(io.workspace) + workspace_;
  float* t = reinterpret_cast<float*>((at + kPartialAlign - 1) / kPartialAlign * kPartialAlign);
  r.c = t, r.ldc = 0, r.accumulate = false;
  a_->run(r);
  add_(io.c, ldc, t, p_.m, n, io.accumulate, stream);
}

void host_add(float* c, long ldc, const float* t, long m, long n, bool accumulate, CUstream_st*) {
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.f) + t[i * n + j];
}

Params read_params(const Algorithm& a, const std::string& variant, const std::string& text) {
  std::vector<std::string> axes;
  for (const Axis& x : a.axes) axes.push_back(x.name);
  return Params::parse(variant, text, &axes);
}

std::string EngineSpec::text() const {
  if (!algorithm) return "";
  const std::string q = params.canonical();
  return algorithm->name + ":" + params.variant() + (q.empty() ? "" : ":" + q);
}

EngineSpec EngineSpec::parse(const std::string& text, const std::vector<const Algorithm*>& known) {
  const SpecParts spec = split_spec(text);
  if (!spec.has_variant) throw std::invalid_argument("engine \"" + text + "\": expected algorithm:variant[:params]");
  EngineSpec out;
  for (const Algorithm* x : known)
    if (x->name == spec.algorithm) out.algorithm = x;
  if (!out.algorithm) throw std::invalid_argument("engine \"" + text + "\": no algorithm " + spec.algorithm);
  if (!out.algorithm->find_variant(spec.variant))
    throw std::invalid_argument("engine \"" + text + "\": " + spec.algorithm + " has no variant " + spec.variant);
  out.params = default_params(*out.algorithm, spec.variant);  // the axes it does not name at their defaults
  const Params named = Params::parse(spec.variant, spec.params);
  for (const auto& [axis, value] : named.values()) out.params.set(axis, value);
  return out;
}

}  // namespace mmlab
