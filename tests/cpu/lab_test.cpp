// The lab as a library (harness/lab.hpp): a Plan made from keywords is the one the command line
// makes; a run hands its rows to a sink with no file unless asked; a Lab shared between threads keeps
// each command's catalog whole while algorithms are added. Host algorithms only: no GPU needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

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
  void samples(const std::vector<CsvRow>& lines) override { samples_ += lines.size(); }
  void row(const CsvRow& row) override {
    EXPECT_EQ(row.size(), result_columns().size());
    rows_.push_back(row);
  }
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
  EXPECT_THROW(plan.set("resume", "true"), UsageError);  // nothing to resume without an output
  EXPECT_FALSE(plan.resolve(*lab.catalog()).resume);       // and the plan as it was
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
  EXPECT_TRUE(fs::is_empty(dir)) << "a run without an output wrote into " << dir;
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

}  // namespace
}  // namespace mmlab
