// The parts of the distributed-run interface that are plain arithmetic: grids and the model.
#include "core/distributed.hpp"

#include <algorithm>
#include <vector>

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

double Model::predict_ms(double gflops, double gbytes_per_s, double far_gbytes_per_s, double latency_ms) const {
  const double far_gbs = far_gbytes_per_s > 0 ? far_gbytes_per_s : gbytes_per_s;
  auto compute = [&](const ModelStep& s) { return s.flop / (gflops * 1e6); };  // ms
  auto move = [&](double bytes, double far) {                                  // ms
    if (bytes <= 0) return 0.0;
    return latency_ms + std::max((bytes - far) / (gbytes_per_s * 1e6), far / (far_gbs * 1e6));
  };
  auto in = [&](const ModelStep& s) { return move(s.bytes_in, s.far_in); };
  auto out = [&](const ModelStep& s) { return move(s.bytes_out, s.far_out); };
  const double first_in = layout_in_bytes + (steps.empty() ? 0 : steps.front().bytes_in);
  const bool banded = pipelined && first_step_slabs > 1 && !steps.empty() && first_in > 0;
  double t = (banded ? 0 : move(layout_in_bytes, 0)) + move(layout_out_bytes, 0);
  if (!pipelined) {
    for (const ModelStep& s : steps) t += in(s) + compute(s) + out(s);
    return t;
  }
  if (run_ahead_group > 0) {  // the two streams played slab by slab
    const std::size_t group = std::size_t(run_ahead_group);
    std::vector<double> done(steps.size());
    double moved = move(layout_in_bytes, 0), computed = moved;
    for (std::size_t u = 0; u < steps.size(); ++u) {
      const std::size_t g = u / group;
      const double freed = g >= 2 ? done[(g - 1) * group - 1] : 0;
      moved = std::max(moved, freed) + in(steps[u]);
      computed = std::max(computed, moved) + compute(steps[u]);
      done[u] = computed + out(steps[u]);
    }
    return move(layout_out_bytes, 0) + (steps.empty() ? moved : done.back());
  }
  // Step s computes while the data of step s + 1 moves (and step s - 1's output, where outputs overlap:
  // one communication stream, so the two move one after the other).
  if (!steps.empty() && !banded) t += in(steps.front());
  std::size_t first = 0;
  if (banded) {  // the first step's input slab by slab, its product of each slab behind it; step 1's after
    const double slab_move = move(first_in / first_step_slabs, 0), slab_compute = compute(steps[0]) / first_step_slabs;
    double comm = 0, comp = 0;
    for (int i = 0; i < first_step_slabs; ++i) comm += slab_move, comp = std::max(comp, comm) + slab_compute;
    t += std::max(comp, comm + (steps.size() > 1 ? in(steps[1]) : 0)) + out(steps[0]);
    first = 1;
  }
  double pending = 0;
  for (std::size_t s = first; s < steps.size(); ++s) {
    const double next = s + 1 < steps.size() ? in(steps[s + 1]) : 0;
    if (outputs_overlap) {
      t += std::max(compute(steps[s]), next + pending);
      pending = out(steps[s]);
    } else {
      t += std::max(compute(steps[s]), next) + out(steps[s]);
    }
  }
  return t + pending;
}

double Model::least_ms(double gflops, double gbytes_per_s, double latency_ms) const {
  double flop = 0;
  for (const ModelStep& s : steps) flop += s.flop;
  const double compute = flop > 0 ? flop / (gflops * 1e6) : 0;
  auto move = [&](double bytes) { return bytes > 0 ? bytes / (gbytes_per_s * 1e6) : 0.0; };
  const double first =
      least.first_bytes + (least.first_waits_for_layout ? least.layout_in_received / std::max(1, first_step_slabs) : 0);
  const bool waits = first > 0 || least.last_bytes > 0;
  const double critical = move(first) + compute + move(least.last_bytes) + (waits ? latency_ms : 0);
  const double port = std::max(least.in_bytes + least.layout_received, least.out_bytes + least.layout_sent);
  return std::max(critical, port > 0 ? latency_ms + move(port) : 0.0);
}

}  // namespace mmlab
