// Tidy CSV output: one row per configuration, appended and flushed as each finishes.
//
// Rows are written with one write(2) each and synced, so a killed run leaves whole rows only; a
// torn last line (no newline) from a crash in the middle of that call is cut off on reopening,
// once the file is known to be ours (its first line is our header). An output is locked (flock)
// while a run writes it: a second run on the same file is refused. Files are read line by line,
// lines of at most kMaxCsvLine bytes: memory stays bounded whatever the input.
#pragma once

#include <fstream>
#include <functional>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include "core/columns.hpp"

namespace mmlab {

// An output that could not be written (a full disk, an I/O error): rows already written stay whole.
struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The file a path names: a symbolic link's target (resolved once, so that a results file and its
// samples sit side by side whatever link names them), else the path itself.
std::string resolve_link(const std::string& path);

using CsvRow = std::vector<std::string>;

struct CsvTable {
  CsvRow header;
  std::vector<CsvRow> rows;
  int column(const std::string& name) const;  // -1 when absent
};

std::string csv_escape(const std::string& field);
std::string csv_line(const CsvRow& row);  // with the trailing newline
// The lab's one CSV parser: a line's fields, a quoted one unescaped ("" inside quotes is one quote);
// with `trim`, spaces and tabs outside quotes around each field dropped. UsageError naming `where`
// for an unterminated quote.
CsvRow parse_csv_line(const std::string& line, const std::string& where, bool trim = false);
CsvTable read_csv(const std::string& path);  // throws UsageError on malformed files

inline constexpr std::size_t kMaxCsvLine = std::size_t(1) << 20;  // 1 MiB; mmlab's rows are < 4 KiB

// A text file, line by line: '\r' and a leading UTF-8 byte-order mark dropped, a line longer
// than kMaxCsvLine a UsageError. The last line may lack its newline: torn() says so.
class LineReader {
 public:
  // UsageError when missing, unreadable or not a file; a name kept in memory (core/kept_files.hpp) reads
  // as the file it stands for.
  explicit LineReader(const std::string& path);
  bool next(std::string& line);                   // false at the end
  std::size_t number() const { return number_; }  // of the line last returned, from 1
  bool torn() const { return torn_; }             // the line last returned had no newline
  std::string where() const { return path_ + ":" + std::to_string(number_); }

 private:
  std::string path_;
  std::shared_ptr<const std::string> kept_;  // the text of a kept name
  std::unique_ptr<std::istream> in_;
  std::size_t number_ = 0;
  bool torn_ = false;
};

// A CSV file read by the names of its columns (the results reader's, core/results.cpp): its header,
// then each row's fields of the columns `wanted`, in that order, "" where the file has no such column,
// whatever their order in the file; fields trimmed (parse_csv_line). A header naming a column twice,
// no header, an empty line, a row of another width than the header or an unterminated quote is a
// UsageError naming the file and line.
class CsvColumns {
 public:
  CsvColumns(const std::string& path, std::vector<std::string> wanted);
  bool has(const std::string& column) const;
  bool next(CsvRow& values);  // false at the end
  std::size_t line() const { return in_.number(); }  // of the row last returned, from 1

 private:
  LineReader in_;
  CsvRow header_;
  std::vector<int> at_;  // each wanted column's place in the header; -1 when absent
};

// A path that exists and is not a regular file (a folder, a device such as /dev/null or /dev/full,
// a FIFO): a UsageError naming `role`. A path that does not exist passes.
void require_regular_file(const std::string& path, const std::string& role);

std::string format_double(double v, int significant = 9);

// One cell of a row as it was made: empty, a number (a whole or decimal column's value itself, with the
// text the CSV file holds, written once, when it was set), or text. A file takes each cell's text; a
// caller's sink (the C API's) takes a number as the number: nothing is formatted to be parsed again.
struct Cell {
  enum class Kind { empty, number, text };
  Kind kind = Kind::empty;
  double number = 0;
  std::string text;  // as the CSV file holds it ("" when empty)
  static Cell of_text(std::string t) { return {Kind::text, 0, std::move(t)}; }
  static Cell of_whole(long long v) { return {Kind::number, double(v), std::to_string(v)}; }
  static Cell of_whole(unsigned long long v) { return {Kind::number, double(v), std::to_string(v)}; }
  static Cell of_number(double v, int significant = 9) { return {Kind::number, v, format_double(v, significant)}; }
};
using Row = std::vector<Cell>;
CsvRow csv_row(const Row& row);  // each cell's text, as the file holds it

// A row under construction, addressed by column name.
class Record {
 public:
  explicit Record(const CsvRow& header) : header_(&header), values_(header.size()) {}
  Record& set(const std::string& column, const std::string& value);
  Record& set(const std::string& column, double value, int significant = 9);
  Record& set(const std::string& column, long long value);
  Record& set(const std::string& column, int value) { return set(column, (long long)value); }
  Record& set(const std::string& column, unsigned value) { return set(column, (long long)value); }
  Record& set(const std::string& column, unsigned long value) { return set(column, (long long)value); }
  Record& set(const std::string& column, unsigned long long value);
  Record& set(const std::string& column, long value) { return set(column, (long long)value); }
  Record& set(const std::string& column, const char* value) { return set(column, std::string(value)); }
  Record& set(const std::string& column, bool) = delete;  // say "true"/"false" explicitly
  template <class T>
  Record& set(Col column, const T& value) {  // a results column by identifier (core/columns.hpp)
    return set(std::string(column_name(column)), value);
  }
  Record& set(Col column, double value, int significant) {
    return set(std::string(column_name(column)), value, significant);
  }
  const Row& values() const { return values_; }

 private:
  Cell& at(const std::string& column);
  const CsvRow* header_;
  Row values_;
};

enum class OpenMode { append, overwrite };

// Checks one row of an existing file (fields as parsed, `where` its place for the message); throws
// UsageError for a row the writer would not have written.
using RowCheck = std::function<void(const CsvRow& row, const std::string& where)>;

// An output file with a fixed header, locked for this process while open (another writer: a
// UsageError). Opening checks that an existing file has the same header (otherwise UsageError, the
// file untouched), that the complete rows of its last 1 MiB pass `check` (a repeated header, a row
// of another width, a field that is not a number: UsageError, untouched), cuts a torn last row of
// ours, and that the path can be written; nothing is written before a row is, or before
// write_header(). `overwrite` empties the file once it holds the lock. A failed write is an IoError.
class CsvWriter {
 public:
  CsvWriter(std::string path, CsvRow header, OpenMode mode, RowCheck check = nullptr);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  void write(const CsvRow& row) { write_lines({row}); }
  void write_lines(const std::vector<CsvRow>& rows);  // one write(2) for all of them
  void write_header() { write_lines({}); }            // the header alone, if the file has none yet
  const std::string& path() const { return path_; }

 private:
  bool same_kind(const CsvRow& header) const;
  void refuse_to_empty_what_is_not_ours();
  void adopt_existing();
  void check_tail(const std::string& tail, bool whole) const;

  std::string path_;
  CsvRow header_;
  RowCheck check_;
  int fd_ = -1;
  bool need_header_ = false;
};

// Where a results file keeps its raw samples: x.csv -> x.samples.csv (mmlab and mmlab-analyze).
std::string samples_path_for(const std::string& csv_path);

}  // namespace mmlab
