// Plots of results through gnuplot (SVG or PNG).
#pragma once

#include <string>
#include <vector>

#include "core/results.hpp"

namespace mmlab::analysis {

enum class PlotKind { size, blocks, roofline, scaling, ratio, frontier };
PlotKind parse_plot_kind(const std::string& text);
struct PlotOptions {
  std::string title;
  std::string shape;  // blocks: the problem shape to show (default: the largest square one)
  Scope scope = Scope::kernel;
  std::string baseline = "cublas";  // ratio: the algorithm each row is divided by (same file, same problem)
  // The inputs of the rows plotted (uniform, wide_exponent, ill_conditioned); empty: uniform, except
  // for the frontier, which draws one panel per problem and inputs.
  std::string inputs;
  std::vector<std::string> shapes;       // frontier: the panels (Result::shape()); empty: all
  std::string error = "max_sumabs_err";  // frontier: the error column on the x axis
};
// Writes OUT (.svg or .png) through gnuplot; AnalysisError on bad input, std::runtime_error when
// gnuplot fails. The file is written whole or not at all.
void plot(PlotKind kind, const std::vector<Result>& rows, const std::string& out, const PlotOptions& o);

// The plots' plumbing: `script` (reading `datafile`, which holds `data`) run by gnuplot into OUT
// (.svg or .png, `height` SVG pixels; PNG 4/3 of it), whole or not at all; and a gnuplot string.
void run_gnuplot(const std::string& script, const std::string& data, const std::string& out, int height = 600);
std::string quote(const std::string& s);

}  // namespace mmlab::analysis
