// The form of the flagship's candidates' cost models (core/algorithm.hpp, LinearFit): a
// configuration's time in ms, linear in three terms of the problem and the launch (each model's header
// says what they are),
//   ms = c0 + c1 f1 + c2 f2 + c3 f3,
// the coefficients fitted for each configuration the flagship prices (a row of the model's fits), by
// non-negative least squares on the relative error of a training run timed on the GPU's own clock
// (scripts/fit-flagship, which reads the terms from the lab: `mmlab terms RUN.csv`). A configuration
// without a row has no model: NaN. Host code only.
#pragma once

#include <functional>
#include <vector>

#include "core/algorithm.hpp"

namespace mmlab {

using LinearFits = std::vector<LinearFit>;

// The configuration's row of `fits` (its variant and each of the row's axis values), or null.
const LinearFit* fit_of(const LinearFits& fits, const Params& q);

// Sets a's model_terms to `terms` and its predict_ms to their ms().
using TermsOf = std::function<ModelTerms(const Problem&, const Params&, const DeviceInfo&)>;
void use_linear_model(Algorithm& a, const TermsOf& terms);

// The SMs a model counts (core/algorithm.hpp's planning_sms).
inline double model_sms(const DeviceInfo& d) { return planning_sms(d); }

}  // namespace mmlab
