// The parts of the distributed-run interface that are plain arithmetic: grids and the model.
#include "core/distributed.hpp"

#include <algorithm>

#include "core/params.hpp"

namespace mmlab {

std::string Grid::text() const {
  std::string t = std::to_string(rows) + "x" + std::to_string(cols);
  return layers == 1 ? t : t + "x" + std::to_string(layers);
}

Grid parse_grid(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == 'x' || c == 'X')
      parts.emplace_back();
    else
      parts.back().push_back(c);
  }
  if (parts.size() < 2 || parts.size() > 3)
    throw UsageError("grid: '" + text + "' is not rows x cols or rows x cols x layers, e.g. 2x2 or 2x1x2");
  Grid g;
  g.rows = int(parse_integer(parts[0], "grid"));
  g.cols = int(parse_integer(parts[1], "grid"));
  if (parts.size() == 3) g.layers = int(parse_integer(parts[2], "grid"));
  return g;
}

double Model::predict_ms(double gflops, double gbytes_per_s) const {
  auto compute = [&](const ModelStep& s) { return s.flop / (gflops * 1e6); };  // ms
  auto move = [&](double bytes) { return bytes / (gbytes_per_s * 1e6); };      // ms
  double t = 0;
  if (!pipelined) {
    for (const ModelStep& s : steps) t += move(s.bytes_in) + compute(s) + move(s.bytes_out);
    return t;
  }
  // Step s computes while the data of step s + 1 moves.
  if (!steps.empty()) t += move(steps.front().bytes_in);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const double next = s + 1 < steps.size() ? move(steps[s + 1].bytes_in) : 0;
    t += std::max(compute(steps[s]), next) + move(steps[s].bytes_out);
  }
  return t;
}

}  // namespace mmlab
