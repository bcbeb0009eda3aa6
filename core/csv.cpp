#include "core/csv.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/kept_files.hpp"
#include "core/params.hpp"

namespace mmlab {

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return int(i);
  return -1;
}

std::string csv_escape(const std::string& f) {
  if (f.find_first_of(",\"\n\r") == std::string::npos) return f;
  std::string out = "\"";
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_line(const CsvRow& row) {
  std::string out;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) out += ',';
    out += csv_escape(row[i]);
  }
  return out + '\n';
}

CsvRow parse_csv_line(const std::string& line, const std::string& where, bool trim) {
  CsvRow out(1);
  bool quoted = false;
  std::size_t kept = 0;  // the field's length up to its last character that is not a trimmed blank
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    std::string& field = out.back();
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      kept = field.size();
    } else if (c == '"') {
      quoted = true;
      kept = field.size();
    } else if (c == ',') {
      if (trim) field.resize(kept);
      out.emplace_back();
      kept = 0;
    } else if (c != '\r' && !(trim && blank(c) && field.empty())) {
      field += c;
      if (!blank(c)) kept = field.size();
    }
  }
  if (quoted) throw UsageError(where + ": unterminated quoted field");
  if (trim) out.back().resize(kept);
  return out;
}

void require_regular_file(const std::string& path, const std::string& role) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec == std::errc::too_many_symbolic_link_levels)
    throw UsageError(path + ": a loop of symbolic links, so not " + role);
  if (ec || !fs::exists(st)) return;
  if (fs::is_directory(st)) throw UsageError(path + ": is a folder, not " + role);
  if (!fs::is_regular_file(st))
    throw UsageError(path + ": is not a regular file (a device, FIFO or socket), so not " + role);
}

LineReader::LineReader(const std::string& path) : path_(path), kept_(kept_files::find(path)) {
  if (kept_) {
    in_ = std::make_unique<std::istringstream>(*kept_);
    return;
  }
  require_regular_file(path, "a CSV file");
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) throw UsageError(path + ": cannot be read");
  in_ = std::move(file);
}

bool LineReader::next(std::string& line) {
  line.clear();
  std::streambuf* sb = in_->rdbuf();
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (line.empty()) return false;
      torn_ = true;
      break;
    }
    if (c == '\n') break;
    if (line.size() >= kMaxCsvLine)
      throw UsageError(path_ + ":" + std::to_string(number_ + 1) + ": a line longer than " +
                       std::to_string(kMaxCsvLine >> 20) + " MiB; not a CSV file of mmlab's");
    line.push_back(char(c));
  }
  ++number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (number_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  return true;
}

CsvTable read_csv(const std::string& path) {
  LineReader in(path);
  CsvTable t;
  std::string line;
  while (in.next(line)) {
    if (line.empty()) continue;
    const std::string where = in.where();
    CsvRow row = parse_csv_line(line, where);
    if (t.header.empty()) {
      t.header = std::move(row);
      continue;
    }
    if (row.size() != t.header.size())
      throw UsageError(where + ": " + std::to_string(row.size()) + " fields, the header has " +
                       std::to_string(t.header.size()));
    t.rows.push_back(std::move(row));
  }
  return t;
}

CsvColumns::CsvColumns(const std::string& path, std::vector<std::string> wanted) : in_(path) {
  std::string line;
  if (!in_.next(line)) throw UsageError(path + ": empty, no header");
  header_ = parse_csv_line(line, in_.where(), true);
  for (std::size_t i = 0; i < header_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (header_[i] == header_[j]) throw UsageError(in_.where() + ": the header names column '" + header_[i] + "' twice");
  for (const std::string& w : wanted) {
    const auto it = std::find(header_.begin(), header_.end(), w);
    at_.push_back(it == header_.end() ? -1 : int(it - header_.begin()));
  }
}

bool CsvColumns::has(const std::string& column) const {
  return std::find(header_.begin(), header_.end(), column) != header_.end();
}

bool CsvColumns::next(CsvRow& values) {
  std::string line;
  if (!in_.next(line)) return false;
  if (line.empty()) throw UsageError(in_.where() + ": an empty line (a row has " + std::to_string(header_.size()) + " fields)");
  CsvRow row = parse_csv_line(line, in_.where(), true);
  if (row.size() != header_.size())
    throw UsageError(in_.where() + ": " + std::to_string(row.size()) + " fields, the header has " +
                     std::to_string(header_.size()));
  values.assign(at_.size(), "");
  for (std::size_t i = 0; i < at_.size(); ++i)
    if (at_[i] >= 0) values[i] = std::move(row[std::size_t(at_[i])]);
  return true;
}

CsvRow csv_row(const Row& row) {
  CsvRow out;
  out.reserve(row.size());
  for (const Cell& c : row) out.push_back(c.text);
  return out;
}

Cell& Record::at(const std::string& column) {
  for (std::size_t i = 0; i < header_->size(); ++i)
    if ((*header_)[i] == column) return values_[i];
  throw std::logic_error("no CSV column named '" + column + "'");
}
Record& Record::set(const std::string& column, const std::string& value) {
  at(column) = Cell::of_text(value);
  return *this;
}
Record& Record::set(const std::string& column, double value, int significant) {
  at(column) = Cell::of_number(value, significant);
  return *this;
}
Record& Record::set(const std::string& column, long long value) {
  at(column) = Cell::of_whole(value);
  return *this;
}
Record& Record::set(const std::string& column, unsigned long long value) {
  at(column) = Cell::of_whole(value);
  return *this;
}

std::string samples_path_for(const std::string& csv_path) {
  const std::string ext = ".csv";
  if (csv_path.size() > ext.size() && csv_path.compare(csv_path.size() - ext.size(), ext.size(), ext) == 0)
    return csv_path.substr(0, csv_path.size() - ext.size()) + ".samples.csv";
  return csv_path + ".samples.csv";
}

std::string format_double(double v, int significant) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

namespace {

// The number of fields of a line that may be cut anywhere (an open quote counts as closed).
std::size_t fields_of_torn(const std::string& text) {
  std::size_t fields = 1;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) ++fields;
  }
  return fields;
}

// Reads `most` bytes from `offset` (the file is at least that long); a failure is a UsageError.
std::string read_at(int fd, off_t offset, std::size_t most, const std::string& path) {
  std::string out(most, '\0');
  std::size_t done = 0;
  while (done < most) {
    const ssize_t r = ::pread(fd, out.data() + done, most - done, offset + off_t(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw UsageError(path + ": cannot be read: " + std::strerror(errno));
    if (r == 0) throw UsageError(path + ": shrank while being read (another program is writing it?)");
    done += std::size_t(r);
  }
  return out;
}

}  // namespace

// The complete lines of `tail` (the file's end; `whole`: all of it, header first) as rows of this
// file: the header again, another width, or what `check_` refuses is a UsageError naming the line,
// counted from the end (the lines before the tail are not read).
void CsvWriter::check_tail(const std::string& tail, bool whole) const {
  std::vector<std::string> lines;
  std::size_t at = 0;
  if (!whole) at = tail.find('\n') + 1;  // the first line may be cut by the tail's start
  for (std::size_t nl; (nl = tail.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(tail.substr(at, nl - at));
  if (whole && !lines.empty()) lines.erase(lines.begin());  // the header, checked already
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = path_ + ": line " + std::to_string(lines.size() - i) + " from the end";
    const CsvRow row = parse_csv_line(line, where);
    if (row == header_)
      throw UsageError(where +
                       ": the header again (two files joined?); not a file mmlab writes, left untouched");
    if (row.size() != header_.size())
      throw UsageError(where + ": " + std::to_string(row.size()) + " fields, the header has " +
                       std::to_string(header_.size()) + "; not a file mmlab writes, left untouched");
    if (check_) check_(row, where);
  }
}

// A header of this kind of file, of this version or another: its first name is one of the first two of
// this version's (the results' schema column came first from version 2; before it, run_id).
bool CsvWriter::same_kind(const CsvRow& header) const {
  if (header.empty()) return false;
  for (std::size_t i = 0; i < std::min<std::size_t>(2, header_.size()); ++i)
    if (header[0] == header_[i]) return true;
  return false;
}

// --overwrite empties only files of the lab's: a file whose first line is no header of its kind (a
// foreign CSV, a text file) is refused, untouched.
void CsvWriter::refuse_to_empty_what_is_not_ours() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size == 0) return;
  const std::string head = read_at(fd_, 0, std::min<std::size_t>(std::size_t(st.st_size), kMaxCsvLine), path_);
  std::string first = head.substr(head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0);
  first = first.substr(0, first.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  CsvRow old;
  try {
    old = parse_csv_line(first, path_ + ":1");
  } catch (const std::exception&) {
  }
  if (!same_kind(old))
    throw UsageError(path_ + ": not a CSV file of mmlab's (its first line is no header mmlab writes), left "
                             "untouched: --overwrite empties only mmlab's own files; write to another file");
}

// The file is locked; decide whether it is ours and repair what a crash of ours left. Reads the
// first line and the last kMaxCsvLine bytes, never the whole file.
void CsvWriter::adopt_existing() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw UsageError(path_ + ": cannot be read: " + std::strerror(errno));
  const off_t size = st.st_size;
  if (size == 0) {
    need_header_ = true;
    return;
  }
  const std::string ours = csv_line(header_);  // with its newline
  const std::string head = read_at(fd_, 0, std::min<std::size_t>(std::size_t(size), kMaxCsvLine + 1), path_);
  const bool bom = head.compare(0, 3, "\xEF\xBB\xBF") == 0;
  const std::size_t from = bom ? 3 : 0, newline = head.find('\n', from);
  if (newline == std::string::npos) {
    if (std::size_t(size) > kMaxCsvLine)
      throw UsageError(path_ +
                       ": its first line is longer than 1 MiB; not a CSV file of mmlab's (left untouched)");
    // One line and no newline: our header, cut short by a crash, is erased; anything else is not ours.
    const std::string only = head.substr(from);
    if (ours.compare(0, only.size(), only) != 0)
      throw UsageError(
          path_ + ": its only line has no newline and is not this file's header (" + header_[0] +
          ",...); not a CSV file of mmlab's, left untouched: write to another file");
    if (::ftruncate(fd_, 0) != 0) throw UsageError(path_ + ": cannot be repaired: " + std::strerror(errno));
    std::fprintf(stderr, "mmlab: %s: removed an incomplete header (interrupted write)\n", path_.c_str());
    need_header_ = true;
    return;
  }
  std::string first = head.substr(from, newline - from);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if (first + "\n" != ours) {
    const CsvRow old = parse_csv_line(first, path_ + ":1");
    if (!same_kind(old))
      throw UsageError(path_ + ": not a CSV file of mmlab's (its header starts '" + (old.empty() ? "" : old[0]) +
                       "', not '" + header_[0] + "'), left untouched: write to another file");
    throw UsageError(path_ + ": a file of mmlab's of another schema version (" + std::to_string(old.size()) +
                     " columns, this version writes " + std::to_string(header_.size()) +
                     "), left untouched: write this run to a new file (mmlab-analyze reads both)");
  }
  need_header_ = false;
  // Ours. The complete rows of the last 1 MiB must be rows of ours (bounded: the whole file is never
  // read); then a last line without its newline is a row a crash cut short: cut it off, if it can be one.
  const std::size_t tail_bytes = std::min<std::size_t>(std::size_t(size), kMaxCsvLine + 1);
  const std::string tail = read_at(fd_, size - off_t(tail_bytes), tail_bytes, path_);
  check_tail(tail, std::size_t(size) == tail_bytes);
  if (tail.empty() || tail.back() == '\n') return;
  const std::size_t last = tail.rfind('\n');
  if (last == std::string::npos)
    throw UsageError(path_ +
                     ": its last line has no newline and is longer than 1 MiB; not a row mmlab "
                     "writes, left untouched");
  const std::string torn = tail.substr(last + 1);
  if (fields_of_torn(torn) > header_.size() || torn.find('\0') != std::string::npos)
    throw UsageError(path_ + ":" + " its last line has no newline and is not part of a row of " +
                     std::to_string(header_.size()) + " fields; not a row mmlab writes, left untouched");
  if (::ftruncate(fd_, size - off_t(torn.size())) != 0)
    throw UsageError(path_ + ": cannot be repaired: " + std::strerror(errno));
  std::fprintf(stderr, "mmlab: %s: removed an incomplete last line (interrupted write)\n", path_.c_str());
}

std::string resolve_link(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {  // a link may name a file not made yet
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p.lexically_normal().string();
}

CsvWriter::CsvWriter(std::string path, CsvRow header, OpenMode mode, RowCheck check)
    : path_(std::move(path)), header_(std::move(header)), check_(std::move(check)) {
  namespace fs = std::filesystem;
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path() && !fs::exists(p.parent_path(), ec)) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw UsageError(path_ + ": cannot create its folder: " + ec.message());
  }
  require_regular_file(path_, "a CSV file to write");
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);  // read: the checks
  if (fd_ < 0) throw UsageError(path_ + ": cannot be written: " + std::strerror(errno));
  try {
    // The lock first: nothing is read, repaired or truncated while another run writes the file.
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0)
      throw UsageError(path_ + (errno == EWOULDBLOCK
                                    ? ": another mmlab run is writing to it; wait for it to finish or "
                                      "choose another --output"
                                    : ": cannot be locked: " + std::string(std::strerror(errno))));
    if (mode == OpenMode::overwrite) {
      refuse_to_empty_what_is_not_ours();
      if (::ftruncate(fd_, 0) != 0) throw UsageError(path_ + ": cannot be emptied: " + std::strerror(errno));
      need_header_ = true;
    } else {
      adopt_existing();
    }
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

CsvWriter::~CsvWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvWriter::write_lines(const std::vector<CsvRow>& rows) {
  if (rows.empty() && !need_header_) return;
  std::string text;
  if (need_header_) text += csv_line(header_);
  for (const auto& r : rows) {
    if (r.size() != header_.size()) throw std::logic_error("CSV row has the wrong number of fields");
    text += csv_line(r);
  }
  // A write that fails part-way (a full disk, a file-size limit) is cut back off: the file ends with
  // whole rows, as it did before.
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd_, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int error = errno;
      if (done > 0 && before >= 0) (void)!::ftruncate(fd_, before);  // best effort; the error says the rest
      throw IoError(path_ + ": write failed: " + std::strerror(error));
    }
    done += std::size_t(w);
  }
  if (::fdatasync(fd_) != 0 && errno != EINVAL && errno != EROFS)
    throw IoError(path_ + ": sync failed: " + std::strerror(errno));
  need_header_ = false;
}

}  // namespace mmlab
