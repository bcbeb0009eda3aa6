// Tables and how they are written: Markdown, CSV or LaTeX, always whole (temp file, then rename).
#pragma once

#include <string>
#include <vector>

namespace mmlab::analysis {

enum class Format { markdown, csv, latex };
Format parse_format(const std::string& text);  // "md"/"markdown", "csv", "latex"/"tex"

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // provenance and caveats, printed under the table
};

std::string render(const Table& t, Format f);
std::string fixed(double v, int decimals);       // "12.35"; "" for NaN
std::string scientific(double v, int decimals);  // "1.23e-07"; "" for NaN

// Writes the whole text to `path` or nothing: a temporary file beside it, then rename(2).
void write_atomically(const std::string& path, const std::string& text);

}  // namespace mmlab::analysis
