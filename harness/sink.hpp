// Where a run's rows go as they finish: the CSV files of --output, a caller's sink (the C API's
// mmlab_run, Python's DataFrames), or both. The runner hands each configuration's samples first,
// then its row: a row implies its samples are complete.
#pragma once

#include <vector>

#include "core/csv.hpp"

namespace mmlab {

class RowSink {
 public:
  virtual ~RowSink() = default;
  // A configuration's trials, each in sample_columns()' order (core/schema.hpp); not called when it has none.
  virtual void samples(const std::vector<CsvRow>& lines) = 0;
  // Its row, in result_columns()' order.
  virtual void row(const CsvRow& row) = 0;
};

}  // namespace mmlab
