// A process grid (distributed algorithms) or a grid of thread blocks in a cluster: rows x cols x
// layers, written "2x2" (= 2x2x1) or "2x1x2".
#pragma once

#include <string>

namespace mmlab {

struct Grid {
  int rows = 1, cols = 1, layers = 1;
  int volume() const { return rows * cols * layers; }
  std::string text() const;  // "2x2" or "2x1x2"
};
Grid parse_grid(const std::string& text);  // throws UsageError

}  // namespace mmlab
