// `mmlab terms`: the cost-model terms of each row of results files, as the lab's models compute them
// (Algorithm::model_terms), so that a fit (scripts/fit-flagship) reads them from the lab instead of
// computing them again.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/algorithm.hpp"

namespace mmlab {

// For each row of `files` whose algorithm has model terms: its file and line, algorithm, the resolved
// variant and parameters, m, n, k, the fitted row that prices it (empty: none), the terms f1, f2, f3,
// that row's coefficients and the model's time, as CSV on `out`. The
// device is h100_description() with the row's SM count (sm_count, where recorded): occupancies are
// those the models were fitted with. A file that is not an mmlab results file is a UsageError.
// Returns the rows written; with none, `note` (where given) says why: no row is of an algorithm with
// model terms (naming those that have them), or none of its rows is a configuration they price.
std::size_t write_model_terms(const std::vector<std::string>& files, const Registry& lab, std::ostream& out,
                              std::string* note = nullptr);

}  // namespace mmlab
