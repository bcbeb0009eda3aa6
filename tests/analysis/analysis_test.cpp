#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <set>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <tuple>

#include "analysis/commands.hpp"
#include "core/decompositions.hpp"
#include "core/distributed.hpp"
#include "analysis/plot.hpp"
#include "analysis/model.hpp"
#include "analysis/paper_tables.hpp"
#include "analysis/readme.hpp"
#include "tests/analysis/fixture.hpp"

namespace mmlab::analysis {
namespace {

using test::around;
using test::Row;
using test::TempDir;
using test::write_results;

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const AnalysisError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Results, LoadsRowsAndSamples) {
  TempDir d;
  write_results(d / "r.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)},
                              {"naive", "default", "block=16x16", 7, 9, 11, "kernel", {}, "skipped"}});
  const auto rows = load_results({d / "r.csv"}, true);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].samples.size(), 10u);
  EXPECT_NEAR(rows[0].median_ms, 1.001, 1e-9);  // around(1.0): the middle two are 1.000 and 1.002
  EXPECT_EQ(rows[0].shape(), "64");
  EXPECT_EQ(rows[1].shape(), "7x9x11");
  EXPECT_EQ(rows[1].configuration(), "naive block=16x16");
  EXPECT_EQ(rows[0].block(), "16x16");
  EXPECT_EQ(rows[1].line, 3u);
}

TEST(Results, BadInputNamesFileLineAndColumn) {
  TempDir d;
  EXPECT_NE(error_of([&] { load_results({d / "missing.csv"}, false); }).find("missing.csv: no such file"),
            std::string::npos);

  { std::ofstream(d / "nocol.csv") << "run_id,algorithm\nx,y\n"; }
  const std::string missing = error_of([&] { load_results({d / "nocol.csv"}, false); });
  EXPECT_NE(missing.find("nocol.csv"), std::string::npos) << missing;
  EXPECT_NE(missing.find("timestamp"), std::string::npos) << missing;  // the first missing column

  write_results(d / "bad.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)}});
  std::string text = slurp(d / "bad.csv");
  text.replace(text.find(",64,64,64,"), 10, ",64,sixty,64,");
  { std::ofstream(d / "bad.csv") << text; }
  const std::string number = error_of([&] { load_results({d / "bad.csv"}, false); });
  EXPECT_NE(number.find("bad.csv:2: column 'n'"), std::string::npos) << number;

  // Every numeric column is read once, when the row is: a column no statistic uses is checked too, and
  // its value is what number() and `rows --format json` hand on.
  write_results(d / "power.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)}}, false);
  const auto read = load_results({d / "power.csv"}, false);
  EXPECT_EQ(read[0].number(Col::m), 64);
  EXPECT_EQ(read[0].numbers[static_cast<std::size_t>(Col::k)], 64);
  EXPECT_FALSE(read[0].numbers[static_cast<std::size_t>(Col::power_w)]);  // empty: none
  EXPECT_FALSE(read[0].numbers[static_cast<std::size_t>(Col::algorithm)]);  // text: none
  text = slurp(d / "power.csv");
  std::vector<std::string> lines;
  for (std::istringstream in(text); std::getline(in, text);) lines.push_back(text);
  const mmlab::CsvRow header = mmlab::parse_csv_line(lines[0], "power.csv");
  const std::size_t power = std::size_t(std::find(header.begin(), header.end(), "power_w") - header.begin());
  mmlab::CsvRow cells = mmlab::parse_csv_line(lines[1], "power.csv");
  ASSERT_EQ(cells.size(), header.size());
  cells[power] = "watts";
  { std::ofstream(d / "power.csv") << lines[0] << "\n" << mmlab::csv_line(cells); }
  const std::string watts = error_of([&] { load_results({d / "power.csv"}, false); });
  EXPECT_NE(watts.find("power.csv:2: column 'power_w': 'watts' is not a number"), std::string::npos) << watts;

  write_results(d / "nosamples.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)}}, false);
  EXPECT_NO_THROW(load_results({d / "nosamples.csv"}, false));
  EXPECT_NE(error_of([&] { load_results({d / "nosamples.csv"}, true); }).find("samples are missing"),
            std::string::npos);

  const auto rows = load_results({d / "nosamples.csv"}, false);
  EXPECT_NE(error_of([&] { rows[0].get("nope"); }).find("unknown column 'nope'"), std::string::npos);
}

// Hostile numbers: a NaN, infinite, negative or empty sample or statistic is an input error naming
// file, line and column (before: NaN hung compare in an endless tie loop), and a file without a
// final newline reads like one with it.
TEST(Results, NonFiniteNegativeOrEmptyMeasurementsAreErrors) {
  TempDir d;
  write_results(d / "r.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)},
                              {"naive", "default", "", 64, 64, 64, "kernel", around(2.0)}});
  const std::string samples = slurp(d / "r.samples.csv"), rows = slurp(d / "r.csv");
  // The second sample's ms (run_id,trial,ms,clock_mhz), then its clock.
  for (const char* column : {"ms", "clock_mhz"})
    for (const char* bad : {"nan", "inf", "-1", ""}) {
      if (std::string(column) == "clock_mhz" && !*bad) continue;  // an empty clock: none was measured
      std::string text = samples;
      const auto line3 = text.find('\n', text.find('\n') + 1) + 1;
      auto field = text.find(',', text.find(',', line3) + 1) + 1;
      if (std::string(column) == "clock_mhz") field = text.find(',', field) + 1;
      text.replace(field, text.find_first_of(",\n", field) - field, bad);
      { std::ofstream(d / "r.samples.csv") << text; }
      const std::string e = error_of([&] { load_results({d / "r.csv"}, true); });
      EXPECT_NE(e.find(std::string("r.samples.csv:3: column '") + column + "'"), std::string::npos)
          << column << " " << bad << ": " << e;
    }
  { std::ofstream(d / "r.samples.csv") << samples; }
  std::string text = rows;
  const auto median = mmlab::result_columns();
  // The first row's median_ms (column index + 1: the fixture writes an extra first column).
  std::size_t at = text.find('\n') + 1;
  const std::size_t index =
      std::size_t(std::find(median.begin(), median.end(), "median_ms") - median.begin()) + 1;
  for (std::size_t c = 0; c < index; ++c) at = text.find(',', at) + 1;
  text.replace(at, text.find(',', at) - at, "nan");
  { std::ofstream(d / "r.csv") << text; }
  const std::string e = error_of([&] { load_results({d / "r.csv"}, true); });
  EXPECT_NE(e.find("r.csv:2: column 'median_ms'"), std::string::npos) << e;

  // No final line end: the last row (or sample) may be cut short, and is never read as a value (#80).
  { std::ofstream(d / "r.csv") << rows.substr(0, rows.size() - 1); }
  EXPECT_NE(error_of([&] { load_results({d / "r.csv"}, true); }).find("r.csv: its last line has no line end"),
            std::string::npos);
  { std::ofstream(d / "r.csv") << rows; }
  { std::ofstream(d / "r.samples.csv") << samples.substr(0, samples.size() - 1); }
  EXPECT_NE(error_of([&] { load_results({d / "r.csv"}, true); }).find("r.samples.csv: its last line has no line end"),
            std::string::npos);
  { std::ofstream(d / "r.samples.csv") << samples; }
  const auto loaded = load_results({d / "r.csv"}, true);
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[1].samples.size(), 10u);
}

// Samples join their row by run_id and pair by trial number (#35): the order of the lines does not
// matter; a trial missing, repeated or beyond the row's count is an error naming the file and line,
// or with leave_out the row is left out.
TEST(Results, SamplesPairByTrialNumberAndMustMatchTheRow) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0, 12)},
                           {"fast", "default", "", 64, 64, 64, "kernel", around(0.9, 12)}};
  for (Row& r : rows) r.order = "interleaved", r.interleave_group = "run-0";
  rows[1].samples[3] = 0.5;  // one round the other way: pairing by position would move it
  write_results(d / "p.csv", rows);
  CompareOptions o;
  o.baseline = "cublas";
  const Table before = compare(load_results({d / "p.csv"}, true), o);
  const std::string samples = slurp(d / "p.samples.csv");
  std::vector<std::string> lines;
  std::stringstream in(samples);
  std::string header, line;
  std::getline(in, header);
  while (std::getline(in, line)) lines.push_back(line);
  std::vector<std::string> shuffled = lines;
  std::reverse(shuffled.begin(), shuffled.end());
  const auto write = [&](const std::vector<std::string>& body) {
    std::ofstream out(d / "p.samples.csv");
    out << header << "\n";
    for (const auto& l : body) out << l << "\n";
  };
  write(shuffled);
  const Table after = compare(load_results({d / "p.csv"}, true), o);
  EXPECT_EQ(after.rows, before.rows) << "the same trials, paired by number, whatever their order";

  std::vector<std::string> doubled = lines;
  doubled.insert(doubled.end(), lines.begin(), lines.end());
  write(doubled);
  std::string e = error_of([&] { load_results({d / "p.csv"}, true); });
  EXPECT_NE(e.find("p.samples.csv:26: trial 0 of run_id run-0 again (first on line 2)"), std::string::npos) << e;

  write(std::vector<std::string>(lines.begin(), lines.end() - 2));  // the other row's last two trials
  e = error_of([&] { load_results({d / "p.csv"}, true); });
  EXPECT_NE(e.find("run_id run-1 has 10 samples, trials 0 to 9, but its row"), std::string::npos) << e;
  EXPECT_NE(e.find("p.csv:3) says 12 trials (trial 10 is missing)"), std::string::npos) << e;
  const auto kept = load_results({d / "p.csv"}, true, BadSamples::leave_out);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].algorithm, "cublas");

  std::vector<std::string> extra = lines;
  extra.push_back("run-1,12,0.9,,");
  write(extra);
  e = error_of([&] { load_results({d / "p.csv"}, true); });
  EXPECT_NE(e.find("has 13 samples, trials 0 to 12, but its row"), std::string::npos) << e;
  EXPECT_NE(e.find("(trials beyond them, from line 26)"), std::string::npos) << e;
}

// What a new user hit (#35, item 4): each names the file and says what is wrong.
TEST(Results, HostileFilesAreClearErrors) {
  TempDir d;
  write_results(d / "r.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)}});
  const std::string rows = slurp(d / "r.csv"), samples = slurp(d / "r.samples.csv");
  // A trial of 0 ms.
  std::string text = samples;
  const auto first = text.find('\n') + 1;
  const auto ms = text.find(',', text.find(',', first) + 1) + 1;
  text.replace(ms, text.find(',', ms) - ms, "0");
  { std::ofstream(d / "r.samples.csv") << text; }
  std::string e = error_of([&] { load_results({d / "r.csv"}, true); });
  EXPECT_NE(e.find("r.samples.csv:2: column 'ms': 0 ms: a trial takes time > 0"), std::string::npos) << e;
  { std::ofstream(d / "r.samples.csv") << samples; }
  // A schema no mmlab-analyze of this revision knows, and a row of another schema in a file.
  text = rows;
  const std::string version = std::string(",") + kSchemaVersion + ",";
  const auto schema = text.find(version, text.find('\n'));
  ASSERT_NE(schema, std::string::npos);
  text.replace(schema, version.size(), ",99,");
  { std::ofstream(d / "s.csv") << text; }
  e = error_of([&] { load_results({d / "s.csv"}, false); });
  EXPECT_NE(e.find(std::string("s.csv:2: column 'schema': '99': this mmlab-analyze reads schema versions 1 to ") +
                   kSchemaVersion),
            std::string::npos)
      << e;
  text.replace(schema, 4, ",6,");
  { std::ofstream(d / "s.csv") << text; }
  e = error_of([&] { load_results({d / "s.csv"}, false); });
  EXPECT_NE(e.find(std::string("a row of version 6 in a file whose columns are version ") + kSchemaVersion),
            std::string::npos)
      << e;
  // A folder, a loop of links, a run_id twice.
  std::filesystem::create_directory(d / "folder");
  e = error_of([&] { load_results({d / "folder"}, false); });
  EXPECT_NE(e.find("folder: a folder, not a results file"), std::string::npos) << e;
  std::filesystem::create_symlink(d / "loop-b.csv", d / "loop-a.csv");
  std::filesystem::create_symlink(d / "loop-a.csv", d / "loop-b.csv");
  e = error_of([&] { load_results({d / "loop-a.csv"}, false); });
  EXPECT_NE(e.find("loop-a.csv: a loop of symbolic links"), std::string::npos) << e;
  const std::string body = rows.substr(rows.find('\n') + 1);
  { std::ofstream(d / "twice.csv") << rows << body; }
  e = error_of([&] { load_results({d / "twice.csv"}, false); });
  EXPECT_NE(e.find("twice.csv:3: column 'run_id': run-0 again (first on line 2)"), std::string::npos) << e;
}

TEST(Summary, GroupsSortsAndPools) {
  TempDir d;
  write_results(d / "a.csv", {{"tiled", "default", "tile=32", 256, 256, 256, "kernel", around(2.0)},
                              {"tiled", "default", "tile=16", 256, 256, 256, "kernel", around(3.0)},
                              {"cublas", "default", "", 256, 256, 256, "kernel", around(0.5)}});
  write_results(d / "b.csv", {{"tiled", "default", "tile=32", 256, 256, 256, "kernel", around(4.0)}});
  auto rows = load_results({d / "a.csv", d / "b.csv"}, true);
  const Table per_config = summary(rows, {"algorithm", "params"}, {"gflops"}, false);
  ASSERT_EQ(per_config.rows.size(), 3u);
  EXPECT_EQ(per_config.rows[0][1], "tile=16");  // slowest first (sorted by gflops of the first row)
  const Table pooled = summary(rows, {"algorithm", "params"}, {}, false);
  EXPECT_EQ(pooled.rows[0][2], "2");   // tile=32: two rows pooled
  EXPECT_EQ(pooled.rows[0][3], "20");  // 20 trials
  EXPECT_NE(error_of([&] { summary(rows, {"algo"}, {}, false); }).find("unknown column"), std::string::npos);
  const Table by_block = summary(rows, {"algorithm", "block", "size"}, {"size"}, false);
  EXPECT_EQ(by_block.rows[0][1], "16x16");
  EXPECT_EQ(by_block.rows[0][2], "256");
}

TEST(Compare, VerdictsAndErrors) {
  TempDir d;
  write_results(d / "c.csv", {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 30)},
                              {"fast", "default", "", 512, 512, 512, "kernel", around(0.5, 30)},
                              {"slow", "default", "", 512, 512, 512, "kernel", around(2.0, 30)},
                              {"same", "default", "", 512, 512, 512, "kernel", around(1.0, 30)},
                              {"other_size", "default", "", 64, 64, 64, "kernel", around(1.0, 30)}});
  const auto rows = load_results({d / "c.csv"}, true);
  CompareOptions o;
  o.baseline = "cublas";
  const Table t = compare(rows, o);
  ASSERT_EQ(t.rows.size(), 3u);  // other_size has no baseline at 64
  EXPECT_EQ(t.rows[0][2], "fast");
  EXPECT_EQ(t.rows[0][5], "2.000");
  EXPECT_EQ(t.rows[0][7], "faster");
  EXPECT_EQ(t.rows[1][7], "slower");
  EXPECT_EQ(t.rows[2][7], "equivalent (within 2%)");
  EXPECT_EQ(t.rows[0][8], "independent, 30");
  EXPECT_NE(t.note.find("a problem (shape, scope, L2 setting, run): up to 3 comparisons"), std::string::npos)
      << t.note;
  o.baseline = "nope";
  EXPECT_NE(error_of([&] { compare(rows, o); }).find("not in the files"), std::string::npos);

  write_results(d / "two.csv", {{"tiled", "default", "tile=16", 64, 64, 64, "kernel", around(1.0)},
                                {"tiled", "default", "tile=32", 64, 64, 64, "kernel", around(1.0)}});
  o.baseline = "tiled";
  EXPECT_NE(error_of([&] { compare(load_results({d / "two.csv"}, true), o); }).find("several configurations"),
            std::string::npos);
}

// --baseline best:cublas,cutlass: at each problem the fastest FP32 row of the yardsticks is the
// baseline (any of their configurations: CUTLASS's several variants), and the other yardsticks' rows
// are compared with it; a TF32 row is never a yardstick.
TEST(Compare, TheBestOfSeveralBaselinesPerProblem) {
  TempDir d;
  write_results(d / "b.csv", {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 30)},
                              {"cutlass", "simt", "", 512, 512, 512, "kernel", around(1.25, 30)},
                              {"cutlass", "tf32x3", "", 512, 512, 512, "kernel", around(0.8, 30)},
                              {"flagship", "cuda_cores", "", 512, 512, 512, "kernel", around(0.4, 30)},
                              {"cublas", "default", "", 64, 64, 64, "kernel", around(1.0, 30)},
                              {"cutlass", "simt", "", 64, 64, 64, "kernel", around(2.0, 30)},
                              {"flagship", "cuda_cores", "", 64, 64, 64, "kernel", around(0.5, 30)}});
  const auto rows = load_results({d / "b.csv"}, true);
  CompareOptions o;
  o.baseline = "best:cublas,cutlass";
  const Table t = compare(rows, o);
  std::map<std::string, std::string> speedup;  // "configuration size" -> x the best
  for (const auto& r : t.rows) speedup[r[2] + " " + r[0]] = r[5];  // configuration, size
  ASSERT_EQ(t.rows.size(), 5u) << "512: cublas, cutlass simt, flagship against tf32x3; 64: cutlass, flagship";
  EXPECT_EQ(speedup.at("flagship cuda_cores 512"), "2.000");  // 0.8 / 0.4: CUTLASS's 3xTF32 the yardstick
  EXPECT_EQ(speedup.at("cublas 512"), "0.800");
  EXPECT_EQ(speedup.at("flagship cuda_cores 64"), "2.000");  // cuBLAS the faster there
  EXPECT_EQ(speedup.at("cutlass simt 64"), "0.500");
  EXPECT_NE(t.note.find("the fastest FP32 row of cublas,cutlass"), std::string::npos) << t.note;
  o.baseline = "best:";
  EXPECT_NE(error_of([&] { compare(rows, o); }).find("needs a list"), std::string::npos);
  o.baseline = "best:cublas,nope";
  EXPECT_NE(error_of([&] { compare(rows, o); }).find("not in the files"), std::string::npos);
}

// --baseline-scope: the baseline's kernel rows (in-core cuBLAS) against rows of every scope at the
// same shape (out-of-core ones are end_to_end); without it, each scope against its own baseline.
TEST(Compare, ABaselineScopeMeetsEveryScope) {
  TempDir d;
  write_results(d / "o.csv", {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 30)},
                              {"cublas", "default", "", 512, 512, 512, "end_to_end", around(1.25, 30)},
                              {"out_of_core", "default", "", 512, 512, 512, "end_to_end", around(2.0, 30)}});
  const auto rows = load_results({d / "o.csv"}, true);
  CompareOptions o;
  o.baseline = "cublas";
  Table t = compare(rows, o);
  ASSERT_EQ(t.rows.size(), 1u);  // out_of_core against cuBLAS end_to_end
  EXPECT_EQ(t.rows[0][5], "0.625");
  o.baseline_scope = mmlab::Scope::kernel;
  t = compare(rows, o);
  ASSERT_EQ(t.rows.size(), 2u);  // cuBLAS end_to_end and out_of_core, each against cuBLAS kernel
  for (const auto& r : t.rows) EXPECT_EQ(r[1], "end_to_end");
  EXPECT_EQ(t.rows[0][2] == "out_of_core" ? t.rows[0][5] : t.rows[1][5], "0.500");
}

// A re-run appends a second run: compare takes the latest row of each configuration by default,
// one named run on request, and refuses `all` with a message that says how to choose.
TEST(Compare, PicksTheLatestRunOrTheOneNamed) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 30)},
                           {"fast", "default", "", 512, 512, 512, "kernel", around(0.5, 30)}};
  rows[0].run = rows[1].run = "first";
  Row cublas2 = rows[0], fast2 = rows[1];
  cublas2.run = fast2.run = "second";
  fast2.samples = around(2.0, 30);  // the second run is slower
  rows.push_back(cublas2);
  rows.push_back(fast2);
  write_results(d / "c.csv", rows);
  const auto loaded = load_results({d / "c.csv"}, true);
  CompareOptions o;
  o.baseline = "cublas";
  Table t = compare(loaded, o);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][7], "slower");
  o.run = "first";
  t = compare(loaded, o);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][7], "faster");
  o.run = "all";
  EXPECT_NE(error_of([&] { compare(loaded, o); }).find("--run"), std::string::npos);
  o.run = "nope";
  EXPECT_NE(error_of([&] { compare(loaded, o); }).find("first, second"), std::string::npos);
}

// Interleaved rows of one group are paired by round: a drift that hits both alike cancels in each
// round's ratio, so a 1% difference that independent samples cannot resolve is decided.
TEST(Compare, InterleavedTrialsArePairedByRound) {
  TempDir d;
  std::vector<double> base, fast;
  for (int i = 0; i < 12; ++i) {
    const double drift = 1.0 + 0.05 * i;  // the clock sinks over the run: 5% per round
    base.push_back(1.00 * drift);
    fast.push_back(0.97 * drift * (1 + 0.001 * ((i * 5) % 3 - 1)));
  }
  std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", base},
                           {"flagship", "default", "", 512, 512, 512, "kernel", fast}};
  for (Row& r : rows) r.order = "interleaved", r.interleave_group = "run-0";
  write_results(d / "p.csv", rows);
  CompareOptions o;
  o.baseline = "cublas";
  Table t = compare(load_results({d / "p.csv"}, true), o);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][8], "paired, 12");
  EXPECT_EQ(t.rows[0][7], "faster") << t.rows[0][6];
  EXPECT_NEAR(std::stod(t.rows[0][5]), 1 / 0.97, 0.002);
  // The same samples as independent rows: the drift swamps the difference.
  for (Row& r : rows) r.order = "sequential", r.interleave_group = "";
  write_results(d / "s.csv", rows);
  t = compare(load_results({d / "s.csv"}, true), o);
  EXPECT_EQ(t.rows[0][8], "independent, 12");
  EXPECT_EQ(t.rows[0][7].rfind("inconclusive: about", 0), 0u) << t.rows[0][7];
}

// Three trials allow no 95% interval (3 vs 3 reaches 90%) and no p below 0.1: the verdict says how
// many trials would decide, and the note says the tests cannot reach significance, and with what.
TEST(Compare, AnUnderpoweredDesignSaysSoAndWhatItNeeds) {
  TempDir d;
  write_results(d / "u.csv", {{"cublas", "default", "", 512, 512, 512, "kernel", {1.0, 1.01, 0.99}},
                              {"fast", "default", "", 512, 512, 512, "kernel", {0.50, 0.51, 0.49}},
                              {"slow", "default", "", 512, 512, 512, "kernel", {2.0, 2.02, 1.98}}});
  CompareOptions o;
  o.baseline = "cublas";
  const Table t = compare(load_results({d / "u.csv"}, true), o);
  ASSERT_EQ(t.rows.size(), 2u);
  // The widest interval 3 vs 3 allows, [min, max] of the log-ratios, covers 90%: shown, not decisive.
  EXPECT_EQ(t.rows[0][6], "1.941 to 2.061 (90%)");
  EXPECT_EQ(t.rows[0][7], "inconclusive: at least 4 trials");
  EXPECT_NE(t.note.find("No comparisons can reach p < 0.05 after Holm"), std::string::npos) << t.note;
  EXPECT_NE(t.note.find("the smallest p of 3 vs 3 trials is 0.1"), std::string::npos) << t.note;
  EXPECT_NE(t.note.find("About 5 trials per configuration"), std::string::npos) << t.note;
}

// A run's rows that ran below the reference clock are flagged; --cycles compares ms x MHz.
TEST(Compare, ClocksWarnAndCyclesCompareWorkNotTime) {
  TempDir d;
  std::vector<double> base = around(1.0, 12), other = around(1.0, 12), slow_clock(12, 1500),
                      fast_clock(12, 1980);
  for (double& v : other) v *= 1980.0 / 1500;  // the same work, timed at a lower clock
  std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", base},
                           {"other", "default", "", 512, 512, 512, "kernel", other}};
  rows[0].clocks = fast_clock, rows[1].clocks = slow_clock, rows[1].slow_trials = 12;
  write_results(d / "c.csv", rows);
  CompareOptions o;
  o.baseline = "cublas";
  const auto loaded = load_results({d / "c.csv"}, true);
  Table t = compare(loaded, o);
  EXPECT_EQ(t.rows[0][7], "slower");
  EXPECT_NE(t.note.find("1 rows had trials below 95%"), std::string::npos) << t.note;
  o.cycles = true;
  t = compare(loaded, o);
  EXPECT_EQ(t.header[3], "median kcycles");
  EXPECT_EQ(t.rows[0][7], "equivalent (within 2%)");
  write_results(d / "none.csv", {{"cublas", "default", "", 512, 512, 512, "kernel", base},
                                 {"other", "default", "", 512, 512, 512, "kernel", other}});
  EXPECT_NE(error_of([&] { compare(load_results({d / "none.csv"}, true), o); }).find("no clock per trial"),
            std::string::npos);
}

// Three runs of one comparison: each run's estimate, their combination with an interval from the
// run-to-run spread, and whether the claim holds in every run.
TEST(Compare, AcrossRunsCombinesEachRunsEstimate) {
  TempDir d;
  std::vector<Row> rows;
  const double speedups[] = {1.022, 0.988, 0.985};
  for (int run = 0; run < 3; ++run) {
    rows.push_back({"cublas", "default", "", 4096, 4096, 4096, "kernel", around(1.0, 12)});
    rows.push_back({"flagship", "default", "", 4096, 4096, 4096, "kernel", around(1.0 / speedups[run], 12)});
    rows[rows.size() - 2].run = rows.back().run = "run" + std::to_string(run);
  }
  rows.push_back({"steady", "default", "", 4096, 4096, 4096, "kernel", around(0.5, 12)});
  rows.back().run = "run0";
  write_results(d / "a.csv", rows);
  CompareOptions o;
  o.baseline = "cublas";
  o.across_runs = true;
  const Table t = compare(load_results({d / "a.csv"}, true), o);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][2], "flagship");
  EXPECT_EQ(t.rows[0][3], "3");
  EXPECT_EQ(t.rows[0][7], "0.985 to 1.022");
  EXPECT_EQ(t.rows[0][9], "no");  // faster in one run, slower in two
  EXPECT_EQ(t.rows[1][8], "one run: no across-run estimate");
}

// A baseline whose rows were all skipped is named as such, with the reason.
TEST(Compare, ABaselineWithoutOkRowsSaysWhy) {
  TempDir d;
  Row skipped{"cublas", "default", "", 512, 512, 512, "kernel", {}};
  skipped.status = "skipped";
  write_results(d / "s.csv", {skipped, {"eigen", "default", "", 512, 512, 512, "kernel", around(1.0)}});
  CompareOptions o;
  o.baseline = "cublas";
  EXPECT_NE(error_of([&] { compare(load_results({d / "s.csv"}, true), o); }).find("cublas has no ok rows"),
            std::string::npos);
}

// Parameters where the variant goes (tiled:tile=32) are named as such, with the spelling that works (#80).
TEST(Compare, ParametersInTheVariantsPlaceAreSaidToBeThat) {
  TempDir d;
  write_results(d / "p.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)},
                              {"tiled", "default", "tile=32", 64, 64, 64, "kernel", around(2.0)}});
  CompareOptions o;
  o.baseline = "tiled:tile=32";
  const std::string e = error_of([&] { compare(load_results({d / "p.csv"}, true), o); });
  EXPECT_NE(e.find("'tile=32' is parameters, not a variant"), std::string::npos) << e;
  EXPECT_NE(e.find("tiled:default:tile=32"), std::string::npos) << e;
}

// headline pairs rows with the baseline measured under the same L2 setting, and takes any baseline.
TEST(Headline, PairsByL2SettingAndTakesABaseline) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)},
                           {"tiled", "default", "tile=32", 64, 64, 64, "kernel", around(2.0)},
                           {"cublas", "default", "", 64, 64, 64, "kernel", around(4.0)},
                           {"tiled", "default", "tile=32", 64, 64, 64, "kernel", around(4.0)}};
  rows[2].l2_flush = rows[3].l2_flush = "on";
  write_results(d / "h.csv", rows);
  const auto loaded = load_results({d / "h.csv"}, false);
  Table t = headline(loaded, "64");
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.header[2], "L2 flush");
  for (const auto& r : t.rows) {
    if (r[0] == "tiled") {
      EXPECT_EQ(r.back(), r[2] == "off" ? "0.500" : "1.000") << r[2];
    }
  }
  t = headline(loaded, "64", "tiled");
  EXPECT_EQ(t.header.back(), "x tiled");
  EXPECT_NE(error_of([&] { headline(loaded, "64", "nope"); }).find("no nope row"), std::string::npos);
}

// Strong scaling pairs each distributed row with its own engine on one GPU measured in its own job,
// even when a later job measured the baseline again.
TEST(Scaling, PairsEachRowWithItsOwnJobsBaseline) {
  TempDir d;
  Row base1{"cublas", "default", "", 512, 512, 512, "kernel", around(4.0)},
      dist{"dist_cannon", "default", "grid=2x2;engine=cublas", 512, 512, 512, "kernel", around(1.0)};
  dist.fields = {{"grid", "2x2"}, {"gpus", "4"}, {"ranks", "4"}, {"engine", "cublas:default"}};
  Row base2 = base1;
  base1.run = dist.run = "first";
  base2.run = "second";
  base2.samples = around(8.0);
  write_results(d / "s.csv", {base1, dist, base2});
  const Table t = scaling(load_results({d / "s.csv"}, true));
  ASSERT_EQ(t.rows.size(), 1u);
  const auto at = [&](const char* column) {
    return t.rows[0][std::size_t(std::find(t.header.begin(), t.header.end(), column) - t.header.begin())];
  };
  EXPECT_EQ(at("x 1 GPU"), "4.000");  // 4.0 ms in its own job, not the second job's 8.0
  EXPECT_EQ(at("efficiency"), "1.000");
  EXPECT_EQ(at("x FP32 cuBLAS"), "4.000");
}

// Each engine against itself: a TF32 row against cuBLAS TF32 on one GPU (not FP32 cuBLAS), an
// FP32-accurate one against the flagship's tensor cores; beside them FP32 cuBLAS and the fastest
// cuBLASMp row of the same precision, the efficiency at equal clocks, time / bound and GFLOP/J.
TEST(Scaling, EachEngineAgainstItselfBesideCublasMp) {
  TempDir d;
  Row fp32{"cublas", "default", "", 4096, 4096, 4096, "kernel", around(8.0)},
      tf32{"cublas", "tf32", "", 4096, 4096, 4096, "kernel", around(2.0)},
      flagship{"flagship", "tensor_cores", "kernel=auto", 4096, 4096, 4096, "kernel", around(3.0)},
      cannon{"dist_cannon", "default", "grid=2x2;engine=cublas_tf32", 4096, 4096, 4096, "kernel", around(1.0)},
      summa{"dist_summa", "default", "grid=2x2;engine=tensor_cores", 4096, 4096, 4096, "kernel", around(1.0)},
      vendor{"cublasmp", "gemm", "grid=2x2;engine=cublas_tf32;block=whole", 4096, 4096, 4096, "kernel", around(2.0)},
      vendor_fp32{"cublasmp", "gemm", "grid=2x2;engine=cublas;block=whole", 4096, 4096, 4096, "kernel", around(3.0)},
      vendor_1d{"cublasmp", "matmul_ag", "engine=cublas_tf32", 4096, 4096, 4096, "kernel", around(1.6)};
  const std::map<std::string, std::string> four = {{"grid", "2x2"}, {"gpus", "4"}, {"ranks", "4"}};
  cannon.fields = summa.fields = vendor.fields = vendor_fp32.fields = four;
  cannon.fields["engine"] = vendor.fields["engine"] = "cublas:tf32";
  cannon.fields["bound_ms"] = "0.5", cannon.fields["clock_mhz"] = "1500", cannon.fields["energy_j"] = "1.0";
  tf32.fields["clock_mhz"] = "1800", tf32.fields["energy_j"] = "0.5";
  summa.fields["engine"] = "flagship:tensor_cores:kernel=tf32x3:half3;choice=measured";
  vendor_fp32.fields["engine"] = "cublas:default";
  vendor.variant = vendor_fp32.variant = "gemm";
  vendor_1d.fields = {{"gpus", "4"}, {"ranks", "4"}, {"engine", "cublas:tf32"}};  // a 1D algorithm: no grid
  write_results(d / "s.csv", {fp32, tf32, flagship, cannon, summa, vendor, vendor_fp32, vendor_1d});
  std::vector<Result> rows = load_results({d / "s.csv"}, true);
  for (Result& r : rows)  // the fixture judges only a variant named tf32 as TF32
    if (r.get("engine") == "cublas:tf32") r.precision = mmlab::Precision::tf32;
  const Table t = scaling(rows);
  const auto at = [&](const std::string& algorithm, const char* column) {
    for (const auto& r : t.rows)
      if (r[1] == algorithm) return r[std::size_t(std::find(t.header.begin(), t.header.end(), column) - t.header.begin())];
    return std::string("absent");
  };
  EXPECT_EQ(at("dist_cannon", "engine"), "cublas:tf32");
  EXPECT_EQ(at("dist_cannon", "x 1 GPU"), "2.000");        // against cuBLAS TF32's 2.0 ms
  EXPECT_EQ(at("dist_cannon", "efficiency"), "0.500");
  EXPECT_EQ(at("dist_cannon", "at equal clocks"), "0.600");  // 0.5 x 1800 / 1500 MHz
  EXPECT_EQ(at("dist_cannon", "x FP32 cuBLAS"), "8.000");
  EXPECT_EQ(at("dist_cannon", "x cuBLASMp"), "1.600");  // the fastest TF32 cuBLASMp row, matmul_ag's 1.6 ms
  EXPECT_NE(at("dist_cannon", "x cuBLASMp CI"), "");
  EXPECT_NEAR(std::stod(at("dist_cannon", "time / bound")), 2.0, 0.01);
  EXPECT_EQ(at("dist_cannon", "GFLOP/J"), "");  // a trial of 1 ms: shorter than NVML's counter's steps
  EXPECT_EQ(at("dist_cannon", "GFLOP/J, 1 GPU"), "");
  EXPECT_EQ(at("dist_summa", "engine"), "flagship:tensor_cores");
  EXPECT_EQ(at("dist_summa", "x 1 GPU"), "3.000");  // against flagship tensor_cores' 3.0 ms
  EXPECT_EQ(at("dist_summa", "x cuBLASMp"), "3.000");  // FP32: the FP32 cuBLASMp row
  // --best: each shape's fastest lab row and fastest cuBLASMp row of each engine; the 1D one is there.
  const Table best = scaling(rows, "", 400, true);
  std::multiset<std::string> kept;
  for (const auto& r : best.rows) kept.insert(r[1] + " " + r[3]);
  EXPECT_EQ(kept, (std::multiset<std::string>{"dist_cannon cublas:tf32", "dist_summa flagship:tensor_cores",
                                               "cublasmp cublas:tf32", "cublasmp cublas:default"}));
  // A shape's lab rows come before its cuBLASMp rows, whichever job the files have first.
  std::vector<Result> vendor_first = rows;
  std::stable_partition(vendor_first.begin(), vendor_first.end(), [](const Result& r) { return r.algorithm == "cublasmp"; });
  const Table reordered = scaling(vendor_first, "", 400, true);
  ASSERT_EQ(reordered.rows.size(), 4u);
  EXPECT_NE(reordered.rows[0][1], "cublasmp");
  EXPECT_NE(reordered.rows[1][1], "cublasmp");
  EXPECT_EQ(reordered.rows[2][1], "cublasmp");
  // --baseline names one yardstick for every row, a TF32 one too when its variant is named.
  const Table all = scaling(rows, "cublas:tf32");
  for (const auto& r : all.rows) {
    if (r[1] == "dist_summa") {
      EXPECT_EQ(r[8], "2.000");  // 2.0 ms of cuBLAS TF32 over its 1.0
    }
  }
}

// Energy per trial only where a trial spans NVML's counter's steps (100 ms and more).
TEST(Scaling, EnergyOfLongTrialsOnly) {
  TempDir d;
  Row base{"cublas", "default", "", 16384, 16384, 16384, "kernel", around(200.0)},
      dist{"dist_cannon", "default", "grid=2x2;engine=cublas", 16384, 16384, 16384, "kernel", around(100.0)};
  dist.fields = {{"grid", "2x2"}, {"gpus", "4"}, {"ranks", "4"}, {"engine", "cublas:default"}, {"energy_j", "80"}};
  base.fields["energy_j"] = "140";
  write_results(d / "e.csv", {base, dist});
  const Table t = scaling(load_results({d / "e.csv"}, true));
  ASSERT_EQ(t.rows.size(), 1u);
  const auto column = [&](const char* name) {
    return t.rows[0][std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin())];
  };
  EXPECT_EQ(column("GFLOP/J"), "110.0");         // 2 16384^3 flop / 80 J
  EXPECT_EQ(column("GFLOP/J, 1 GPU"), "62.8");   // / 140 J
}

// Rows of schema 7 recorded the engine axis's value: read as the spec it names.
TEST(Scaling, ReadsSchema7EnginesAsTheirSpecs) {
  TempDir d;
  Row base{"flagship", "tensor_cores", "", 512, 512, 512, "kernel", around(4.0)},
      dist{"dist_dns", "default", "grid=2x2;engine=tf32x3", 512, 512, 512, "kernel", around(2.0)};
  dist.fields = {{"grid", "2x2"}, {"gpus", "4"}, {"ranks", "4"}, {"engine", "tf32x3"}};
  write_results(d / "s.csv", {base, dist}, true, 7);
  const std::vector<Result> rows = load_results({d / "s.csv"}, true);
  EXPECT_EQ(rows[1].get("engine"), "flagship:tensor_cores");
  EXPECT_EQ(rows[1].params, "grid=2x2;engine=tensor_cores");
  EXPECT_EQ(scaling(rows).rows.at(0)[8], "2.000");
}

// An engine's older name (core/distributed.hpp's kEngineAliases: tf32x3, the flagship's tensor_cores)
// reads as its current one in a distributed row's params and resolved, whatever the schema; nothing
// else changes.
TEST(Scaling, ReadsOlderEngineNamesAsTheCurrentOnes) {
  EXPECT_EQ(with_current_engine("grid=2x2;engine=tf32x3;transport=nccl"),
            "grid=2x2;engine=tensor_cores;transport=nccl");
  EXPECT_EQ(with_current_engine("engine=tf32x3"), "engine=tensor_cores");
  EXPECT_EQ(with_current_engine("grid=2x2;engine=cublas"), "grid=2x2;engine=cublas");
  EXPECT_EQ(with_current_engine("grid=2x2;my_engine=tf32x3"), "grid=2x2;my_engine=tf32x3");
  EXPECT_EQ(with_current_engine(""), "");
  EXPECT_EQ(distributed_engine_spec("tf32x3"), distributed_engine_spec("tensor_cores"));
  TempDir d;
  Row dist{"dist_cannon", "default", "grid=2x2;engine=tf32x3;transport=copy_engine", 512, 512, 512, "kernel",
           around(2.0)},
      single{"tf32x3", "half3", "stages=3;split=auto", 512, 512, 512, "kernel", around(1.0)};
  dist.fields = {{"grid", "2x2"}, {"gpus", "4"}, {"ranks", "4"}, {"engine", "flagship:tensor_cores"}};
  write_results(d / "s.csv", {dist, single});
  const std::vector<Result> rows = load_results({d / "s.csv"}, true);
  EXPECT_EQ(rows[0].params, "grid=2x2;engine=tensor_cores;transport=copy_engine");
  EXPECT_EQ(rows[0].get("params"), rows[0].params);
  EXPECT_EQ(rows[0].get("resolved"), "grid=2x2;engine=tensor_cores;transport=copy_engine");
  EXPECT_EQ(rows[1].algorithm, "tf32x3");
  EXPECT_EQ(rows[1].params, "stages=3;split=auto");
}

// The CPU backend's baseline is one process of eigen on the host, its own engine.
TEST(Scaling, AnEigenBaselineIsOneProcessNotOneGpu) {
  TempDir d;
  Row base{"eigen", "default", "threads=4", 256, 256, 256, "kernel", around(4.0)},
      dist{"dist_cannon", "default", "grid=2x2;engine=eigen", 256, 256, 256, "kernel", around(2.0)};
  base.device = dist.device = "cpu: test";
  base.fields = {{"gpus", "0"}, {"ranks", "1"}};
  dist.fields = {{"grid", "2x2"}, {"gpus", "0"}, {"ranks", "4"}, {"engine", "eigen:default"}};
  write_results(d / "s.csv", {base, dist});
  const std::vector<Result> rows = load_results({d / "s.csv"}, true);
  const Table t = scaling(rows);
  EXPECT_EQ(t.rows[0][10], "0.500");  // speed-up 2 over 4 ranks
  EXPECT_EQ(t.rows[0][4], "4 CPU ranks");
  // Against cuBLAS, which the CPU backend's job did not run: the error says what is missing.
  const std::string e = error_of([&] { scaling(rows, "cublas"); });
  EXPECT_NE(e.find("no one-GPU row of cublas at the distributed rows' shapes"), std::string::npos) << e;
}

// README's generated tables each name the GPU and revision they were measured on (not one line
// for all of them), and the headline says how many runs stand behind each figure.
TEST(Readme, EachTableNamesItsOwnDevice) {
  TempDir d;
  std::filesystem::create_directories(d / "data");
  Row a1{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)},
      a2{"tiled", "default", "tile=32", 64, 64, 64, "kernel", around(2.0)};
  Row b1 = a1, b2 = a2;
  a1.device = a2.device = "GPU A";
  b1.device = b2.device = "GPU B";
  b2.samples = around(1.5);
  write_results(d / "data/a.csv", {a1, a2});
  write_results(d / "data/b.csv", {b1, b2});
  { std::ofstream(d / "data/headline.txt") << "size 64\nbest a.csv\nversus b.csv\n"; }
  {
    std::ofstream(d / "README.md")
        << "x\n<!-- mmlab-analyze readme: begin -->\n<!-- mmlab-analyze readme: end -->\n";
  }
  regenerate(d / "data", d / "README.md", d / "reports");
  std::ifstream in(d / "README.md");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto best = text.find("| tiled |"), versus = text.find("Head-to-head");
  ASSERT_NE(best, std::string::npos) << text;
  ASSERT_NE(versus, std::string::npos) << text;
  EXPECT_NE(text.find("Measured on GPU A", best), std::string::npos) << text;
  EXPECT_LT(text.find("Measured on GPU A", best), versus) << text;
  EXPECT_NE(text.find("Measured on GPU B", versus), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU B"), text.find("Measured on GPU B") + 12) << "GPU B named only by its own table";
  EXPECT_NE(text.find("| runs |"), std::string::npos) << text;
}

// The headline's cuBLAS TFLOP/s is cuBLAS's own row's rate, not worked back from the rounded
// TFLOP/s and ratio of the other row (#35: README said 51.06 where the file says 51.04).
TEST(Readme, TheBaselinesRateIsItsOwnRows) {
  TempDir d;
  std::filesystem::create_directories(d / "data");
  const Row cublas{"cublas", "default", "", 4096, 4096, 4096, "kernel", around(2.6931)},
      tiled{"tiled", "default", "tile=32", 4096, 4096, 4096, "kernel", around(5.3377)};
  write_results(d / "data/a.csv", {cublas, tiled});
  { std::ofstream(d / "data/headline.txt") << "size 4096\nbest a.csv\n"; }
  { std::ofstream(d / "README.md") << "<!-- mmlab-analyze readme: begin -->\n<!-- mmlab-analyze readme: end -->\n"; }
  regenerate(d / "data", d / "README.md", d / "reports");
  const std::string text = slurp(d / "README.md");
  const auto rows = load_results({d / "data/a.csv"}, false);
  const std::string own = fixed(rows[0].gflops / 1000, 2), tiled_rate = fixed(rows[1].gflops / 1000, 2);
  const std::string worked_back =
      fixed(std::stod(tiled_rate) / std::stod(fixed(rows[1].gflops / rows[0].gflops, 3)), 2);
  ASSERT_NE(own, worked_back) << "the fixture must tell the two apart";
  const auto line = text.find("| tiled |");
  ASSERT_NE(line, std::string::npos) << text;
  const std::string row = text.substr(line, text.find('\n', line) - line);
  EXPECT_NE(row.find("| " + tiled_rate + " | " + own + " |"), std::string::npos) << row;
}

// `versus FILE INPUTS` keeps the rows of one kind of inputs; the general shapes are summed up per
// configuration, not pooled.
TEST(Readme, VersusKeepsOneKindOfInputsAndSumsUpEachConfiguration) {
  TempDir d;
  std::filesystem::create_directories(d / "data");
  std::vector<Row> rows;
  for (const char* inputs : {"uniform", "wide_exponent"})
    for (long m : {64L, 96L}) {
      Row c{"cublas", "default", "", m, m + 1, m, "kernel", around(1.0)},
          f{"flagship", "fast", "", m, m + 1, m, "kernel", around(0.5)},
          s{"flagship", "slow", "", m, m + 1, m, "kernel", around(2.0)};
      c.inputs = f.inputs = s.inputs = inputs;
      rows.insert(rows.end(), {c, f, s});
    }
  write_results(d / "data/v.csv", rows);
  { std::ofstream(d / "data/headline.txt") << "size 64\nversus v.csv uniform\n"; }
  {
    std::ofstream(d / "README.md")
        << "<!-- mmlab-analyze readme: begin -->\n<!-- mmlab-analyze readme: end -->\n";
  }
  regenerate(d / "data", d / "README.md", d / "reports");
  std::ifstream in(d / "README.md");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("(uniform inputs)"), std::string::npos) << text;
  EXPECT_NE(text.find("flagship fast on 2 general shapes (MxNxK): speed-up median 2.000"), std::string::npos)
      << text;
  EXPECT_NE(text.find("flagship slow on 2 general shapes (MxNxK): speed-up median 0.500"), std::string::npos)
      << text;
  { std::ofstream(d / "data/headline.txt") << "size 64\nversus v.csv uniform extra\n"; }
  EXPECT_THROW(regenerate(d / "data", d / "README.md", d / "reports"), AnalysisError);
}

// A `front` line names its configuration by the start of its name: where that start begins several
// configurations (slabs=1 and slabs=4), the one named in full is taken, and a start that only begins
// them is an error, not whichever came last.
TEST(Readme, AFrontLineTakesOneConfiguration) {
  TempDir d;
  std::filesystem::create_directories(d / "data");
  const Row base{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)},
      one{"tiled", "default", "tile=32;slabs=1", 64, 64, 64, "kernel", around(0.5)},
      four{"tiled", "default", "tile=32;slabs=4", 64, 64, 64, "kernel", around(2.0)};
  write_results(d / "data/f.csv", {base, one, four});
  const std::string markers =
      "<!-- mmlab-analyze front: begin -->\n<!-- mmlab-analyze front: end -->\n"
      "<!-- mmlab-analyze readme: begin -->\n<!-- mmlab-analyze readme: end -->\n";
  { std::ofstream(d / "README.md") << markers; }
  { std::ofstream(d / "data/headline.txt") << "size 64\nfront T | 64 | cublas | tiled tile=32;slabs=1 | f.csv\n"; }
  regenerate(d / "data", d / "README.md", d / "reports");
  EXPECT_NE(slurp(d / "README.md").find("| 2.000 |"), std::string::npos) << slurp(d / "README.md");
  { std::ofstream(d / "README.md") << markers; }
  { std::ofstream(d / "data/headline.txt") << "size 64\nfront T | 64 | cublas | tiled tile=32 | f.csv\n"; }
  const std::string e = error_of([&] { regenerate(d / "data", d / "README.md", d / "reports"); });
  EXPECT_NE(e.find("starts several configurations"), std::string::npos) << e;
}

// Version 6 files were timed with events on an idle stream (GPU rows), or the host's clock: the timer is
// filled in; the host's own time was not measured.
TEST(Results, ReadsSchemaVersion6AndSaysHowItsRowsWereTimed) {
  TempDir d;
  Row kernel{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)};
  Row batched{"cublas", "default", "", 64, 64, 64, "batched", around(1.0)};
  Row host{"eigen", "default", "threads=1", 64, 64, 64, "kernel", around(1.0)};
  host.device = "cpu: a test CPU (2 threads)";
  Row skipped{"naive", "default", "", 64, 64, 64, "kernel", {}, "skipped"};
  write_results(d / "v6.csv", {kernel, batched, host, skipped}, true, 6);
  const auto rows = load_results({d / "v6.csv"}, true);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].get("schema"), "6");
  EXPECT_EQ(rows[0].timer, mmlab::Timer::events);
  EXPECT_EQ(rows[1].timer, mmlab::Timer::graph);
  EXPECT_EQ(rows[2].timer, mmlab::Timer::host);
  EXPECT_FALSE(rows[3].timer.has_value());
  EXPECT_EQ(rows[0].host_ms, 0.0);
  EXPECT_TRUE(rows[0].sample_host.empty());
  EXPECT_EQ(rows[0].samples.size(), 10u);
  // And the current schema: the timer as written, the host's time per trial beside the GPU's.
  kernel.host = around(0.02);
  write_results(d / "v7.csv", {kernel});
  const auto now = load_results({d / "v7.csv"}, true);
  EXPECT_EQ(now[0].timer, mmlab::Timer::blocked);
  EXPECT_NEAR(now[0].host_ms, 0.02, 0.001);
  EXPECT_EQ(now[0].sample_host.size(), 10u);
  kernel.timer = "stopwatch";
  write_results(d / "bad.csv", {kernel});
  const std::string bad = error_of([&] { load_results({d / "bad.csv"}, false); });
  EXPECT_NE(bad.find("bad.csv:2: column 'timer': 'stopwatch' (valid: blocked, blocked_graph, events, graph, host)"),
            std::string::npos)
      << bad;
}

// Each choice column is read once into its type (issue #48): scope, status, inputs, L2 setting; a
// value no mmlab writes names the column, the file and line and the valid values. The problem key is
// one function of them.
TEST(Results, ChoicesAreReadIntoTheirTypes) {
  TempDir d;
  Row r{"cublas", "default", "", 64, 96, 32, "batched", around(1.0)};
  r.inputs = "exp_spread:2";
  r.l2_flush = "on";
  Row s{"naive", "default", "", 64, 64, 64, "kernel", {}, "skipped"};
  write_results(d / "good.csv", {r, s});
  const auto rows = load_results({d / "good.csv"}, false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].scope, mmlab::Scope::batched);
  EXPECT_EQ(rows[0].status, mmlab::Status::ok);
  EXPECT_EQ(rows[0].inputs, mmlab::Inputs::exp_spread(2));
  EXPECT_TRUE(rows[0].l2_flush);
  EXPECT_EQ(rows[0].problem(), "64x96x32/exp_spread:2|batched|on");
  EXPECT_EQ(rows[1].status, mmlab::Status::skipped);
  EXPECT_FALSE(rows[1].ok());
  for (auto [column, value, valid] : {std::tuple<const char*, const char*, const char*>{"scope", "warm", "kernel, batched, end_to_end"},
                                      {"status", "done", "ok, skipped, failed"},
                                      {"l2_flush", "1", "off, on"},
                                      {"inputs", "gaussian", "uniform, wide_exponent"}}) {
    Row bad = r;
    if (std::string(column) == "scope") bad.scope = value;
    if (std::string(column) == "status") bad.status = value;
    if (std::string(column) == "l2_flush") bad.l2_flush = value;
    if (std::string(column) == "inputs") bad.inputs = value;
    write_results(d / "bad.csv", {bad});
    const std::string e = error_of([&] { load_results({d / "bad.csv"}, false); });
    EXPECT_NE(e.find("bad.csv:2: column '" + std::string(column) + "': '" + value + "' (valid: " + valid),
              std::string::npos)
        << e;
  }
}

// The schema names each column's type and unit once: the numbers are the whole and decimal columns,
// times are in ms, and every column the writers and readers use is listed with a type.
TEST(Results, TheSchemaTypesEveryColumn) {
  for (const std::string& c : mmlab::result_columns()) {
    const mmlab::Column* column = mmlab::result_column(c);
    ASSERT_NE(column, nullptr) << c;
    const bool number = column->type == mmlab::ColumnType::whole || column->type == mmlab::ColumnType::number;
    EXPECT_EQ(mmlab::numeric_column(c), number) << c;
    if (c.size() > 3 && c.compare(c.size() - 3, 3, "_ms") == 0) {
      EXPECT_STREQ(column->unit, "ms") << c;
    }
  }
  for (const char* choice : {"scope", "status", "inputs", "l2_flush", "timer", "precision"})
    EXPECT_EQ(mmlab::result_column(choice)->type, mmlab::ColumnType::choice) << choice;
  // Issue #60: the schema's version and the verification are numbers (a program read them as text).
  for (const char* whole : {"schema", "verified"})
    EXPECT_EQ(mmlab::result_column(whole)->type, mmlab::ColumnType::whole) << whole;
  EXPECT_EQ(mmlab::result_column("no_such_column"), nullptr);
}

// --metric: the GPU's time (default), the host's time to enqueue the work, or their sum, per trial.
// Here the other configuration is 10% faster on the GPU and spends 0.5 ms more on the host than the
// baseline's 0.1 ms: faster on the GPU, slower on the host and in sum.
TEST(Compare, TheMetricChoosesGpuHostOrBothAndSaysWhich) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 12)},
                           {"flagship", "default", "", 512, 512, 512, "kernel", around(0.9, 12)}};
  rows[0].host = around(0.1, 12), rows[1].host = around(0.6, 12);
  for (Row& r : rows) r.order = "interleaved", r.interleave_group = "run-0";
  write_results(d / "m.csv", rows);
  const auto loaded = load_results({d / "m.csv"}, true);
  CompareOptions o;
  o.baseline = "cublas";
  Table t = compare(loaded, o);
  EXPECT_EQ(t.title, "compare against cublas (GPU time)");
  EXPECT_EQ(t.rows[0][7], "faster");
  EXPECT_NEAR(std::stod(t.rows[0][5]), 1 / 0.9, 0.01);
  EXPECT_NE(t.note.find("speed-up = baseline GPU time / its own"), std::string::npos) << t.note;
  o.metric = "host";
  t = compare(loaded, o);
  EXPECT_EQ(t.title, "compare against cublas (host time)");
  EXPECT_EQ(t.rows[0][7], "slower");
  EXPECT_NEAR(std::stod(t.rows[0][5]), 0.1 / 0.6, 0.01);
  o.metric = "sum";
  t = compare(loaded, o);
  EXPECT_EQ(t.title, "compare against cublas (GPU + host time)");
  EXPECT_NEAR(std::stod(t.rows[0][5]), 1.1 / 1.5, 0.01);
  EXPECT_EQ(t.rows[0][7], "slower");
  // Rows without the host's time per trial (schema 6 and older, host algorithms) say so.
  write_results(d / "old.csv", rows, true, 6);
  const std::string e = error_of([&] { compare(load_results({d / "old.csv"}, true), o); });
  EXPECT_NE(e.find("has no host time per trial (recorded from schema 7"), std::string::npos) << e;
  // Rows timed with events on an idle stream carry the host inside: the note warns.
  o.metric = "gpu";
  t = compare(load_results({d / "old.csv"}, true), o);
  EXPECT_NE(t.note.find("Warning: 2 rows were timed with events on an idle stream"), std::string::npos) << t.note;
  t = compare(loaded, o);
  EXPECT_EQ(t.note.find("events on an idle stream"), std::string::npos) << t.note;
}

TEST(Results, ReadsSchemaVersion1) {
  TempDir d;
  Row r{"tiled", "default", "tile=32", 64, 64, 64, "kernel", around(1.0)};
  r.l2_flush = "on";
  Row skipped{"naive", "default", "", 64, 64, 64, "kernel", {}, "skipped"};
  write_results(d / "v1.csv", {r, skipped}, true, 1);
  const auto rows = load_results({d / "v1.csv"}, true);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].get("schema"), "1");
  EXPECT_EQ(rows[0].get("l2_flush"), "on");
  EXPECT_EQ(rows[0].get("resolved"), "tile=32");
  EXPECT_EQ(rows[1].get("verified"), "");
  EXPECT_EQ(rows[0].samples.size(), 10u);
  std::ofstream(d / "foreign.csv") << "a,b,c\n1,2,3\n";
  EXPECT_NE(error_of([&] { load_results({d / "foreign.csv"}, false); }).find("not an mmlab results file"),
            std::string::npos);
}

TEST(Readme, ReportNamesDoNotDoubleWords) {
  EXPECT_EQ(report_name("sgemm-methods/sgemm-methods.csv"), "sgemm-methods");
  EXPECT_EQ(report_name("homework-blockshapes/blockshapes.csv"), "homework-blockshapes");
  EXPECT_EQ(report_name("oneil2013/table1.csv"), "oneil2013-table1");
  EXPECT_EQ(report_name("flagship/history/step1-tuning.csv"), "flagship-history-step1-tuning");
  EXPECT_EQ(report_name("quick.csv"), "quick");
}

// Every paper table built from one synthetic data set, compared with its golden rendering.
std::vector<Row> paper_fixture() {
  std::vector<Row> r;
  auto ms = [](long m, long n, long k, double tflops) { return 2.0 * m * n * k / (tflops * 1e9); };
  for (const std::string scope : {"end_to_end", "batched"}) {
    const double base = scope == "batched" ? 0.0016 : 0.016;
    r.push_back({"cannon", "single_block", "", 8, 8, 8, scope, around(base), "ok", "8x8x1"});
    r.push_back({"dns", "block3d", "", 8, 8, 8, scope, around(base * 1.1), "ok", "8x8x8"});
    for (const std::string v : {"planes", "half_planes", "quarter_planes"})
      r.push_back({"dns", v, "tile=8", 8, 8, 8, scope, around(base * 1.05), "ok", "8x8x1"});
    r.push_back({"cannon", "tiled_atomic", "tile=8", 16, 16, 16, scope, around(base * 1.2), "ok", "8x8x1"});
    r.push_back(
        {"dns", "tiled_atomic", "tile=8;depth=8", 16, 16, 16, scope, around(base * 1.3), "ok", "8x8x8"});
    r.push_back({"dns", "planes", "tile=8", 16, 16, 16, scope, around(base * 1.4), "ok", "8x1x1"});
  }
  const long table3[] = {256,  273,  512,  627,  768,  907,  1023, 1024, 1025, 1152,
                         1280, 1408, 1536, 1664, 1792, 1920, 2047, 2048, 2049, 4096};
  for (long n : table3) {
    r.push_back({"cublas", "default", "", n, n, n, "kernel", around(ms(n, n, n, 50)), "ok", ""});
    r.push_back({"eigen", "default", "threads=16", n, n, n, "kernel", around(ms(n, n, n, 0.2)), "ok", ""});
    for (const std::string b : {"8x8", "16x16", "32x32"})
      r.push_back({"tiled_ilp", "default", "tile=128x64;block=" + b, n, n, n, "kernel",
                   around(ms(n, n, n,
                             b == "16x16"   ? 26
                             : b == "32x32" ? 23
                                            : 4)),
                   "ok", b + "x1"});
    r.push_back(
        {"naive", "default", "block=16x16", n, n, n, "kernel", around(ms(n, n, n, 5.4)), "ok", "16x16x1"});
    r.push_back(
        {"tiled", "default", "tile=32", n, n, n, "kernel", around(ms(n, n, n, 8.7)), "ok", "32x32x1"});
    r.push_back({"outer_product", "default", "tile=32;vector=8", n, n, n, "kernel", around(ms(n, n, n, 20)),
                 "ok", "256x1x1"});
    r.push_back({"outer_product", "prefetch", "tile=32;vector=8", n, n, n, "kernel", around(ms(n, n, n, 22)),
                 "ok", "256x1x1"});
  }
  r.push_back({"tiled", "default", "tile=32", 320, 640, 320, "batched", around(ms(320, 640, 320, 7.0)), "ok",
               "32x32x1"});
  r.push_back({"cublas", "default", "", 640, 320, 480, "batched", around(ms(640, 320, 480, 20.0)), "ok", ""});
  for (const std::string b : {"16x16", "32x8", "64x4"}) {
    r.push_back({"naive", "default", "block=" + b, 10000, 10000, 10000, "kernel",
                 around(ms(10000, 10000, 10000, 5)), "ok", b + "x1"});
    r.push_back({"warptile_1d", "default", "block=" + b, 10000, 10000, 10000, "kernel",
                 around(ms(10000, 10000, 10000, b == "64x4" ? 21 : 10)), "ok", b + "x1"});
    Row e{"warptile_1d", "default", "block=" + b, 1041, 1247, 139, "kernel", around(0.1), "ok", b + "x1"};
    e.max_abs_err = 1.0e-5;
    e.mse = 6.9e-13;
    r.push_back(e);
    e.m = 535, e.n = 792, e.k = 414, e.max_abs_err = 2.4e-5, e.mse = 6.1e-12;
    r.push_back(e);
    for (Row* x : {&r[r.size() - 1], &r[r.size() - 2]}) {
      Row nv = *x;
      nv.algorithm = "naive";
      r.push_back(nv);
    }
  }
  r.push_back({"cublas", "default", "", 10000, 10000, 10000, "kernel", around(ms(10000, 10000, 10000, 49)),
               "ok", ""});
  return r;
}

TEST(PaperTables, LayoutsMatchTheGoldenFiles) {
  TempDir d;
  write_results(d / "all.csv", paper_fixture());
  const auto rows = load_results({d / "all.csv"}, false);
  const bool update = std::getenv("MMLAB_UPDATE_GOLDEN") != nullptr;
  for (const PaperTable& p : paper_tables()) {
    std::string text;
    for (const Table& t : build_paper_table(p.name, rows)) text += render(t, Format::markdown) + "\n";
    const std::string golden = std::string(MMLAB_SOURCE_DIR) + "/tests/analysis/golden/" + p.name + ".md";
    if (update) std::ofstream(golden) << text;
    EXPECT_EQ(text, slurp(golden)) << p.name << " differs from " << golden
                                   << " (rerun with MMLAB_UPDATE_GOLDEN=1 after checking the change)";
  }
  EXPECT_NE(render(build_paper_table("oneil2013-table1", rows)[0], Format::latex).find("\\begin{tabular}"),
            std::string::npos);
  EXPECT_NE(render(build_paper_table("gupta2022-table1", rows)[0], Format::csv).find("N,Peak GF (T4)"),
            std::string::npos);
  // Each column named once for programs: the paper's and mmlab's Min, Max, Avg, Std told apart.
  const std::string csv = render(build_paper_table("oneil2013-table1", rows)[0], Format::csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "Algorithm,Trials (C2070),Min (C2070),Max (C2070),Avg (C2070),Std (C2070),Trials (mmlab),Min (mmlab),"
            "Max (mmlab),Avg (mmlab),Std (mmlab),Per launch (graph)");
}

// Several tables for a program are one document: a JSON array, or one CSV with a `table` column; a
// number is the shortest text that reads back as it (277.7, not 277.69999999999999).
TEST(Report, SeveralTablesAreOneDocument) {
  Table a, b;
  a.title = "first", a.fields = {"x", "y"}, a.records = {{Value(277.7), Value("p")}};
  b.title = "second", b.header = {"y", "z", "z"}, b.rows = {{"q", "1", "2"}};
  const std::string json = render_all({a, b}, Format::json);
  EXPECT_EQ(json.front(), '[');
  EXPECT_EQ(json.substr(json.size() - 2), "]\n");
  EXPECT_NE(json.find("277.7,"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"title\"", json.find("\"title\"") + 1) != std::string::npos, true);
  const std::string csv = render_all({a, b}, Format::csv);
  EXPECT_EQ(csv, "table,x,y,z 1,z 2\nfirst,277.7,p,,\nsecond,,q,1,2\n");
  EXPECT_EQ(render_all({a}, Format::csv), render(a, Format::csv));
}

TEST(PaperTables, AbsentDataIsAClearError) {
  TempDir d;
  write_results(d / "few.csv", {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)}});
  const auto rows = load_results({d / "few.csv"}, false);
  EXPECT_NE(error_of([&] { build_paper_table("oneil2013-table1", rows); }).find("no ok row for Cannon"),
            std::string::npos);
  EXPECT_NE(error_of([&] { find_paper_table("nope"); }).find("valid: oneil2013-table1"), std::string::npos);
}

TEST(Plots, EveryKindWritesSvgAndPng) {
  TempDir d;
  write_results(d / "all.csv", paper_fixture());
  const auto rows = load_results({d / "all.csv"}, false);
  for (auto [kind, name] : {std::pair{PlotKind::size, "size"},
                            {PlotKind::blocks, "blocks"},
                            {PlotKind::roofline, "roofline"},
                            {PlotKind::ratio, "ratio"}})
    for (const char* ext : {".svg", ".png"}) {
      const std::string out = d / (std::string(name) + ext);
      plot(kind, rows, out, PlotOptions{});
      ASSERT_TRUE(std::filesystem::exists(out)) << out;
      EXPECT_GT(std::filesystem::file_size(out), 1000u) << out;
    }
  EXPECT_THROW(plot(PlotKind::size, rows, d / "x.pdf", PlotOptions{}), AnalysisError);
  PlotOptions nobody;
  nobody.baseline = "nope";  // a ratio needs the baseline's rows
  EXPECT_THROW(plot(PlotKind::ratio, rows, d / "r.svg", nobody), AnalysisError);
  EXPECT_FALSE(std::filesystem::exists(d / "x.pdf"));
}

// The frontier: a panel per problem and inputs, a point per algorithm and variant at its fastest
// configuration; rows of other inputs stay apart from the uniform ones (shape "64/ill_conditioned").
TEST(Plots, FrontierDrawsAPanelPerProblemAndInputs) {
  TempDir d;
  Row fast{"cublas", "tf32", "", 64, 64, 64, "kernel", around(0.3)};
  fast.max_sumabs_err = 3e-5;
  Row exact{"tf32x3", "split3", "", 64, 64, 64, "kernel", around(0.6)};
  exact.max_sumabs_err = 4e-8;
  Row cancelling = exact;
  cancelling.inputs = "ill_conditioned";
  write_results(d / "f.csv",
                {{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)}, fast, exact, cancelling});
  const auto rows = load_results({d / "f.csv"}, false);
  EXPECT_EQ(rows[3].shape(), "64/ill_conditioned");
  EXPECT_EQ(rows[3].dims(), "64");
  const std::string out = d / "frontier.svg";
  plot(PlotKind::frontier, rows, out, PlotOptions{});
  const std::string svg = slurp(out);
  EXPECT_NE(svg.find("64/ill"), std::string::npos);
  EXPECT_NE(svg.find("tf32x3 split3"), std::string::npos);
  PlotOptions one;
  one.shapes = {"64/ill_conditioned"};
  plot(PlotKind::frontier, rows, d / "one.png", one);
  EXPECT_TRUE(std::filesystem::exists(d / "one.png"));
  PlotOptions none;
  none.shapes = {"128"};
  EXPECT_THROW(plot(PlotKind::frontier, rows, d / "none.svg", none), AnalysisError);
  // A folder that cannot take the plot is said as such (it was gnuplot's "exit 256").
  std::ofstream(d / "a-file") << "x";
  const std::string e = error_of([&] { plot(PlotKind::frontier, rows, d / "a-file/p.svg", PlotOptions{}); });
  EXPECT_NE(e.find("cannot be written"), std::string::npos) << e;
  // A row whose inputs are not a known kind is a bad file, named with its line.
  std::string text = slurp(d / "f.csv");
  text.replace(text.find("ill_conditioned"), 15, "gaussian_random");
  { std::ofstream(d / "bad.csv") << text; }
  EXPECT_NE(error_of([&] { load_results({d / "bad.csv"}, false); }).find("column 'inputs'"),
            std::string::npos);
}

// The frontier table: each algorithm and variant's fastest row per problem, its speed and error as
// ratios to cuBLAS's FP32 row of the same problem (never the TF32 one); and the advice read from it.
TEST(Frontier, RatiosToTheFp32BaselineAndWhichToPick) {
  TempDir d;
  Row sgemm{"cublas", "default", "", 64, 64, 64, "kernel", around(1.0)};
  sgemm.max_sumabs_err = 4e-7;
  Row tf32{"cublas", "tf32", "", 64, 64, 64, "kernel", around(0.125)};
  tf32.max_sumabs_err = 4e-5;
  Row fast{"tf32x3", "wgmma3", "stages=2", 64, 64, 64, "kernel", around(0.5)};
  fast.max_sumabs_err = 1e-7;
  Row slow = fast;
  slow.params = "stages=3", slow.samples = around(0.6);
  Row cancelling_base = sgemm, cancelling = fast;
  cancelling_base.inputs = cancelling.inputs = "ill_conditioned";
  cancelling.max_sumabs_err = 1.2e-6;  // 3x the baseline's: not FP32-accurate on these inputs
  write_results(d / "f.csv", {sgemm, tf32, fast, slow, cancelling_base, cancelling});
  const Table t = frontier(load_results({d / "f.csv"}, false));
  ASSERT_EQ(t.rows.size(), 5u);  // uniform: tf32, wgmma3 (fastest of two), cublas; cancelling: two
  EXPECT_EQ(t.rows[0][2], "cublas tf32");
  EXPECT_EQ(t.rows[0][5], "8.00");
  EXPECT_EQ(t.rows[0][7], "100.00");
  EXPECT_EQ(t.rows[1][3], "stages=2");
  EXPECT_EQ(t.rows[1][5], "2.00");
  EXPECT_EQ(t.rows[1][7], "0.25");
  EXPECT_EQ(t.rows[3][1], "ill_conditioned");
  const std::string advice = frontier_advice(t, "64", "cublas");
  // wgmma3 is 3x cuBLAS's error on the cancelling inputs: nothing beats cuBLAS at FP32 accuracy.
  EXPECT_NE(advice.find("nothing beats cublas"), std::string::npos) << advice;
  const Table summary = frontier_summary(t, "64", "cublas");  // a row per variant, ranges over the inputs
  ASSERT_EQ(summary.rows.size(), 3u);
  EXPECT_EQ(summary.rows[0][0], "cublas tf32");
  EXPECT_EQ(summary.rows[1][0], "tf32x3 wgmma3");
  EXPECT_EQ(summary.rows[1][2], "2.00");          // 2x on both kinds
  EXPECT_EQ(summary.rows[1][3], "0.25 to 3.00");  // its error ratio on each kind
  EXPECT_EQ(frontier(load_results({d / "f.csv"}, false), {"64"}).rows.size(),
            5u);  // 64: every kind of inputs
  EXPECT_EQ(frontier(load_results({d / "f.csv"}, false), {"64/ill_conditioned"}).rows.size(), 2u);
  write_results(d / "u.csv", {sgemm, tf32, fast, slow});
  const std::string pick = frontier_advice(frontier(load_results({d / "u.csv"}, false)), "64", "cublas");
  EXPECT_NE(pick.find("`tf32x3 wgmma3`, at least 2.00x"), std::string::npos) << pick;
  EXPECT_NE(pick.find("`cublas tf32`, at least 8.00x"), std::string::npos) << pick;
}

int cli(const std::string& args, const std::string& prefix = "") {
  const int status =
      std::system((prefix + std::string(MMLAB_ANALYZE) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Cli, ExitCodesAndNothingPartialWritten) {
  TempDir d;
  write_results(d / "r.csv", paper_fixture());
  EXPECT_EQ(cli("summary " + (d / "r.csv") + " --output " + (d / "s.md")), 0);
  EXPECT_TRUE(std::filesystem::exists(d / "s.md"));
  EXPECT_EQ(cli("compare " + (d / "r.csv") + " --baseline cublas --size 4096 --output " + (d / "c.md")), 0);
  EXPECT_EQ(cli("table gupta2022-table3 " + (d / "r.csv") + " --format latex --output " + (d / "t.tex")), 0);
  for (const std::string& bad :
       std::vector<std::string>{"summary " + (d / "nope.csv"), "summary " + (d / "r.csv") + " --by nope",
                                "compare " + (d / "r.csv") + " --baseline nope", "compare " + (d / "r.csv"),
                                "table nope " + (d / "r.csv"), std::string("frobnicate"),
                                "plot size " + (d / "r.csv") + " -o " + (d / "x.gif"),
                                "summary " + (d / "r.csv") + " --format docx",
                                "compare " + (d / "r.csv") + " --baseline cublas --metric wall",
                                "compare " + (d / "r.csv") + " --baseline cublas --size 12x",
                                "compare " + (d / "r.csv") + " --baseline cublas --bad-samples maybe",
                                "compare " + (d / "r.csv") + " --baseline cublas --metric host --cycles"}) {
    EXPECT_EQ(cli(bad + " --output " + (d / "bad.out")), 2) << bad;
    EXPECT_FALSE(std::filesystem::exists(d / "bad.out")) << bad;
  }
}

// The model command: each committed four-GPU row's prediction recomputed from its own rates is
// what its run recorded (the model is written once, core/decompositions); the prediction names a
// winner per engine, size and GPU count; bad machine parameters are exit 2 with nothing written.
TEST(Model, ValidatesMeasuredRowsAndPredictsWinners) {
  const Table v = model_validation(load_results({std::string(MMLAB_SOURCE_DIR) + "/data/distributed/x4/x4.csv"}, false));
  ASSERT_GE(v.rows.size(), 18u);
  for (const auto& r : v.rows) {
    const double predicted = std::stod(r[7]), recorded = std::stod(r[8]);
    EXPECT_NEAR(predicted / recorded, 1.0, 1e-3) << r[0] << " " << r[1] << " " << r[4];
  }
  EXPECT_NE(v.note.find(" rows within 15% of the model"), std::string::npos) << v.note;

  Machine m;
  m.engines = parse_engines("cublas=50000,fast=400000");
  const Table t = model_prediction({4096, 30000}, {4, 16, 64}, m);
  ASSERT_EQ(t.rows.size(), 2u * 2u * 3u);
  for (const auto& r : t.rows) EXPECT_TRUE(r[6] == "dist_cannon" || r[6] == "dist_summa" || r[6] == "dist_dns") << r[6];
  // A faster engine exposes the transfers: its time is no better than compute-bound scaling.
  const double slow = std::stod(t.rows[0][3]), fast = std::stod(t.rows[6][3]);  // Cannon 2x2 at 4096
  EXPECT_GT(fast, slow * 50000 / 400000);
  // Too little memory: nothing fits.
  m.memory_bytes = 1e6;
  EXPECT_EQ(model_prediction({30000}, {4}, m).rows.at(0)[6], "none fits");
  EXPECT_NE(error_of([] { parse_engines("cublas"); }), "no error");
  EXPECT_NE(error_of([] { parse_engines("cublas=-1"); }), "no error");

  TempDir d;
  EXPECT_EQ(cli("model --sizes 4096 --gpus 4,8 --plot " + (d / "w.svg") + " --output " + (d / "m.md")), 0);
  EXPECT_TRUE(std::filesystem::exists(d / "w.svg"));
  for (const std::string& bad : {std::string("model --engine-gflops cublas=0"), std::string("model --gpus 0"),
                                 std::string("model --domain 0"), std::string("model --sizes x")}) {
    EXPECT_EQ(cli(bad + " --output " + (d / "bad.md")), 2) << bad;
    EXPECT_FALSE(std::filesystem::exists(d / "bad.md")) << bad;
  }
}

// The fitted model: rows made from the model itself with a known slower local rate, narrower links
// and a fixed cost per trial; fitted on three sizes it recovers them and predicts a fourth it did
// not see within 1%; with the factors left at 1 it does not.
TEST(Model, FittedOnSomeRowsJudgedOnOthers) {
  TempDir d;
  std::vector<Row> fit_rows, judge_rows;
  for (const long n : {1024L, 2048L, 3072L, 6000L}) {
    for (const std::string& transport : {std::string("nccl"), std::string("copy_engine")}) {
      const Decomposed shape{Decomposition::summa, {n, n, n}, Grid{2, 2, 1}, 512};
      double ms = 0;
      for (int r = 0; r < 4; ++r)  // local rate 0.8 x the probe's, links 0.5 x, + 0.03 ms
        ms = std::max(ms, shape.model(r, 0).predict_ms(0.8 * 20000, 0.5 * 100, 0, 0.01));
      ms += 0.03;
      Row row{"dist_summa", "default", "grid=2x2;engine=cublas;transport=" + transport + ";panel=512", n, n, n,
              "kernel", around(ms, 3)};
      row.run = "r" + std::to_string(n) + transport;
      row.fields = {{"grid", "2x2"},           {"gpus", "4"},         {"ranks", "4"},
                    {"engine", "cublas:default"}, {"local_gflops", "20000"}, {"link_gbs", "100"},
                    {"latency_ms", "0.01"}};
      (n == 6000 ? judge_rows : fit_rows).push_back(row);
    }
  }
  write_results(d / "fit.csv", fit_rows);
  write_results(d / "judge.csv", judge_rows);
  const Calibration c = fit_model(load_results({d / "fit.csv"}, false));
  EXPECT_EQ(c.rows, 6u);
  EXPECT_LT(c.rms_log, 0.01);
  const Table t = model_judged(load_results({d / "judge.csv"}, false), c);
  ASSERT_EQ(t.rows.size(), 2u);
  for (const auto& r : t.rows) EXPECT_NEAR(std::stod(r[8]), 1.0, 0.01) << r[4];
  for (const auto& r : t.rows) EXPECT_EQ(r[2], "panel 512");
  EXPECT_NE(t.note.find("2 of 2 rows within 10%"), std::string::npos) << t.note;
  const Table unfitted = model_judged(load_results({d / "judge.csv"}, false), Calibration{});
  for (const auto& r : unfitted.rows) EXPECT_GT(std::stod(r[8]), 1.1) << r[4];
  // The command: fitted on the files of --fit (only --size's shapes), judged on the rest.
  EXPECT_EQ(cli("model --fit " + (d / "fit.csv") + "," + (d / "judge.csv") + " --size 1024,2048,3072 " +
                (d / "fit.csv") + " " + (d / "judge.csv") + " --sizes 4096 --gpus 4 --output " + (d / "m.md")),
            0);
  EXPECT_NE(slurp(d / "m.md").find("2 of 2 rows within 10% of the fitted model"), std::string::npos);
}

TEST(Cli, ANaNSampleIsAnErrorNotAHang) {
  TempDir d;
  write_results(d / "r.csv", paper_fixture());
  std::string text = slurp(d / "r.samples.csv");
  text.replace(text.rfind(',') + 1, std::string::npos, "nan\n");
  { std::ofstream(d / "r.samples.csv") << text; }
  // `timeout`: before the fix this never returned.
  EXPECT_EQ(cli("compare " + (d / "r.csv") + " --baseline cublas --size 4096", "timeout 60 "), 2);
}

// A file without a final newline under valgrind: the reader (once fast-cpp-csv-parser, which looked one
// byte past the data there) reads no byte it did not get.
// A file whose last line has no line end is refused (exit 2: its last row may be cut short), cleanly.
TEST(Cli, AFileWithoutAFinalNewlineIsRefusedCleanlyUnderValgrind) {
  if (std::system("command -v valgrind >/dev/null 2>&1") != 0) GTEST_SKIP() << "valgrind is not installed";
  TempDir d;
  write_results(d / "r.csv", paper_fixture());
  for (const std::string& f : {d / "r.csv", d / "r.samples.csv"}) {
    const std::string text = slurp(f);
    std::ofstream(f) << text.substr(0, text.size() - 1);
  }
  EXPECT_EQ(cli("summary " + (d / "r.csv"), "valgrind -q --error-exitcode=9 "), 2);
}

TEST(Cli, TablesRegeneratesEveryTableThatHasData) {
  TempDir d;
  std::filesystem::create_directories(d.path / "data" / "oneil2013");
  write_results(d / "data/oneil2013/table1.csv", paper_fixture());
  EXPECT_EQ(cli("tables --data " + (d / "data") + " --out-dir " + (d / "out")), 0);
  EXPECT_TRUE(std::filesystem::exists(d / "out/oneil2013-table1.md"));
  EXPECT_FALSE(std::filesystem::exists(d / "out/gupta2022-table1.md"));  // no data for it
  EXPECT_EQ(cli("tables --data " + (d / "empty")), 2);
}

}  // namespace
}  // namespace mmlab::analysis

namespace mmlab::analysis {
namespace {

using namespace test;

// The output of a command (stdout and stderr) and its exit status.
std::pair<int, std::string> cli_output(const std::string& args) {
  const std::string file = std::filesystem::temp_directory_path() / ("mmlab-cli-" + std::to_string(getpid()));
  const int status = std::system((std::string(MMLAB_ANALYZE) + " " + args + " >" + file + " 2>&1").c_str());
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::filesystem::remove(file);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

// Issue #47, item 3: a table names what varies between its rows: the L2 setting where it does, and
// each row's clock as its timer measured it (a host algorithm against a host plugin: host time).
TEST(Compare, TablesSayTheirL2SettingAndEachRowsClock) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 12)},
                           {"flagship", "default", "", 512, 512, 512, "kernel", around(0.9, 12)},
                           {"cublas", "default", "", 512, 512, 512, "kernel", around(1.1, 12)},
                           {"flagship", "default", "", 512, 512, 512, "kernel", around(0.95, 12)}};
  rows[2].l2_flush = rows[3].l2_flush = "on";
  write_results(d / "l2.csv", rows);
  CompareOptions o;
  o.baseline = "cublas";
  Table t = compare(load_results({d / "l2.csv"}, true), o);
  ASSERT_EQ(t.header.back(), "L2 flush");
  EXPECT_EQ(t.rows[0].back(), "off");
  EXPECT_EQ(t.rows[1].back(), "on");
  EXPECT_EQ(t.title, "compare against cublas (GPU time)");
  std::vector<Row> host = {{"eigen", "default", "", 64, 64, 64, "kernel", around(1.0, 12)},
                           {"my_host", "default", "", 64, 64, 64, "kernel", around(2.0, 12)}};
  for (Row& r : host) r.timer = "host";
  write_results(d / "host.csv", host);
  o.baseline = "eigen";
  t = compare(load_results({d / "host.csv"}, true), o);
  EXPECT_EQ(t.title, "compare against eigen (host time)");
  EXPECT_EQ(t.rows[0][std::size_t(std::find(t.header.begin(), t.header.end(), "clock") - t.header.begin())],
            "host time");
}

// Item 6: the numbers as numbers: JSON records, and CSV / TSV with the interval's ends, the verdict and
// the trials in columns of their own at full precision, for compare, summary and scaling.
TEST(Cli, NumbersAProgramCanRead) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 12)},
                           {"flagship", "default", "", 512, 512, 512, "kernel", around(0.9, 12)}};
  for (Row& r : rows) r.order = "interleaved", r.interleave_group = "run-0";
  write_results(d / "r.csv", rows);
  auto [rc, json] = cli_output("compare " + (d / "r.csv") + " --baseline cublas --format json");
  ASSERT_EQ(rc, 0) << json;
  EXPECT_NE(json.find("\"records\": ["), std::string::npos) << json;
  EXPECT_NE(json.find("\"verdict\": \"faster\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"m\": 512"), std::string::npos) << json;
  EXPECT_NE(json.find("\"trials_to_decide\": null"), std::string::npos) << json;
  const auto speedup = json.find("\"speedup\": ");
  ASSERT_NE(speedup, std::string::npos);
  EXPECT_NEAR(std::stod(json.substr(speedup + 11)), 1 / 0.9, 0.01);  // a number, not a quoted text
  auto [rc2, csv] = cli_output("compare " + (d / "r.csv") + " --baseline cublas --format csv");
  ASSERT_EQ(rc2, 0);
  const std::string header = csv.substr(0, csv.find('\n'));
  for (const char* column : {"ci_lo", "ci_hi", "verdict", "trials_to_decide", "p_holm", "speedup"})
    EXPECT_NE(header.find(column), std::string::npos) << column << " in " << header;
  EXPECT_EQ(csv.find(" to "), std::string::npos) << "an interval's ends are two columns";
  auto [rc3, tsv] = cli_output("summary " + (d / "r.csv") + " --format tsv");
  ASSERT_EQ(rc3, 0);
  EXPECT_NE(tsv.find("median_ms\t"), std::string::npos) << tsv;
  // The fastest trial in full: the shortest text that reads back as the same double.
  EXPECT_NE(tsv.find("\t0.99\t"), std::string::npos) << tsv;
}

// Items 4 and 5: across runs, the interval of the mean and the prediction for one more run, each named;
// the same run read twice is named as such (a file named twice, or a copy).
TEST(Compare, AcrossRunsNamesItsIntervalsAndARunReadTwice) {
  TempDir d;
  for (int run = 0; run < 3; ++run) {
    std::vector<Row> rows = {{"cublas", "default", "", 512, 512, 512, "kernel", around(1.0, 12)},
                             {"flagship", "default", "", 512, 512, 512, "kernel", around(0.9 + 0.01 * run, 12)}};
    for (Row& r : rows) r.run = "run" + std::to_string(run);
    write_results(d / ("r" + std::to_string(run) + ".csv"), rows);
  }
  CompareOptions o;
  o.baseline = "cublas", o.across_runs = true;
  const Table t = compare_across_runs(load_results({d / "r0.csv", d / "r1.csv", d / "r2.csv"}, true), o);
  const auto column = [&](const std::string& name) {
    return std::size_t(std::find(t.header.begin(), t.header.end(), name) - t.header.begin());
  };
  ASSERT_LT(column("CI 95% of the mean"), t.header.size());
  ASSERT_LT(column("prediction 95% (one more run)"), t.header.size());
  const std::string mean = t.rows[0][column("CI 95% of the mean")], next = t.rows[0][column("prediction 95% (one more run)")];
  EXPECT_LT(std::stod(next), std::stod(mean)) << "the prediction is the wider: " << next << " against " << mean;
  EXPECT_NE(t.note.find("prediction interval for one more run"), std::string::npos);
  auto [rc, text] = cli_output("compare " + (d / "r0.csv") + " " + (d / "r0.csv") + " --baseline cublas --across-runs");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(text.find("is read twice"), std::string::npos) << text;
  EXPECT_NE(text.find("the file is named twice"), std::string::npos) << text;
  std::filesystem::copy_file(d / "r0.csv", d / "copy.csv");
  std::filesystem::copy_file(d / "r0.samples.csv", d / "copy.samples.csv");
  std::tie(rc, text) = cli_output("compare " + (d / "r0.csv") + " " + (d / "copy.csv") + " --baseline cublas --across-runs");
  EXPECT_NE(text.find("the two files hold the same run (a copy)"), std::string::npos) << text;
}

// Item 7: what a new user trips on: a CPU run's compare says what it can compare instead; plots named
// without a folder go under results/; each command's --help lists its own options, the level as 0.95.
TEST(Cli, WhatANewUserTripsOn) {
  TempDir d;
  std::vector<Row> rows = {{"cublas", "default", "", 256, 256, 256, "kernel", {}},
                           {"eigen", "default", "", 256, 256, 256, "kernel", around(1.0, 12)}};
  rows[0].status = "skipped";
  write_results(d / "cpu.csv", rows);
  auto [rc, text] = cli_output("compare " + (d / "cpu.csv") + " --baseline cublas");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(text.find("The files' ok rows: eigen (1): one algorithm, nothing to compare it with"), std::string::npos)
      << text;
  auto [hrc, help] = cli_output("compare --help");
  EXPECT_EQ(hrc, 0);
  EXPECT_NE(help.find("--level arg (=0.95)"), std::string::npos) << help;
  EXPECT_EQ(help.find("--engine-gflops"), std::string::npos) << "model's options in compare's help";
  EXPECT_EQ(help.find("--by "), std::string::npos) << "summary's options in compare's help";
  write_results(d / "sizes.csv", paper_fixture());
  const std::string cwd = d.path.string();
  const std::string plot = "cd " + cwd + " && " + std::string(MMLAB_ANALYZE) + " plot size " + (d / "sizes.csv") +
                           " -o bare.svg >/dev/null 2>&1";
  if (std::system("command -v gnuplot >/dev/null") == 0) {
    EXPECT_EQ(std::system(plot.c_str()), 0);
    EXPECT_TRUE(std::filesystem::exists(d / "results/bare.svg"));
    EXPECT_FALSE(std::filesystem::exists(d / "bare.svg"));
  }
}

}  // namespace
}  // namespace mmlab::analysis
