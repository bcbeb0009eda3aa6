// The CSV files as a sink of rows (sink.hpp).
#include "harness/sink.hpp"

#include <cstdio>

#include "core/schema.hpp"

namespace mmlab {

CsvFiles::CsvFiles(const std::string& rows_path, const std::string& samples_path, OpenMode mode, RowCheck check_rows,
                   RowCheck check_samples)
    : in_flight_path_(rows_path + ".inflight"),
      samples_path_(samples_path),
      mode_(mode),
      check_samples_(std::move(check_samples)) {
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

namespace {
constexpr const char* kAgain = "again ";  // a second try's line in the marker
}  // namespace

void CsvFiles::mark_in_flight(const std::vector<std::pair<std::string, bool>>& keys) {
  std::string text;
  for (const auto& [key, again] : keys) text += (again ? kAgain : "") + key + "\n";
  const std::string tmp = in_flight_path_ + ".tmp";
  if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), in_flight_path_.c_str());
  }
}

CsvFiles::InFlight CsvFiles::read_in_flight() const {
  InFlight out;
  std::FILE* f = std::fopen(in_flight_path_.c_str(), "r");
  if (!f) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, f)) {
    std::string key = line;
    if (!key.empty() && key.back() == '\n') key.pop_back();
    if (key.empty()) continue;
    ++out.named;
    if (key.rfind(kAgain, 0) == 0)
      out.twice.insert(key.substr(std::string(kAgain).size()));
    else
      out.once.insert(key);
  }
  std::fclose(f);
  return out;
}

void CsvFiles::clear_in_flight() { std::remove(in_flight_path_.c_str()); }

}  // namespace mmlab
