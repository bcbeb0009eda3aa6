// A run's output, one of the three parts of a run (runner.cpp: the output, the job's agreement, the
// scheduling): the CSV files of --output (sink.hpp's CsvFiles: locked, repaired, resumed, the in-flight
// marker beside them) and the caller's sink, through one tee; each row's id; the rows counted by status.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/options.hpp"
#include "harness/outcome.hpp"
#include "harness/sink.hpp"

namespace mmlab {

class RunOutput {
 public:
  RunOutput(const RunPlan& plan, const DeviceInfo& device, RowSink* sink);

  // Rank 0's: the rows file opened first (locked and repaired before --resume reads it), then the
  // samples (which --resume may have rewritten); with --resume, the keys of the configurations
  // already recorded, among them those two jobs ended inside (recorded here as failed rows: the
  // marker's second try). The caller's sink comes after the files, so a row it sees is on disk.
  std::set<std::string> open();
  // Another rank's: the caller's sink alone.
  void open_sink_only() { rows_.add(sink_); }

  // The configurations being prepared or timed (the marker's; a second try's says so), and none.
  void mark_in_flight(const std::vector<const Configuration*>& which);
  void clear_in_flight();

  // A configuration's samples, then its row (the `index`-th configuration of the run: its run_id);
  // without `samples`, the row alone (one a lost CUDA context ended).
  void record(std::size_t index, const Configuration& cfg, const Outcome& o, bool samples = true);
  void count(Status s) { ++counts_[int(s)]; }
  std::size_t count_of(Status s) const { return counts_[int(s)]; }
  std::size_t rows() const { return counts_[0] + counts_[1] + counts_[2]; }
  std::string run_id(std::size_t index) const { return session_ + "-" + std::to_string(index); }
  // "results/x.csv", or "the caller's sink" for a plan without an output.
  std::string where() const;
  bool files() const { return files_.has_value(); }

 private:
  void record_in_flight(std::set<std::string>& done);
  void emit(const Row& row, const std::vector<Row>& lines = {});

  const RunPlan& plan_;
  const DeviceInfo& device_;
  RowSink* sink_;                  // the caller's, or null
  std::optional<CsvFiles> files_;  // --output's
  RowTee rows_;                    // the files, then the caller's sink
  std::string session_;
  std::size_t counts_[4] = {};
  std::set<std::string> retried_;  // configurations a job ended inside once: this is their second try
};

}  // namespace mmlab
