// The papers' tables, each in the paper's own layout, with the paper's figures beside mmlab's.
#pragma once

#include <string>
#include <vector>

#include "analysis/report.hpp"
#include "core/results.hpp"

namespace mmlab::analysis {

struct PaperTable {
  std::string name;               // oneil2013-table1, ...
  std::string description;        // what it reproduces
  std::vector<std::string> data;  // its result files, relative to the data folder
};
const std::vector<PaperTable>& paper_tables();
const PaperTable& find_paper_table(const std::string& name);  // AnalysisError listing the names

// Builds the table(s) from the loaded results; AnalysisError when the data it needs is absent.
std::vector<Table> build_paper_table(const std::string& name, const std::vector<Result>& rows);

// FP32 peak and memory bandwidth of known devices (for rooflines and Table 18's peak column).
struct Ceilings {
  double peak_gflops = 0, bandwidth_gbs = 0;
  std::string source;
};
const Ceilings* device_ceilings(const std::string& device_name);

}  // namespace mmlab::analysis
