// The analysis commands that are not paper tables: summaries, comparisons, headlines, plots.
#pragma once

#include <string>
#include <vector>

#include "analysis/plot.hpp"
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
  std::string run = "latest";      // see select_run
};
// Every other configuration at the same shape and scope as the baseline: speed-up of the median
// (baseline median / its median) with a bootstrap CI, Mann-Whitney U on the raw samples, Holm's
// correction across all comparisons, and a verdict.
Table compare(const std::vector<Result>& rows, const CompareOptions& o);

// Each algorithm's best configuration at one shape against the baseline algorithm's row measured
// with it (same rows, scope `kernel`, same L2 setting), the latest run of each configuration.
Table headline(const std::vector<Result>& rows, const std::string& shape,
               const std::string& baseline = "cublas");

// Strong scaling of the distributed rows (those with a grid): each against the baseline's row at
// the same shape measured in the same job (else the latest such row in the files): speed-up with a
// bootstrap CI, parallel efficiency (speed-up / GPUs, or / ranks on the CPU backend), the split
// into compute, communication and waiting, the overlap, and measured / predicted.
Table scaling(const std::vector<Result>& rows, const std::string& baseline = "cublas", int resamples = 4000);

}  // namespace mmlab::analysis
