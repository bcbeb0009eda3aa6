// --resume: which configurations the output already holds; samples of unfinished ones are dropped.
// Both files are streamed line by line (memory: the keys and run ids, not the files), and anything
// mmlab would not have written (another header, a repeated header, a row of another width, a size
// that is not a whole number) is a UsageError naming the file and line; nothing is rewritten then.
#include "harness/resume.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/schema.hpp"

namespace mmlab {

namespace {

// The rows of an mmlab CSV with `header`, one by one; a torn last line (no newline) is skipped:
// opening the file for writing cuts it (a dry run leaves it).
class Rows {
 public:
  Rows(const std::string& path, const CsvRow& header, const std::string& what)
      : in_(path), header_(header), what_(what) {
    std::string line;
    if (!in_.next(line)) return;  // empty
    if (parse_csv_line(line, in_.where()) != header_)
      throw UsageError(in_.where() + ": not the header of " + what_ + "; cannot resume into this file");
    started_ = true;
  }
  bool next(CsvRow& row) {
    std::string line;
    while (started_ && in_.next(line)) {
      if (in_.torn()) return false;
      if (line.empty()) continue;
      row = parse_csv_line(line, in_.where());
      if (row == header_)
        throw UsageError(in_.where() +
                         ": the header again, in the middle of the file (two runs wrote to it "
                         "at once?); repair the file or write to another");
      if (row.size() != header_.size())
        throw UsageError(in_.where() + ": " + std::to_string(row.size()) + " fields, the header has " +
                         std::to_string(header_.size()) + "; repair the file or write to another");
      check_existing_row(header_, row, in_.where());  // the check the writers make on a file's tail
      return true;
    }
    return false;
  }
  const LineReader& reader() const { return in_; }

 private:
  LineReader in_;
  CsvRow header_;
  std::string what_;
  bool started_ = false;
};

long whole(const std::string& text, const LineReader& at, const char* column) {
  try {
    return parse_integer(text, column);
  } catch (const UsageError&) {
    throw UsageError(at.where() + ": column '" + column + "': '" + text + "' is not a whole number >= 1");
  }
}

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

std::set<std::string> recorded_keys(const RunPlan& plan) {
  std::set<std::string> keys, run_ids;
  if (!exists(plan.output)) return keys;
  {
    // This schema's header (Rows checks it), so a column's place is its identifier's.
    Rows rows(plan.output, result_columns(), std::string("an mmlab results file of schema ") + kSchemaVersion);
    for (CsvRow r; rows.next(r);) {
      auto at = [&](Col c) -> const std::string& { return r[static_cast<std::size_t>(c)]; };
      auto dim = [&](Col c) { return whole(at(c), rows.reader(), column_name(c)); };
      keys.insert(configuration_key(at(Col::algorithm), at(Col::variant), at(Col::params), dim(Col::m), dim(Col::n),
                                    dim(Col::k), at(Col::inputs), at(Col::scope), at(Col::l2_flush)));
      run_ids.insert(at(Col::run_id));
    }
  }
  if (!exists(plan.samples_output)) return keys;

  // Samples of configurations without a row (a run stopped between the two writes) are dropped, so
  // that the resumed configuration's samples are the only ones of its run id. A first pass checks
  // the file and counts; only then, and only for a real run, is it rewritten (to a temporary file,
  // renamed over it).
  std::size_t kept = 0, dropped = 0;
  bool torn = false;
  {
    Rows samples(plan.samples_output, sample_columns(), "an mmlab samples file");
    for (CsvRow r; samples.next(r);) (run_ids.count(r[0]) ? kept : dropped)++;
    torn = samples.reader().torn();
  }
  if ((dropped == 0 && !torn) || plan.dry_run) return keys;
  const std::string tmp = plan.samples_output + ".resume-tmp";
  {
    std::FILE* out = std::fopen(tmp.c_str(), "w");
    if (!out) throw UsageError(tmp + ": cannot be written: " + std::strerror(errno));
    Rows samples(plan.samples_output, sample_columns(), "an mmlab samples file");
    std::string text = csv_line(sample_columns());
    bool ok = true;
    for (CsvRow r; samples.next(r);) {
      if (run_ids.count(r[0])) text += csv_line(r);
      if (text.size() > (1u << 20)) {  // in chunks: memory stays bounded
        ok = ok && std::fwrite(text.data(), 1, text.size(), out) == text.size();
        text.clear();
      }
    }
    ok = ok && std::fwrite(text.data(), 1, text.size(), out) == text.size() && std::fflush(out) == 0 &&
         ::fsync(fileno(out)) == 0;
    std::fclose(out);
    if (!ok) {
      std::remove(tmp.c_str());
      throw UsageError(tmp + ": cannot be written: " + std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), plan.samples_output.c_str()) != 0)
    throw UsageError(plan.samples_output + ": cannot be replaced: " + std::strerror(errno));
  std::fprintf(stderr, "mmlab: dropped %zu samples of unfinished configurations from %s\n", dropped,
               plan.samples_output.c_str());
  return keys;
}

}  // namespace mmlab
