// The analysis commands that are not paper tables or plots: summaries, comparisons (compare.cpp),
// headlines, scaling, the frontier.
#pragma once

#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "core/results.hpp"

namespace mmlab::analysis {

// One CSV as records: a samples file's columns as the samples schema types them (each number read once,
// here; one that is not a number is an AnalysisError naming the row and column), any other table's cells
// as text. `mmlab-analyze records` and the C API's mmlab_read_table (mmlab.read's samples and other tables).
Table records(const std::string& path);

// Per configuration (or per group of the `by` columns, pooling the raw samples of rows that share
// a group), the trial statistics, ordered by `sort` (numbers numerically). `all` keeps skipped and
// failed rows.
Table summary(const std::vector<Result>& rows, const std::vector<std::string>& by,
              const std::vector<std::string>& sort, bool all);

struct CompareOptions {
  std::string baseline;  // ALG[:variant[:params]]
  double level = 0.95;
  int resamples = 4000;  // bootstrap (only for samples too large for the exact intervals)
  unsigned long long seed = 1;
  std::vector<std::string> sizes;  // only these shapes ("4096", "1041x1247x139"); empty: all
  std::string run = "latest";      // see select_run
  double margin = 0.02;            // a practical difference: faster / slower beyond it, equivalent within
  std::string family = "problem";  // Holm within each problem (shape, scope, L2, run), or the whole table
  bool cycles = false;             // compare clock cycles (ms x the SM clock sampled after each trial)
  std::string metric = "gpu";      // gpu (the trials' GPU time), host (the host's time to enqueue the
                                   // work) or sum (both: what a caller waits for, launch to completion)
  bool across_runs = false;        // one estimate per configuration over every run in the files
  std::optional<Scope> baseline_scope;  // none: the baseline at each row's own scope; else its rows at this scope
                                   // against every configuration of the same shape (and L2 ignored)
};
// Each option in its domain (a problem as the tables name it, a level in (0, 1), ...): AnalysisError
// naming it as `mmlab-analyze compare` spells it. The command and the C API's mmlab_compare make their
// options, then check them here.
void check(const CompareOptions& o);
// A scope option's value (`what` names it in the message): kernel, batched or end_to_end.
Scope scope_option(const std::string& text, const std::string& what);
// --bad-samples: what a row whose samples do not match it does (`error`, the default, or `leave-out`).
inline constexpr const char* kBadSamplesNames[] = {"error", "leave-out"};
BadSamples bad_samples_option(const std::string& text);

// Every other configuration at the same shape and scope as the baseline, estimate first: the
// speed-up (baseline / its time) with a distribution-free interval (paired by round when their
// trials were interleaved), a verdict against the margin (faster, slower, equivalent, or
// inconclusive with the trials that would decide it), and the test (Wilcoxon signed-rank or
// Mann-Whitney U) Holm-adjusted within its family. The note says the methods, the family and what
// the trials can reach.
Table compare(const std::vector<Result>& rows, const CompareOptions& o);
// The same comparison in each run of the files, combined: each run's speed-up and verdict, their
// geometric mean with an interval from the run-to-run spread (Student's t over runs), and whether
// the claim holds in every run.
Table compare_across_runs(const std::vector<Result>& rows, const CompareOptions& o);

// Each algorithm's best configuration at one shape against the baseline algorithm's row measured
// with it (same rows, scope `kernel`, same L2 setting), the latest run of each configuration.
Table headline(const std::vector<Result>& rows, const std::string& shape,
               const std::string& baseline = "cublas");

// Strong scaling of the distributed rows (those with a grid), analysis/scaling.cpp: each against its
// own engine on one GPU (the single-process row its engine spec names: cublas:default, cublas:tf32,
// flagship:tensor_cores, eigen:default), or against `baseline` (ALG[:variant[:params]]) where given,
// at the same shape in the same job (else the fastest such row in the files): speed-up with a
// bootstrap CI, parallel efficiency (speed-up / GPUs, or / ranks on the CPU backend) and the same at
// equal clocks, the speed-up over FP32 cuBLAS and over the fastest cuBLASMp row of its precision,
// time / bound, GFLOP/J, the moves to and from the starting layout, the split into compute,
// communication and waiting, the overlap, and measured / predicted.
// With `best`, only each shape's fastest lab row and fastest cuBLASMp row of each engine.
Table scaling(const std::vector<Result>& rows, const std::string& baseline = "", int resamples = 4000,
              bool best = false);

// The accuracy/speed frontier: per problem (size and inputs), each algorithm and variant's fastest
// configuration, its TFLOP/s and error (max_sumabs_err, max_rel_err), and both as ratios to the
// baseline's FP32 row of that problem in the same file (its `default` variant where it has several).
// Rows without a recorded max_sumabs_err (files of schema 3 and older) are left out.
Table frontier(const std::vector<Result>& rows, const std::vector<std::string>& sizes = {},
               const std::string& baseline = "cublas");

// Which to pick at one size, in words, from a frontier table: the fastest configuration whose
// error is within 2x the baseline's on every kind of inputs measured, and the fastest overall with
// its error ratio.
std::string frontier_advice(const Table& frontier_table, const std::string& size,
                            const std::string& baseline);
// The same table at one size in a row per algorithm and variant: the ranges over the kinds of inputs.
Table frontier_summary(const Table& frontier_table, const std::string& size, const std::string& baseline);

}  // namespace mmlab::analysis
