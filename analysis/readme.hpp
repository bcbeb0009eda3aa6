// README's generated headline and the per-experiment reports (docs/results/<experiment>.md).
#pragma once

#include <string>

namespace mmlab::analysis {

// data/flagship/history/step1-tuning.csv -> "flagship-history-step1-tuning"; a stem the folder
// already ends with is not repeated (sgemm-methods/sgemm-methods.csv -> "sgemm-methods").
std::string report_name(const std::string& relative_csv);

// Writes one report (and its plots) per results CSV under `data` into `reports`, then README's
// section between its markers from the files data/headline.txt names. Each file whole or not at all.
void regenerate(const std::string& data, const std::string& readme, const std::string& reports);

}  // namespace mmlab::analysis
