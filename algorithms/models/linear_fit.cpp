// The linear cost models' rows and their use (linear_fit.hpp).
#include "algorithms/models/linear_fit.hpp"

namespace mmlab {

const LinearFit* fit_of(const LinearFits& fits, const Params& q) {
  for (const LinearFit& f : fits) {
    if (q.variant() != f.variant) continue;
    bool all = true;
    const Params wanted = Params::parse(f.variant, f.params);
    for (const auto& [axis, value] : wanted.values()) all = all && q.has(axis) && q.text(axis) == value;
    if (all) return &f;
  }
  return nullptr;
}

void use_linear_model(Algorithm& a, const TermsOf& terms) {
  a.model_terms = terms;
  a.predict_ms = [terms](const Problem& p, const Params& q, const DeviceInfo& d) { return terms(p, q, d).ms(); };
}

}  // namespace mmlab
