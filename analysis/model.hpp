// The distributed algorithms' analytic model (core/decompositions.hpp) away from the machine it
// ran on: checked against every measured distributed row, and evaluated for machines no job ran
// on: an engine's local rate per GPU, NVLink domains of a few GPUs joined by a slower fabric, GPU
// counts from 4 to thousands.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "core/results.hpp"

namespace mmlab::analysis {

// Every ok distributed row with the model's inputs (local_gflops, link_gbs): the model evaluated
// afresh for its shape and grid with those inputs, beside the time measured and the prediction the
// row recorded; measured / predicted, and whether it is within `tolerance` (0.15: 15%).
Table model_validation(const std::vector<Result>& rows, double tolerance = 0.15);

// The model fitted to measured rows: a factor on each engine's probed local rate (the products of
// a whole run against the probe's one product: clocks under a power cap, panel shapes, the
// transfers beside them), a factor (0.1 to 10) on the probed link bandwidth for each decomposition,
// grid and transport (the grid fixes the groups its broadcasts, shifts and reductions span, which
// use the links otherwise than the probe's ring shift), and a fixed time per trial for each
// transport (launches, the host's barrier). Fitted by least squares on log(measured /
// predicted) over the rows given; a key no row had keeps 1 (or 0).
struct Calibration {
  std::map<std::string, double> compute;    // engine spec ("cublas:tf32") -> factor on local_gflops
  std::map<std::string, double> bandwidth;  // "dist_summa 1x4/nccl" -> factor on link_gbs
  std::map<std::string, double> fixed_ms;   // transport -> ms per trial
  std::size_t rows = 0;                     // rows it was fitted on
  double rms_log = 0;                       // their root mean square log ratio after the fit
};
Calibration fit_model(const std::vector<Result>& rows);
// The fitted model against rows (those it was not fitted on, to judge it): measured / predicted per
// row, within `tolerance`; the note gives the share within and the fitted values.
Table model_judged(const std::vector<Result>& rows, const Calibration& c, double tolerance = 0.10);

struct Machine {
  std::vector<std::pair<std::string, double>> engines;  // name and local GFLOP/s per GPU
  double nvlink_gbs = 358;    // per GPU within a domain (NCCL's ring shift on the H200s: 334 GiB/s)
  double fabric_gbs = 50;     // per GPU between domains (one 400 Gb/s InfiniBand port per GPU)
  int domain = 8;             // GPUs per NVLink domain
  double memory_bytes = 80e9;  // per GPU; grids needing more are left out
  double step_ms = 0;         // a fixed cost per step (launches, synchronisation)
};
// Parses "cublas=51400,tf32x3=140000" (AnalysisError otherwise).
std::vector<std::pair<std::string, double>> parse_engines(const std::string& text);

// For each engine, size N (square) and GPU count P: each decomposition's fastest grid of P ranks
// that fits in memory, its predicted time, and the winner with its margin over the runner-up.
Table model_prediction(const std::vector<long>& sizes, const std::vector<int>& ranks, const Machine& m);

// A map of the predicted winner over (P, N) per engine (from model_prediction's table), through
// gnuplot; OUT .svg or .png.
void plot_winners(const Table& prediction, const std::string& out, const std::string& title);

}  // namespace mmlab::analysis
