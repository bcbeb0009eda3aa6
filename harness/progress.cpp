#include "harness/progress.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace mmlab {

namespace {

std::string duration_text(double seconds) {
  const long s = long(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

bool g_line_open = false;  // a start line on stderr waits for its result

}  // namespace

void end_progress_line() {
  if (g_line_open) std::fputc('\n', stderr);
  g_line_open = false;
}

std::string describe(const Configuration& c) {
  std::ostringstream os;
  os << c.algorithm->name << ' ' << c.params.variant();
  if (!c.params.canonical().empty()) os << ' ' << c.params.canonical();
  os << ' ' << c.problem.m << 'x' << c.problem.n << 'x' << c.problem.k;
  if (c.problem.inputs != Inputs::uniform) os << ' ' << inputs_name(c.problem.inputs);
  os << ' ' << scope_name(c.scope);
  if (c.l2_flush) os << " l2-flush";
  return os.str();
}

Progress::Progress(const std::vector<Configuration>& todo, const DeviceInfo& device)
    : todo_(todo), device_(device) {}

void Progress::start(std::size_t i, bool waits) {
  started_ = std::chrono::steady_clock::now();
  waiting_ = waits;
  if (waits)
    std::fprintf(stderr, "verifying %s ... ", describe(todo_[i]).c_str());
  else
    std::fprintf(stderr, "[%zu/%zu] %s ... ", finished_ + 1, todo_.size(), describe(todo_[i]).c_str());
  g_line_open = true;
}

void Progress::note(const std::string& text) {
  std::fprintf(stderr, "%s\n", text.c_str());
  g_line_open = false;
}

void Progress::verified(std::size_t, std::size_t) {
  std::fprintf(stderr, explained_ ? "verified\n"
                                  : "verified; timed once every configuration of its problem is verified "
                                    "(interleaved: the results follow with their counts)\n");
  explained_ = true;
  g_line_open = false;
}

// The configurations not finished yet (in any order: the interleaved one finishes a problem's at once) at seconds = a + b FLOPs, least squares over those that ran (a, b >= 0;
// the mean time where their FLOPs are all alike), leaving out those that will be skipped for want of a
// GPU (a CPU run of a GPU sweep promised hours); "?" until three have.
std::string Progress::eta() const {
  if (finished_ >= todo_.size()) return "0:00";
  const std::size_t n = measured_seconds_.size();
  if (n < 3) return "?";
  double mf = 0, mt = 0;
  for (std::size_t i = 0; i < n; ++i) mf += measured_flop_[i] / double(n), mt += measured_seconds_[i] / double(n);
  double sff = 0, sft = 0, sf2 = 0, stf = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sff += (measured_flop_[i] - mf) * (measured_flop_[i] - mf);
    sft += (measured_flop_[i] - mf) * (measured_seconds_[i] - mt);
    sf2 += measured_flop_[i] * measured_flop_[i], stf += measured_seconds_[i] * measured_flop_[i];
  }
  double b = sff > 0 ? std::max(0.0, sft / sff) : 0, a = mt - b * mf;
  if (a < 0) a = 0, b = sf2 > 0 ? stf / sf2 : 0;  // through the origin
  double seconds = 0;
  for (std::size_t j = 0; j < todo_.size(); ++j)  // what will be skipped for want of a GPU takes no time
    if (!(j < done_.size() && done_[j]) && (device_.present || !uses_gpus(todo_[j])))
      seconds += a + b * todo_[j].algorithm->flop_count(todo_[j].problem);
  return duration_text(seconds);
}

void Progress::finish(std::size_t i, const Outcome& o, double share) {
  const Configuration& cfg = todo_[i];
  const double seconds =
      share >= 0 ? share : std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (!g_line_open)
    std::fprintf(stderr, "[%zu/%zu] %s ", finished_ + 1, todo_.size(), describe(cfg).c_str());
  else if (waiting_)  // its verifying line, ended by its result (skipped or failed before the trials)
    std::fprintf(stderr, "[%zu/%zu] ", finished_ + 1, todo_.size());
  g_line_open = waiting_ = false;
  ++finished_;
  if (done_.size() < todo_.size()) done_.resize(todo_.size(), false);  // the list is made after this object
  done_[i] = true;
  if (o.status == Status::ok || o.status == Status::failed) {
    measured_seconds_.push_back(seconds);
    measured_flop_.push_back(cfg.algorithm->flop_count(cfg.problem));
  }
  std::string result;
  if (o.status == Status::ok) {
    char buf[192], host[64] = "";
    if (!o.host_samples.empty())  // the host's own time to enqueue the work, beside the GPU's
      std::snprintf(host, sizeof host, ", host %.3g ms", summarize(o.host_samples).median);
    std::snprintf(buf, sizeof buf, "%.1f GFLOP/s (median %.4g ms%s, %zu trials; max |err| %.2g, mse %.2g)",
                  cfg.algorithm->flop_count(cfg.problem) / (o.stats.median * 1e6), o.stats.median, host,
                  o.stats.trials, o.verdict->max_abs_err, o.verdict->mse);
    result = buf;
    if (o.timer && (*o.timer == Timer::events || *o.timer == Timer::graph))
      result += " [" + std::string(timer_name(*o.timer)) + ": host time inside]";
  } else if (o.status == Status::skipped && !device_.present && o.reason == device_.absent_reason) {
    result = "skipped (no GPU)";  // the reason was printed once, at the start
  } else {
    result = std::string(o.status == Status::failed ? "FAILED: " : "skipped: ") + o.reason;
  }
  std::fprintf(stderr, "-> %s  (%.1f s; ETA %s)\n", result.c_str(), seconds, eta().c_str());
}

}  // namespace mmlab
