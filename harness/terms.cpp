// `mmlab terms` (terms.hpp).
#include "harness/terms.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include "core/csv.hpp"
#include "core/invocation.hpp"

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

long dimension(const std::string& text, const LineReader& at, const char* column) {
  try {
    return parse_integer(text, column);
  } catch (const UsageError&) {
    throw UsageError(at.where() + ": column '" + column + "': '" + text + "' is not a whole number >= 1");
  }
}

}  // namespace

std::size_t write_model_terms(const std::vector<std::string>& files, const Registry& lab, std::ostream& out,
                              std::string* note) {
  std::size_t written = 0, rows = 0, with_terms = 0;
  out << csv_line({"file", "line", "algorithm", "variant", "resolved", "m", "n", "k", "fit", "f1", "f2", "f3",
                   "c0", "c1", "c2", "c3", "model_ms"});
  for (const std::string& path : files) {
    require_regular_file(path, "a results file");
    LineReader in(path);
    std::string line;
    if (!in.next(line)) throw UsageError(path + ": empty, not an mmlab results file");
    const CsvRow header = parse_csv_line(line, in.where());
    std::map<std::string, std::size_t> at;
    for (std::size_t i = 0; i < header.size(); ++i) at[header[i]] = i;
    for (const char* column : {"algorithm", "variant", "params", "resolved", "m", "n", "k"})
      if (!at.count(column))
        throw UsageError(path + ": no column '" + column + "': not an mmlab results file");
    while (in.next(line)) {
      const CsvRow row = parse_csv_line(line, in.where());
      ++rows;
      if (row.size() != header.size())
        throw UsageError(in.where() + ": " + std::to_string(row.size()) + " fields, the header has " +
                         std::to_string(header.size()));
      const Algorithm* a = lab.find(row[at["algorithm"]]);
      if (!a || !a->model_terms) continue;
      ++with_terms;
      const Problem p{dimension(row[at["m"]], in, "m"), dimension(row[at["n"]], in, "n"),
                      dimension(row[at["k"]], in, "k")};
      DeviceInfo d = h100_description();
      if (at.count("sm_count") && !row[at["sm_count"]].empty())
        d.sm_count = int(dimension(row[at["sm_count"]], in, "sm_count"));
      // The variant the row's parameters resolve to (`resolved` names the values, not the variant).
      const Params asked = Params::parse(row[at["variant"]], row[at["params"]]);
      const Params q = Params::parse(Invocation(*a, d).resolve(p, asked).variant(),
                                     row[at["resolved"]].empty() ? row[at["params"]] : row[at["resolved"]]);
      if (Invocation(*a, d).check(p, q)) continue;  // not a configuration it runs
      const ModelTerms t = a->model_terms(p, q, d);
      const LinearFit* c = t.fit;
      const double nan = std::nan("");
      out << csv_line({path, std::to_string(in.number()), a->name, q.variant(), q.canonical(), std::to_string(p.m),
                       std::to_string(p.n), std::to_string(p.k), c ? fit_name(*c) : "", number(t.f[0]),
                       number(t.f[1]), number(t.f[2]), number(c ? c->c0 : nan), number(c ? c->c1 : nan),
                       number(c ? c->c2 : nan), number(c ? c->c3 : nan), number(t.ms())});
      ++written;
    }
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
