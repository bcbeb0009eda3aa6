// Where a run's rows go as they finish, as typed cells (core/csv.hpp's Row): the CSV files of --output
// (CsvFiles), a caller's sink (the C API's mmlab_run, Python's DataFrames), or both, through one tee
// (RowTee: nvbench's printer_multiplex is the model). The runner hands each configuration's samples
// first, then its row: a row implies its samples are complete.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/csv.hpp"

namespace mmlab {

class RowSink {
 public:
  virtual ~RowSink() = default;
  // A configuration's trials, each in sample_columns()' order (core/schema.hpp); not called when it has none.
  virtual void samples(const std::vector<Row>& lines) = 0;
  // Its row, in result_columns()' order.
  virtual void row(const Row& row) = 0;
};

// The results file and its samples file: each cell's text, a configuration's samples in one write, then
// its row in another (core/csv.hpp's CsvWriter: locked, checked when adopted, whole rows only). The
// samples file gets its header with the first row of either, so a run without a timed row leaves a
// readable (empty) table. Beside them, the in-flight marker (<rows>.inflight): the configurations being
// prepared or timed, named before they start, so that a job that ends inside one (a library's abort, a
// crash, a kill from outside) leaves word of it for --resume.
class CsvFiles : public RowSink {
 public:
  // `check`: each existing row's check when a file is adopted (appending or resuming).
  CsvFiles(const std::string& rows_path, const std::string& samples_path, OpenMode mode, RowCheck check_rows,
           RowCheck check_samples);
  // The rows file alone is opened first (resume reads and repairs it before the samples are opened).
  void open_samples();
  void samples(const std::vector<Row>& lines) override;
  void row(const Row& row) override;

  // What a job that ended left in the marker: the configurations' keys tried once, and those tried a
  // second time (a second try's line says so), and how many were named.
  struct InFlight {
    std::set<std::string> once, twice;
    std::size_t named = 0;
  };
  // The configurations (key, whether this is its second try) about to run, written whole (a rename).
  void mark_in_flight(const std::vector<std::pair<std::string, bool>>& keys);
  InFlight read_in_flight() const;
  void clear_in_flight();  // the run ended, or was interrupted (not a crash): nothing in flight

 private:
  std::string in_flight_path_;
  std::string samples_path_;
  OpenMode mode_;
  RowCheck check_samples_;
  std::optional<CsvWriter> rows_, samples_;
};

// Every sink given, in order: the files before the caller's, so a row the caller sees is on disk.
class RowTee : public RowSink {
 public:
  void add(RowSink* sink) {
    if (sink) sinks_.push_back(sink);
  }
  void samples(const std::vector<Row>& lines) override {
    if (!lines.empty())
      for (RowSink* s : sinks_) s->samples(lines);
  }
  void row(const Row& row) override {
    for (RowSink* s : sinks_) s->row(row);
  }

 private:
  std::vector<RowSink*> sinks_;
};

}  // namespace mmlab
