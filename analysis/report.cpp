#include "analysis/report.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/results.hpp"
#include "core/csv.hpp"

namespace mmlab::analysis {

Format parse_format(const std::string& text) {
  if (text == "md" || text == "markdown") return Format::markdown;
  if (text == "csv") return Format::csv;
  if (text == "latex" || text == "tex") return Format::latex;
  throw AnalysisError("unknown format '" + text + "' (valid: md, csv, latex)");
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string scientific(double v, int decimals) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", decimals, v);
  return buf;
}

static std::string latex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '%' || c == '&' || c == '#' || c == '$') out += '\\';
    if (c == '^') {
      out += "\\^{}";
      continue;
    }
    out += c;
  }
  return out;
}

std::string render(const Table& t, Format f) {
  std::ostringstream os;
  const std::size_t cols = t.header.size();
  if (f == Format::csv) {
    for (std::size_t i = 0; i < cols; ++i) os << (i ? "," : "") << mmlab::csv_escape(t.header[i]);
    os << "\n";
    for (const auto& r : t.rows) {
      for (std::size_t i = 0; i < cols; ++i)
        os << (i ? "," : "") << mmlab::csv_escape(i < r.size() ? r[i] : "");
      os << "\n";
    }
    return os.str();
  }
  if (f == Format::latex) {
    os << "% " << t.title << "\n\\begin{tabular}{" << std::string(cols, 'l') << "}\n\\hline\n";
    for (std::size_t i = 0; i < cols; ++i) os << (i ? " & " : "") << latex_escape(t.header[i]);
    os << " \\\\\n\\hline\n";
    for (const auto& r : t.rows) {
      for (std::size_t i = 0; i < cols; ++i) os << (i ? " & " : "") << latex_escape(i < r.size() ? r[i] : "");
      os << " \\\\\n";
    }
    os << "\\hline\n\\end{tabular}\n";
    if (!t.note.empty()) os << "% " << t.note << "\n";
    return os.str();
  }
  if (!t.title.empty()) os << "**" << t.title << "**\n\n";
  os << "|";
  for (const auto& h : t.header) os << " " << h << " |";
  os << "\n|";
  for (std::size_t i = 0; i < cols; ++i) os << "---|";
  os << "\n";
  for (const auto& r : t.rows) {
    os << "|";
    for (std::size_t i = 0; i < cols; ++i) os << " " << (i < r.size() ? r[i] : "") << " |";
    os << "\n";
  }
  if (!t.note.empty()) os << "\n" << t.note << "\n";
  return os.str();
}

void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (fs::is_directory(p, ec)) throw AnalysisError(path + ": is a folder; name a file to write");
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) throw AnalysisError(path + ": cannot be written (" + std::strerror(errno) + ")");
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw AnalysisError(path + ": write failed");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw AnalysisError(path + ": cannot be written (" + ec.message() + ")");
  }
}

}  // namespace mmlab::analysis
