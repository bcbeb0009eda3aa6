// The lab as a library (harness/lab.hpp): a Plan made from keywords is the one the command line
// makes; a run hands its rows to a sink with no file unless asked; a Lab shared between threads keeps
// each command's catalog whole while algorithms are added. Host algorithms only: no GPU needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "core/lab_states.hpp"
#include "core/results.hpp"
#include "core/schema.hpp"
#include "distributed/registry.hpp"
#include "harness/lab.hpp"
#include "tests/lab.hpp"

namespace mmlab {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> keys_of(const RunPlan& p) {
  std::vector<std::string> out;
  for (const Configuration& c : p.configurations) out.push_back(c.key());
  return out;
}

class Rows : public RowSink {
 public:
  void samples(const std::vector<Row>& lines) override { samples_ += lines.size(); }
  void row(const Row& row) override {
    EXPECT_EQ(row.size(), result_columns().size());
    rows_.push_back(csv_row(row));
    cells_.push_back(row);
  }
  std::vector<Row> cells_;
  std::vector<CsvRow> rows_;
  std::size_t samples_ = 0;
};

std::string cell(const CsvRow& row, const char* column) {
  for (std::size_t i = 0; i < result_columns().size(); ++i)
    if (result_columns()[i] == column) return row[i];
  return "?";
}

TEST(Lab, KeywordsMakeTheCommandLinesPlan) {
  Lab lab(lab_registry);
  const Plan cli = Plan::from_arguments(
      lab, {"--algorithms", "eigen,tiled", "--shape", "17x33x65", "--size", "64", "--eigen.threads", "1,2",
            "--l2-flush", "off,on", "--trials", "3", "--seed", "7"});
  Plan keys(lab);
  keys.set("algorithms", "eigen,tiled");
  keys.set("shape", "17x33x65");
  keys.set("size", "64");
  keys.set("eigen.threads", "1,2");
  keys.set("l2_flush", "off,on");  // '-' and '_' alike
  keys.set("trials", "3");
  keys.set("seed", "7");
  const auto catalog = lab.catalog();
  const RunPlan a = cli.resolve(*catalog), b = keys.resolve(*catalog);
  EXPECT_EQ(keys_of(a), keys_of(b));
  EXPECT_FALSE(keys_of(a).empty());
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.timing.stop.min_trials, b.timing.stop.min_trials);
  // The command line's plan writes its default output; the keywords' writes none unless asked.
  EXPECT_FALSE(a.output.empty());
  EXPECT_TRUE(b.output.empty() && b.samples_output.empty());
  keys.set("output", "x.csv");
  EXPECT_EQ(keys.resolve(*catalog).output, "x.csv");
}

TEST(Lab, AKeywordIsCheckedWhenSet) {
  Lab lab(lab_registry);
  Plan plan(lab);
  EXPECT_THROW(plan.set("no_such_option", "1"), UsageError);
  EXPECT_THROW(plan.set("trials", "zero"), UsageError);
  EXPECT_THROW(plan.set("eigen.no_such_axis", "1"), UsageError);
  EXPECT_THROW(plan.set("dry_run", "perhaps"), UsageError);
  EXPECT_THROW(plan.set("--trials", "3"), UsageError);
  plan.set("dry_run", "true");
  EXPECT_TRUE(plan.resolve(*lab.catalog()).dry_run);
  plan.set("dry-run", "false");
  EXPECT_FALSE(plan.resolve(*lab.catalog()).dry_run);
  plan.set("trials", "5");
  EXPECT_THROW(plan.set("trials", "zero"), UsageError);
  EXPECT_EQ(plan.resolve(*lab.catalog()).timing.stop.min_trials, 5u);  // a malformed value leaves the plan as it was
  // What joins keys is the sweep's, checked when it is made: nothing to resume without an output, a
  // variant none of the algorithms has.
  plan.set("resume", "true");
  EXPECT_THROW(plan.resolve(*lab.catalog()), UsageError);
  plan.set("resume", "false");
  plan.set("algorithms", "eigen");
  plan.set("variant", "nope");
  try {
    plan.resolve(*lab.catalog());
    FAIL() << "a variant eigen does not have";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("variant"), std::string::npos) << e.what();
  }
}

TEST(Lab, ARunHandsItsRowsToTheSinkAndWritesNoFile) {
  const fs::path dir = fs::temp_directory_path() / ("mmlab-lab-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path before = fs::current_path();
  fs::current_path(dir);  // where the default output (results/) would go
  Lab lab(lab_registry);
  Plan plan(lab);
  plan.set("algorithms", "eigen");
  plan.set("shape", "17x33x65,9x5x3");
  plan.set("trials", "3");
  plan.set("warmup", "0");
  Rows rows;
  const int status = run(plan, &rows);
  fs::current_path(before);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(rows.rows_.size(), 2u);
  EXPECT_EQ(rows.samples_, 6u);
  for (const CsvRow& r : rows.rows_) {
    EXPECT_EQ(cell(r, "status"), "ok");
    EXPECT_EQ(cell(r, "verified"), "1");
    EXPECT_EQ(cell(r, "schema"), kSchemaVersion);
  }
  // Typed cells (issue #82): every whole or decimal column's cell is a number or empty, never text the
  // caller would have to parse; the text columns' are text.
  for (const Row& r : rows.cells_)
    for (std::size_t i = 0; i < r.size(); ++i) {
      const Column& c = kResultColumns[i];
      const bool numeric = c.type == ColumnType::whole || c.type == ColumnType::number;
      if (numeric) {
        EXPECT_NE(r[i].kind, Cell::Kind::text) << c.name << " = " << r[i].text;
      } else {
        EXPECT_NE(r[i].kind, Cell::Kind::number) << c.name;
      }
      if (r[i].kind == Cell::Kind::number) {
        EXPECT_FALSE(r[i].text.empty()) << c.name;
      }
    }
  EXPECT_TRUE(fs::is_empty(dir)) << "a run without an output wrote into " << dir;
  fs::remove_all(dir);
}

// The CPU baseline on `shapes`, `trials` trials each, no warm-up, into `output`.
Plan eigen_plan(Lab& lab, const std::string& shapes, const std::string& trials, const std::string& output) {
  Plan plan(lab);
  plan.set("algorithms", "eigen");
  plan.set("shape", shapes);
  plan.set("trials", trials);
  plan.set("warmup", "0");
  plan.set("output", output);
  return plan;
}

// Runs called in a loop (within one second, one process) into one file: every run its own id, and the
// file reads back (issue #80: six calls once wrote one id, and the reader refused the file from then on).
TEST(Lab, RunsInALoopIntoOneFileHaveTheirOwnIds) {
  const fs::path dir = fs::temp_directory_path() / ("mmlab-lab-ids-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "loop.csv").string();
  Lab lab(lab_registry);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(run(eigen_plan(lab, "9x5x3", "2", out), nullptr), 0) << "run " << i;
  const std::vector<Result> rows = load_results({out}, true);
  ASSERT_EQ(rows.size(), 6u);
  std::set<std::string> ids;
  for (const Result& r : rows) ids.insert(r.run_id);
  EXPECT_EQ(ids.size(), 6u);
  fs::remove_all(dir);
}

// A results file or its samples cut at any byte of their last two lines: the reader refuses the file or
// leaves the cut row out, and never reads a value other than the one written (issue #80: a last field
// cut from 5.39539175e-09 to 5.395 was read as that number).
TEST(Lab, AFileCutAtAnyByteIsRefusedOrReadWithoutTheCutRow) {
  const fs::path dir = fs::temp_directory_path() / ("mmlab-lab-cut-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "whole.csv").string(), samples = (dir / "whole.samples.csv").string();
  Lab lab(lab_registry);
  ASSERT_EQ(run(eigen_plan(lab, "9x5x3,7x7x7,3x4x5", "3", out), nullptr), 0);
  const std::vector<Result> whole = load_results({out}, true);
  ASSERT_EQ(whole.size(), 3u);
  auto text = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  auto same = [&](const Result& r) {  // r is one of the rows written, value for value
    for (const Result& w : whole)
      if (w.run_id == r.run_id)
        return w.median_ms == r.median_ms && w.min_ms == r.min_ms && w.max_ms == r.max_ms &&
               w.samples == r.samples && w.fields == r.fields;
    return false;
  };
  const std::string rows_text = text(out), samples_text = text(samples);
  const fs::path cut_rows = dir / "cut.csv", cut_samples = dir / "cut.samples.csv";
  int refused = 0, read = 0;
  for (bool cut_the_samples : {false, true}) {
    const std::string& body = cut_the_samples ? samples_text : rows_text;
    // From the start of its second-last line to its end, every length.
    const std::size_t from = body.rfind('\n', body.rfind('\n', body.size() - 2) - 1) + 1;
    for (std::size_t n = from; n <= body.size(); ++n) {
      std::ofstream(cut_rows, std::ios::binary) << (cut_the_samples ? rows_text : rows_text.substr(0, n));
      std::ofstream(cut_samples, std::ios::binary) << (cut_the_samples ? samples_text.substr(0, n) : samples_text);
      try {
        const std::vector<Result> got = load_results({cut_rows.string()}, true);
        ++read;
        for (const Result& r : got) EXPECT_TRUE(same(r)) << (cut_the_samples ? "samples" : "rows") << " cut at " << n;
      } catch (const AnalysisError&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  fs::remove_all(dir);
}

TEST(Lab, ACommandKeepsItsCatalogWhileAnotherThreadAddsAlgorithms) {
  Lab lab(lab_registry);
  const auto first = lab.catalog();
  const std::size_t count = first->registry.all().size();
  const std::string plugin = test::example_plugin_path();
  if (plugin.empty()) GTEST_SKIP() << "no example plugin in this build";
  std::thread t([&] { lab.load_plugin(plugin); });
  t.join();
  EXPECT_EQ(first->registry.all().size(), count);  // the snapshot a command holds is unchanged
  EXPECT_GT(lab.catalog()->registry.all().size(), count);
  lab.load_plugin(plugin);  // a file named again loads once
  EXPECT_EQ(lab.catalog()->plugins.size(), 1u);
  EXPECT_EQ(Lab(lab_registry).catalog()->registry.all().size(), count);  // each Lab its own
}

// What an algorithm keeps across a Lab's runs is that Lab's (core/lab_states.hpp), as the flagship's
// measured picks are: a host algorithm that counts, in its resolve hook, the problems it was resolved
// for. Two Labs count apart; one freed frees what its algorithms kept, and the other runs on.
int g_counts_freed = 0;
struct ResolveCount {
  int resolved = 0;
  ~ResolveCount() { ++g_counts_freed; }
};

const Algorithm& counting() {
  static const Algorithm a = [] {
    Algorithm a;
    a.name = "counting";
    a.summary = "C = A B on the host, counting its resolutions in the running lab's states";
    a.backend = Backend::host;
    a.variants = {{"default", "a loop"}};
    a.resolve = [](const Problem&, const Params& q, const DeviceInfo&) {
      ++current_lab_states().get<ResolveCount>(&counting()).resolved;
      return q;
    };
    a.run = [](const RunArgs& r) {
      const Problem& p = r.problem;
      for (long i = 0; i < p.m; ++i)
        for (long j = 0; j < p.n; ++j) {
          double sum = 0;
          for (long l = 0; l < p.k; ++l) sum += double(r.a[i * p.k + l]) * r.b[l * p.n + j];
          r.c[i * p.n + j] = float(sum);
        }
    };
    return a;
  }();
  return a;
}

Registry counting_registry(const std::vector<std::shared_ptr<const Plugin>>&) { return Registry({{&counting()}}); }

int run_counting(Lab& lab) {
  Plan plan(lab);
  plan.set("algorithms", "counting");
  plan.set("shape", "9x5x3");
  plan.set("trials", "2");
  plan.set("warmup", "0");
  Rows rows;
  EXPECT_EQ(run(plan, &rows), 0);
  EXPECT_EQ(rows.rows_.size(), 1u);
  return rows.rows_.empty() ? 0 : 1;
}

TEST(Lab, EachLabKeepsWhatItsAlgorithmsKeepAndFreesItWithItself) {
  auto first = std::make_unique<Lab>(counting_registry);
  Lab second(counting_registry);
  run_counting(*first);
  const int one_run = first->states().get<ResolveCount>(&counting()).resolved;
  EXPECT_GT(one_run, 0);
  EXPECT_EQ(second.states().size(), 0u);  // nothing of the first's
  run_counting(second);
  run_counting(second);
  EXPECT_EQ(second.states().get<ResolveCount>(&counting()).resolved, 2 * one_run);
  EXPECT_EQ(first->states().get<ResolveCount>(&counting()).resolved, one_run);
  // Outside a run the current states are neither lab's.
  EXPECT_NE(&current_lab_states(), &first->states());
  EXPECT_NE(&current_lab_states(), &second.states());
  const int freed = g_counts_freed;
  first.reset();
  EXPECT_EQ(g_counts_freed, freed + 1);  // the first lab's count went with it
  run_counting(second);
  EXPECT_EQ(second.states().get<ResolveCount>(&counting()).resolved, 3 * one_run);
}

}  // namespace
}  // namespace mmlab
