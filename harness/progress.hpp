// Progress on stderr: a line as each configuration starts, finished by its result, with an ETA from
// the configurations timed so far (three at least): seconds = a + b FLOPs fitted to them, so a sweep
// from 64 to 8192 does not promise 0:00 before its largest size, and one whose first problems are
// all overhead does not promise days.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "harness/outcome.hpp"
#include "harness/sweep.hpp"

namespace mmlab {

class Progress {
 public:
  Progress(const std::vector<Configuration>& todo, const DeviceInfo& device);
  // "[k/N] description ... " (no newline yet), k the configurations finished so far plus one; with
  // `waits` (its trials interleaved with its problem's others, later) "verifying description ... ",
  // whose count comes with its result.
  void start(std::size_t i, bool waits = false);
  // Ends the start line of a configuration that waits for its group's interleaved trials (the first
  // such line of a run says why).
  void verified(std::size_t i, std::size_t group);
  void note(const std::string& text);  // ends the start line with `text`
  // "-> result (ETA h:mm:ss)", after its start line or on a line of its own; `seconds` is its share
  // of the time (default: since its start).
  void finish(std::size_t i, const Outcome& o, double seconds = -1);

 private:
  std::string eta() const;

  const std::vector<Configuration>& todo_;
  const DeviceInfo& device_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::vector<double> measured_seconds_, measured_flop_;  // each configuration that ran
  std::chrono::steady_clock::time_point started_;
  std::size_t finished_ = 0;  // results printed: the counts go up, in any order of trials
  std::vector<bool> done_;    // which configurations have their result
  bool explained_ = false;    // the interleaved order's "timed once ..." said
  bool waiting_ = false;      // the open line is a "verifying ..." one
};

std::string describe(const Configuration& c);  // "tiled default tile=32 1024x1024x1024 kernel"

// Ends a progress line left open (a configuration's start, waiting for its result), so that a
// message printed now has a line of its own.
void end_progress_line();

}  // namespace mmlab
