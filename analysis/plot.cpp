// Plots through gnuplot: GFLOP/s against size, per configuration, a roofline, speed-ups, scaling,
// and the accuracy/speed frontier.
#include "analysis/plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/commands.hpp"
#include "analysis/paper_tables.hpp"
#include "analysis/report.hpp"

namespace mmlab::analysis {

PlotKind parse_plot_kind(const std::string& text) {
  if (text == "size") return PlotKind::size;
  if (text == "blocks") return PlotKind::blocks;
  if (text == "roofline") return PlotKind::roofline;
  if (text == "scaling") return PlotKind::scaling;
  if (text == "ratio") return PlotKind::ratio;
  if (text == "frontier") return PlotKind::frontier;
  throw AnalysisError("unknown plot kind '" + text +
                      "' (valid: size, blocks, roofline, scaling, ratio, frontier)");
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\\\"") : c == '_' ? std::string("\\\\_") : std::string(1, c);
  return out + "\"";
}

// A file name for gnuplot: single quotes take every character as it is but a quote (doubled), where
// quote() escapes underscores for the enhanced-text labels (a path with `tma_tiled` in it broke).
std::string quote_path(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void run_gnuplot(const std::string& script, const std::string& data, const std::string& out, int height) {
  namespace fs = std::filesystem;
  const std::string ext = fs::path(out).extension().string();
  if (ext != ".svg" && ext != ".png") throw AnalysisError(out + ": plots are written as .svg or .png");
  std::error_code ec;
  if (fs::path(out).has_parent_path()) fs::create_directories(fs::path(out).parent_path(), ec);
  const fs::path dir = fs::temp_directory_path() / ("mmlab-plot-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string tmp_out = out + ".tmp" + std::to_string(::getpid()) + ext;
  {  // a folder that cannot take the file is said here, not as gnuplot's exit status
    std::ofstream probe(tmp_out);
    if (!probe) {
      const std::string why = std::strerror(errno);
      fs::remove_all(dir, ec);
      throw AnalysisError(out + ": cannot be written (" + why + ")");
    }
  }
  std::ofstream(dir / "data.txt") << data;
  std::ofstream s(dir / "plot.gp");
  s << (ext == ".svg"
            ? "set terminal svg size 960," + std::to_string(height) +
                  " dynamic background rgb 'white' font 'Helvetica,12'\n"
            : "set terminal pngcairo size 1280," + std::to_string(height * 4 / 3) + " font 'Helvetica,12'\n")
    << "set output " << quote_path(tmp_out) << "\n"
    << "datafile = " << quote_path((dir / "data.txt").string()) << "\n"
    << script;
  s.close();
  const std::string cmd = "gnuplot " + (dir / "plot.gp").string() + " 2>" + (dir / "err.txt").string();
  const int rc = std::system(cmd.c_str());
  std::string err;
  {
    std::ifstream e(dir / "err.txt");
    err.assign(std::istreambuf_iterator<char>(e), {});
  }
  fs::remove_all(dir, ec);
  if (rc != 0 || fs::file_size(tmp_out, ec) == 0) {
    fs::remove(tmp_out, ec);
    const int status = rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : rc;
    if (status == 127) throw std::runtime_error("gnuplot is not installed (apt-get install gnuplot): " + err);
    throw std::runtime_error("gnuplot failed (exit status " + std::to_string(status) + "): " + err);
  }
  fs::rename(tmp_out, out, ec);
  if (ec) throw AnalysisError(out + ": cannot be written (" + ec.message() + ")");
}

namespace {

// Series of (x, y) points, one per name, in first-appearance order.
struct Series {
  std::vector<std::string> names;
  std::map<std::string, std::map<double, double>> points;
  void add(const std::string& name, double x, double y) {
    if (!points.count(name)) names.push_back(name);
    auto& p = points[name];
    auto it = p.find(x);
    if (it == p.end() || y > it->second) p[x] = y;  // the best configuration at each x
  }
  std::string data() const {
    std::ostringstream os;
    for (const auto& n : names) {
      os << "# " << n << "\n";
      for (auto& [x, y] : points.at(n)) os << x << " " << y << "\n";
      os << "\n\n";
    }
    return os.str();
  }
  std::string plot_clause(const std::string& style, const std::string& extra = "") const {
    std::ostringstream os;
    for (std::size_t i = 0; i < names.size(); ++i)
      os << (i ? ", " : "plot ") << "datafile index " << i << " using 1:2 " << style << " title "
         << quote(names[i]);
    if (!extra.empty()) os << ", " << extra;
    return os.str() + "\n";
  }
};

// The accuracy/speed frontier: one panel per problem (size and inputs), a point per algorithm and
// variant at its fastest configuration: TFLOP/s against that row's error (log scale).
void frontier(const std::vector<const Result*>& ok, const std::string& out, const PlotOptions& o,
              const std::string& device) {
  std::vector<std::string> panels;
  std::map<std::string, std::map<std::string, const Result*>> best;  // panel -> name -> fastest row
  for (const Result* r : ok) {
    const std::string panel = r->shape();
    if (!o.shapes.empty() && std::find(o.shapes.begin(), o.shapes.end(), panel) == o.shapes.end() &&
        std::find(o.shapes.begin(), o.shapes.end(), r->dims()) == o.shapes.end())
      continue;
    if (r->fields.at(o.error).empty()) continue;  // not measured (a file of schema 3 or older)
    const std::string name = r->variant == "default" ? r->algorithm : r->algorithm + " " + r->variant;
    if (!best.count(panel)) panels.push_back(panel);
    const Result*& b = best[panel][name];
    if (!b || r->gflops > b->gflops) b = r;
  }
  if (panels.empty()) throw AnalysisError("plot frontier: no ok row with a recorded " + o.error);
  std::map<std::string, int> colour;  // one colour per algorithm and variant across the panels
  for (const std::string& panel : panels)
    for (const auto& [name, r] : best.at(panel)) colour.emplace(name, int(colour.size()) + 1);
  std::ostringstream data, script;
  const std::size_t columns = panels.size() <= 1 ? 1 : panels.size() <= 4 ? 2 : 3;
  const std::size_t lines = (panels.size() + columns - 1) / columns;
  script << "set grid\nset multiplot layout " << lines << "," << columns << " title "
         << quote(o.title.empty() ? "accuracy against speed (fastest configuration of each), " + device
                                  : o.title)
         << "\nset logscale x 10\nset format x '10^{%L}'\nset xlabel " << quote(o.error)
         << "\nset ylabel 'TFLOP/s'\nset logscale y 2\nset key off\nset offsets graph 0.1, graph 0.5, graph "
            "0.15, graph 0.15\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    data << "# " << panels[i] << "\n";
    std::vector<std::pair<double, std::string>> points;  // by error, left to right
    for (const auto& [name, r] : best.at(panels[i]))
      points.emplace_back(std::max(std::stod(r->fields.at(o.error)), 1e-12), name);  // exact: drawn at 1e-12
    std::sort(points.begin(), points.end());
    int row = 0;  // labels alternate above and below their points, so neighbours do not overwrite
    for (const auto& [err, name] : points)
      data << err << " " << best.at(panels[i]).at(name)->gflops / 1000 << " " << quote(name) << " "
           << row++ % 2 << " " << colour.at(name) << "\n";
    data << "\n\n";
    script << "set title " << quote(panels[i]) << "\nplot datafile index " << i
           << " using 1:2:5 with points pt 7 ps 1.2 lc variable, '' index " << i
           << " using 1:($4 == 0 ? $2 : 1/0):3 with labels left offset char 0.6,0.6 font ',9', '' index " << i
           << " using 1:($4 == 1 ? $2 : 1/0):3 with labels left offset char 0.6,-0.6 font ',9'\n";
  }
  script << "unset multiplot\n";
  run_gnuplot(script.str(), data.str(), out, std::max<int>(600, int(lines) * 260));
}

}  // namespace

void plot(PlotKind kind, const std::vector<Result>& rows, const std::string& out, const PlotOptions& o) {
  const std::string inputs = !o.inputs.empty() || kind == PlotKind::frontier ? o.inputs : "uniform";
  std::vector<const Result*> ok;
  for (const Result& r : rows)
    if (r.ok() && r.scope == o.scope && (inputs.empty() || inputs_name(r.inputs) == inputs)) ok.push_back(&r);
  if (ok.empty())
    throw AnalysisError("plot: no ok rows in scope '" + std::string(scope_name(o.scope)) + "'" +
                        (inputs.empty() ? "" : " with inputs '" + inputs + "'"));
  const std::string device = ok.front()->device;
  if (kind == PlotKind::frontier) return frontier(ok, out, o, device);
  std::ostringstream script;
  script << "set grid\nset key outside right top\n";
  if (kind == PlotKind::size) {
    Series s;
    for (const Result* r : ok)
      if (r->square())
        s.add(r->variant == "default" ? r->algorithm : r->algorithm + " " + r->variant, double(r->m),
              r->gflops);
    if (s.names.empty()) throw AnalysisError("plot size: no square problems");
    script << "set title "
           << quote(o.title.empty() ? "GFLOP/s vs size (best configuration), " + device : o.title) << "\n"
           << "set logscale x 2\nset xlabel 'n (m = n = k)'\nset ylabel 'GFLOP/s'\n"
           << s.plot_clause("with linespoints");
    run_gnuplot(script.str(), s.data(), out);
    return;
  }
  if (kind == PlotKind::blocks) {
    std::string shape = o.shape;
    if (shape.empty()) {
      long largest = 0;
      for (const Result* r : ok)
        if (r->square()) largest = std::max(largest, r->m);
      shape = std::to_string(largest);
      if (largest == 0) {  // no square size: the shape with the most configurations
        std::map<std::string, int> count;
        for (const Result* r : ok) count[r->shape()]++;
        int most = 0;
        for (const auto& [s, c] : count)
          if (c > most) most = c, shape = s;
      }
    }
    std::ostringstream data;
    int i = 0;
    for (const Result* r : ok)
      if (r->shape() == shape) data << i++ << " " << r->gflops << " " << quote(r->configuration()) << "\n";
    if (i == 0) throw AnalysisError("plot blocks: no rows at " + shape);
    script << "set title "
           << quote(o.title.empty() ? "GFLOP/s per configuration at " + shape + ", " + device : o.title)
           << "\n"
           << "set style fill solid 0.6\nset boxwidth 0.8\nset ylabel 'GFLOP/s'\nset xtics rotate by 60 "
              "right font ',9'\n"
           << "set key off\nset bmargin 16\nset xrange [-1:" << i << "]\n"
           << "plot datafile using 1:2:xtic(3) with boxes\n";
    run_gnuplot(script.str(), data.str(), out);
    return;
  }
  if (kind == PlotKind::ratio) {                // speed-up over the baseline in the same file, against m n k
    std::map<std::string, const Result*> base;  // file, shape, L2 setting -> the baseline's row
    const auto key = [](const Result* r) {
      return r->file + "|" + r->shape() + "|" + l2_flush_name(r->l2_flush);
    };
    for (const Result* r : ok)
      if (r->algorithm == o.baseline) base[key(r)] = r;
    std::set<std::string> files;
    for (const Result* r : ok) files.insert(r->file);
    Series s;
    for (const Result* r : ok) {
      if (r->algorithm == o.baseline) continue;
      const std::string name =  // which file, where several are plotted
          r->configuration() +
          (files.size() > 1 ? " (" + std::filesystem::path(r->file).stem().string() + ")" : "");
      const auto b = base.find(key(r));
      if (b == base.end() || r->median_ms <= 0) continue;
      s.add(name, double(r->m) * double(r->n) * double(r->k), b->second->median_ms / r->median_ms);
    }
    if (s.names.empty())
      throw AnalysisError("plot ratio: no row has a " + o.baseline + " row of its problem beside it");
    script << "set title "
           << quote(o.title.empty() ? "speed-up over " + o.baseline + " (medians, same run), " + device
                                    : o.title)
           << "\nset logscale x 10\nset format x '10^{%L}'\nset xlabel 'm n k (multiply-adds)'\n"
           << "set ylabel 'x " << o.baseline << "'\n"
           << s.plot_clause("with points pointsize 1.2",
                            "1 with lines dt 2 lc rgb 'gray' title " + quote("= " + o.baseline));
    run_gnuplot(script.str(), s.data(), out);
    return;
  }
  if (kind == PlotKind::scaling) {  // speed-up over the same engine on one GPU against GPUs, per algorithm and size
    const Table t = scaling(rows);
    const auto column = [&](const char* name) {
      return std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin());
    };
    const std::size_t workers = column("GPUs or ranks"), speed = column("x 1 GPU"), engine = column("engine");
    Series s;
    for (const auto& r : t.rows) {
      const double gpus = std::stod(r[workers]), speedup = std::stod(r[speed]);
      s.add(r[1] + " " + r[engine] + " " + r[0], gpus, speedup);
    }
    script
        << "set title "
        << quote(o.title.empty() ? "strong scaling (best grid per GPU count), " + device : o.title)
        << "\nset xlabel 'GPUs'\nset ylabel 'speed-up over the same engine on one GPU'\nset xtics 1\nset xrange [0.5:*]\n"
        << s.plot_clause("with linespoints", "x with lines dt 2 lc rgb 'gray' title 'ideal'");
    run_gnuplot(script.str(), s.data(), out);
    return;
  }
  // Only rows measured on a device whose ceilings are known (host baselines have none here).
  const Ceilings* c = nullptr;
  std::string gpu;
  for (const Result* r : ok)
    if ((c = device_ceilings(r->device))) {
      gpu = r->device;
      break;
    }
  if (!c) throw AnalysisError("plot roofline: no ceilings known for device '" + device + "'");
  Series s;
  double lo = 1e9, hi = 0;
  for (const Result* r : ok) {
    if (r->device != gpu) continue;
    const double flop = 2.0 * double(r->m) * double(r->n) * double(r->k);
    const double bytes = 4.0 * (double(r->m) * r->k + double(r->k) * r->n + double(r->m) * r->n);
    const double ai = flop / bytes;  // compulsory traffic: each input read once, C written once
    lo = std::min(lo, ai), hi = std::max(hi, ai);
    s.add(r->algorithm, ai, r->gflops);
  }
  script << "set title " << quote(o.title.empty() ? "roofline, " + gpu : o.title) << "\n"
         << "set logscale xy\nset xlabel 'arithmetic intensity (FLOP per compulsory byte)'\nset ylabel "
            "'GFLOP/s'\n"
         << "set xrange [" << lo / 2 << ":" << hi * 2 << "]\n"
         << "roof(x) = (x * " << c->bandwidth_gbs << " < " << c->peak_gflops << ") ? x * " << c->bandwidth_gbs
         << " : " << c->peak_gflops << "\n"
         << s.plot_clause("with points pointsize 1.2",
                          "roof(x) with lines lw 2 lc rgb 'black' title " +
                              quote("FP32 peak " + fixed(c->peak_gflops / 1000, 1) + " TFLOP/s, " +
                                    fixed(c->bandwidth_gbs / 1000, 1) + " TB/s"));
  run_gnuplot(script.str(), s.data(), out);
}

}  // namespace mmlab::analysis
