// The analysis commands that are not paper tables: summaries, comparisons, headlines, plots.
#pragma once

#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "analysis/results.hpp"

namespace mmlab::analysis {

// Per configuration (or per group of the `by` columns, pooling the raw samples of rows that share
// a group), the trial statistics, ordered by `sort` (numbers numerically). `all` keeps skipped and
// failed rows.
Table summary(const std::vector<Result>& rows, const std::vector<std::string>& by,
              const std::vector<std::string>& sort, bool all);

struct CompareOptions {
  std::string baseline;  // ALG[:variant[:params]]
  double level = 0.95;
  int resamples = 4000;
  unsigned long long seed = 1;
  std::vector<std::string> sizes;  // only these shapes ("4096", "1041x1247x139"); empty: all
};
// Every other configuration at the same shape and scope as the baseline: speed-up of the median
// (baseline median / its median) with a bootstrap CI, Mann-Whitney U on the raw samples, Holm's
// correction across all comparisons, and a verdict.
Table compare(const std::vector<Result>& rows, const CompareOptions& o);

// Each algorithm's best configuration at one shape, against cuBLAS in the same file.
Table headline(const std::vector<Result>& rows, const std::string& shape);

enum class PlotKind { size, blocks, roofline };
PlotKind parse_plot_kind(const std::string& text);
struct PlotOptions {
  std::string title;
  std::string shape;  // blocks: the problem shape to show (default: the largest square one)
  std::string scope = "kernel";
};
// Writes OUT (.svg or .png) through gnuplot; AnalysisError on bad input, std::runtime_error when
// gnuplot fails. The file is written whole or not at all.
void plot(PlotKind kind, const std::vector<Result>& rows, const std::string& out, const PlotOptions& o);

}  // namespace mmlab::analysis
