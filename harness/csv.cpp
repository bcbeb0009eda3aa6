#include "harness/csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/params.hpp"

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

CsvRow parse_csv_line(const std::string& line, const std::string& where) {
  CsvRow out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  if (quoted) throw UsageError(where + ": unterminated quoted field");
  return out;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(path + ": cannot be read");
  CsvTable t;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
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

Record& Record::set(const std::string& column, const std::string& value) {
  for (std::size_t i = 0; i < header_->size(); ++i)
    if ((*header_)[i] == column) {
      values_[i] = value;
      return *this;
    }
  throw std::logic_error("no CSV column named '" + column + "'");
}
Record& Record::set(const std::string& column, double value) { return set(column, format_double(value)); }
Record& Record::set(const std::string& column, long long value) { return set(column, std::to_string(value)); }

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

// Reads the first line and the last byte; cuts a torn last line left by a crash mid-write.
static CsvRow existing_header_and_repair(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  in.close();
  if (first.empty()) return {};
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > 0) {
    std::ifstream all(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(all)), std::istreambuf_iterator<char>());
    if (text.back() != '\n') {
      const auto keep = text.rfind('\n');
      std::filesystem::resize_file(path, keep == std::string::npos ? 0 : keep + 1);
      std::fprintf(stderr, "mmlab: %s: removed an incomplete last line (interrupted write)\n", path.c_str());
    }
  }
  return parse_csv_line(first, path + ":1");
}

CsvWriter::CsvWriter(std::string path, CsvRow header, OpenMode mode)
    : path_(std::move(path)), header_(std::move(header)) {
  namespace fs = std::filesystem;
  const fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path() && !fs::exists(p.parent_path(), ec)) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw UsageError(path_ + ": cannot create its folder: " + ec.message());
  }
  if (fs::is_directory(p, ec)) throw UsageError(path_ + ": is a folder, not a file");
  const bool exists = fs::exists(p, ec) && fs::file_size(p, ec) > 0;
  if (exists && mode == OpenMode::append) {
    const CsvRow old = existing_header_and_repair(path_);
    if (!old.empty() && old != header_)
      throw UsageError(path_ + ": existing file has a different header (" + std::to_string(old.size()) +
                       " columns, expected " + std::to_string(header_.size()) +
                       "); write to another file or pass --overwrite");
    need_header_ = old.empty();
  } else {
    need_header_ = true;
  }
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (mode == OpenMode::overwrite ? O_TRUNC : 0);
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) throw UsageError(path_ + ": cannot be written: " + std::strerror(errno));
}

CsvWriter::~CsvWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvWriter::write_lines(const std::vector<CsvRow>& rows) {
  std::string text;
  if (need_header_) text += csv_line(header_);
  for (const auto& r : rows) {
    if (r.size() != header_.size()) throw std::logic_error("CSV row has the wrong number of fields");
    text += csv_line(r);
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd_, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    done += std::size_t(w);
  }
  ::fdatasync(fd_);
  need_header_ = false;
}

}  // namespace mmlab
