// The CSV files as a sink of rows (sink.hpp).
#include "harness/sink.hpp"

#include "core/schema.hpp"

namespace mmlab {

CsvFiles::CsvFiles(const std::string& rows_path, const std::string& samples_path, OpenMode mode, RowCheck check_rows,
                   RowCheck check_samples)
    : samples_path_(samples_path), mode_(mode), check_samples_(std::move(check_samples)) {
  rows_.emplace(rows_path, result_columns(), mode, std::move(check_rows));
}

void CsvFiles::open_samples() { samples_.emplace(samples_path_, sample_columns(), mode_, check_samples_); }

void CsvFiles::samples(const std::vector<Row>& lines) {
  samples_->write_header();
  std::vector<CsvRow> text;
  text.reserve(lines.size());
  for (const Row& line : lines) text.push_back(csv_row(line));
  if (!text.empty()) samples_->write_lines(text);
}

void CsvFiles::row(const Row& row) {
  samples_->write_header();
  rows_->write(csv_row(row));
}

}  // namespace mmlab
