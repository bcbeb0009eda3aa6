// `mmlab terms` (terms.hpp).
#include "harness/terms.hpp"

#include <cmath>
#include <cstdio>

#include "core/csv.hpp"
#include "core/invocation.hpp"
#include "core/results.hpp"

namespace mmlab {

namespace {

std::string number(double v) {
  if (std::isnan(v)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

// "default:tile=64x64;thread=8x4", "default (cols)": the row's variant, axis values and kernel.
std::string fit_name(const LinearFit& f) {
  return std::string(f.variant) + (*f.params ? ":" + std::string(f.params) : "") +
         (*f.kernel ? " (" + std::string(f.kernel) + ")" : "");
}

}  // namespace

std::size_t write_model_terms(const std::vector<std::string>& files, const Registry& lab, std::ostream& out,
                              std::string* note) {
  std::size_t written = 0, rows = 0, with_terms = 0;
  out << csv_line({"file", "line", column_name(Col::run_id), column_name(Col::algorithm), column_name(Col::variant), column_name(Col::resolved),
                   column_name(Col::m), column_name(Col::n), column_name(Col::k), "fit", "f1", "f2", "f3", "c0", "c1",
                   "c2", "c3", "model_ms"});
  // The rows as core's reader reads them (every schema upgraded to this one, its checks); a file it
  // refuses (missing, foreign, torn) is bad input.
  std::vector<Result> results;
  try {
    for (const std::string& path : files) require_regular_file(path, "a results file");
    results = load_results(files, false);
  } catch (const AnalysisError& e) {
    throw UsageError(e.what());
  }
  for (const Result& r : results) {
    ++rows;
    const Algorithm* a = lab.find(r.algorithm);
    if (!a || !a->model_terms) continue;
    ++with_terms;
    const Problem p{r.m, r.n, r.k};
    DeviceInfo d = h100_description();
    if (!r.get(Col::sm_count).empty()) d.sm_count = int(r.number(Col::sm_count));
    // The variant the row's parameters resolve to (`resolved` names the values, not the variant).
    const Params asked = read_params(*a, r.variant, r.params);
    const std::string& resolved = r.get(Col::resolved);
    const Params q = read_params(*a, Invocation(*a, d).resolve(p, asked).variant(), resolved.empty() ? r.params : resolved);
    if (Invocation(*a, d).check(p, q)) continue;  // not a configuration it runs
    const ModelTerms t = a->model_terms(p, q, d);
    const LinearFit* c = t.fit;
    const double nan = std::nan("");
    out << csv_line({r.file, std::to_string(r.line), r.run_id, a->name, q.variant(), q.canonical(), std::to_string(p.m),
                     std::to_string(p.n), std::to_string(p.k), c ? fit_name(*c) : "", number(t.f[0]),
                     number(t.f[1]), number(t.f[2]), number(c ? c->c0 : nan), number(c ? c->c1 : nan),
                     number(c ? c->c2 : nan), number(c ? c->c3 : nan), number(t.ms())});
    ++written;
  }
  if (note && written == 0) {
    std::string have;
    for (const Algorithm* a : lab.all())
      if (a->model_terms) have += (have.empty() ? "" : ", ") + a->name;
    *note = with_terms == 0 ? "none of the " + std::to_string(rows) +
                                  " rows is of an algorithm with a cost model's terms (those that have them: " +
                                  have + ")"
                            : "none of the " + std::to_string(with_terms) +
                                  " rows of algorithms with terms is a configuration their models price";
  }
  return written;
}

}  // namespace mmlab
