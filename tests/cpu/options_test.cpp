#include "harness/options.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/lab.hpp"

namespace mmlab {
namespace {

// The option functions with mmlab's own registry.
RunPlan make_plan(const Settings& cli, const Settings& file) {
  return mmlab::make_plan(cli, file, test::lab());
}
Settings parse_command_line(int argc, const char* const* argv) {
  return mmlab::parse_command_line(argc, argv, test::lab());
}
Settings parse_experiment_file(const std::string& path) {
  return mmlab::parse_experiment_file(path, test::lab());
}

std::string params_of(const RunPlan& plan, const std::string& algorithm) {
  std::string out;
  for (const Configuration& c : plan.configurations)
    if (c.algorithm->name == algorithm) out += (out.empty() ? "" : " ") + c.params.canonical();
  return out;
}

TEST(Options, PrecedenceCliSpecificThenCliThenFileSpecificThenFileThenDefault) {
  const Settings file = {
      {"algorithms", "naive,tiled"}, {"tile", "8"}, {"naive.block", "8x8"}, {"block", "4x4"}};
  EXPECT_EQ(params_of(make_plan({}, file), "naive"), "block=8x8");  // file specific beats file global
  EXPECT_EQ(params_of(make_plan({}, file), "tiled"), "tile=8");     // file global
  EXPECT_EQ(params_of(make_plan({{"block", "32x8"}}, file), "naive"), "block=32x8");  // CLI beats file
  EXPECT_EQ(params_of(make_plan({{"block", "32x8"}, {"naive.block", "64x4"}}, file), "naive"), "block=64x4");
  EXPECT_EQ(params_of(make_plan({{"algorithms", "naive"}}, {}), "naive"), "block=16x16");  // the default
  EXPECT_EQ(params_of(make_plan({{"algorithms", "tiled"}, {"tile", "all"}}, {}), "tiled"),
            "tile=8 tile=16 tile=32");
}

// The inputs axis: each kind once, in the order given; problems stay outermost; cuBLAS's on-request
// variants stay out of `all` unless named.
TEST(Options, InputsOnceEachAndOnRequestVariants) {
  const RunPlan p = make_plan(
      {{"algorithms", "cublas"}, {"size", "8,16"}, {"inputs", "ill_conditioned,uniform,ill_conditioned"}},
      {});
  ASSERT_EQ(p.configurations.size(), 4u);
  EXPECT_EQ(p.configurations[0].problem.inputs, Inputs::ill_conditioned);
  EXPECT_EQ(p.configurations[1].problem.inputs, Inputs::uniform);
  EXPECT_EQ(p.configurations[1].problem.m, 8);
  EXPECT_EQ(p.configurations[2].problem.m, 16);
  EXPECT_EQ(p.configurations[0].params.variant(), "default");  // tf32 and bf16x9 run on request
  const RunPlan named =
      make_plan({{"algorithms", "cublas"}, {"size", "8"}, {"cublas.variant", "default,tf32"}}, {});
  EXPECT_EQ(named.configurations.size(), 2u);
  EXPECT_THROW(make_plan({{"algorithms", "cublas"}, {"inputs", "normal"}}, {}), UsageError);
}

TEST(Options, CliProblemsReplaceTheFilesAsAWhole) {
  const Settings file = {{"algorithms", "cublas"}, {"size", "64,128"}, {"shape", "3x4x5"}};
  EXPECT_EQ(make_plan({}, file).configurations.size(), 3u);
  const RunPlan p = make_plan({{"size", "32"}}, file);
  ASSERT_EQ(p.configurations.size(), 1u);
  EXPECT_EQ(p.configurations[0].problem, (Problem{32, 32, 32}));
  const RunPlan g = make_plan({{"algorithms", "cublas"}, {"m", "10,20"}, {"n", "5"}, {"k", "1:3:1"}}, {});
  EXPECT_EQ(g.configurations.size(), 6u);
  EXPECT_EQ(make_plan({{"algorithms", "cublas"}}, {}).configurations[0].problem, (Problem{1024, 1024, 1024}));
}

TEST(Options, ProblemsPerAlgorithmAndVariant) {
  const Settings file = {{"algorithms", "dns,cublas"},
                         {"dns.variant", "planes,tiled_atomic"},
                         {"size", "64,4096"},
                         {"dns.size", "64,128"},
                         {"dns.planes.size", "64"}};
  const RunPlan p = make_plan({}, file);
  std::vector<std::string> got;
  for (const Configuration& c : p.configurations)
    got.push_back(c.algorithm->name + ":" + c.params.variant() + ":" + std::to_string(c.problem.m));
  // problems in order of first appearance: 64, 4096, 128
  EXPECT_EQ(got, (std::vector<std::string>{"dns:planes:64", "dns:tiled_atomic:64", "cublas:default:64",
                                           "cublas:default:4096", "dns:tiled_atomic:128"}));
  // a CLI size replaces every problem key of the file
  EXPECT_EQ(make_plan({{"size", "32"}}, file).configurations.size(), 3u);
  // only per-algorithm problems: no 1024 default for anyone
  const RunPlan own = make_plan({{"algorithms", "cublas"}, {"cublas.shape", "3x4x5"}}, {});
  ASSERT_EQ(own.configurations.size(), 1u);
  EXPECT_EQ(own.configurations[0].problem, (Problem{3, 4, 5}));
}

TEST(Options, TimingAndOutput) {
  const RunPlan a = make_plan({{"trials", "auto"}, {"ci-width", "0.05"}, {"experiment", "x/fast.ini"}}, {});
  EXPECT_TRUE(a.timing.stop.adaptive);
  EXPECT_DOUBLE_EQ(a.timing.stop.rel_width, 0.05);
  EXPECT_EQ(a.output, "results/fast.csv");
  EXPECT_EQ(a.samples_output, "results/fast.samples.csv");
  const RunPlan f = make_plan({{"trials", "7"}, {"output", "o/r.csv"}}, {{"warmup", "0"}});
  EXPECT_FALSE(f.timing.stop.adaptive);
  EXPECT_EQ(f.timing.stop.min_trials, 7u);
  EXPECT_EQ(f.timing.warmup, 0);
  EXPECT_EQ(f.samples_output, "o/r.samples.csv");
  EXPECT_EQ(samples_path_for("noext"), "noext.samples.csv");
  // The clock: blocked behind a 1 s blocking kernel unless asked otherwise.
  EXPECT_TRUE(f.timing.blocking);
  EXPECT_DOUBLE_EQ(f.timing.block_timeout_s, kDefaultBlockTimeoutSeconds);  // the table says the same
  const RunPlan e = make_plan({{"timer", "events"}}, {{"block-timeout", "0.25"}});
  EXPECT_FALSE(e.timing.blocking);
  EXPECT_DOUBLE_EQ(e.timing.block_timeout_s, 0.25);
}

TEST(Options, BadInputIsAUsageErrorNamingTheValidChoices) {
  auto message = [](const Settings& cli) {
    try {
      make_plan(cli, {});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"algorithms", "nope"}}).find("naive"), std::string::npos);
  EXPECT_NE(message({{"naive.variant", "nope"}}).find("default"), std::string::npos);
  EXPECT_NE(message({{"size", "0"}}).find(">= 1"), std::string::npos);
  EXPECT_NE(message({{"size", "1:2"}}).find("start:stop:step"), std::string::npos);
  EXPECT_NE(message({{"m", "3"}}).find("all three"), std::string::npos);
  EXPECT_NE(message({{"scope", "kernels"}}).find("end_to_end"), std::string::npos);
  EXPECT_NE(message({{"l2-flush", "maybe"}}).find("(valid: off, on)"), std::string::npos);
  EXPECT_NE(message({{"block", "16x"}}).find("block"), std::string::npos);
  EXPECT_NE(message({{"trials", "many"}}).find("trials"), std::string::npos);
  EXPECT_NE(message({{"resume", "1"}, {"overwrite", "1"}}).find("exclude"), std::string::npos);
  EXPECT_NE(message({{"timer", "stopwatch"}}).find("blocked or events"), std::string::npos);
  EXPECT_NE(message({{"block-timeout", "0"}}).find("block-timeout"), std::string::npos);
}

// Each key is read once, by its own parser, into its typed field; a source's settings hold no text to
// parse again.
TEST(Options, EachKeyIsReadByItsOwnParserIntoItsField) {
  SweepSettings s;
  read_setting(s, "trials", Setting("auto", "--trials"), test::lab());
  ASSERT_TRUE(s.trials);
  EXPECT_TRUE(s.trials->value.adaptive);
  read_setting(s, "trials", Setting("12", "--trials"), test::lab());
  EXPECT_FALSE(s.trials->value.adaptive);
  EXPECT_EQ(s.trials->value.count, 12u);
  read_setting(s, "inputs", Setting("uniform,ill_conditioned,uniform", "--inputs"), test::lab());
  EXPECT_EQ(s.inputs->value, (std::vector<Inputs>{Inputs::uniform, Inputs::ill_conditioned}));
  read_setting(s, "l2-flush", Setting("on", "--l2-flush"), test::lab());
  EXPECT_EQ(s.l2_flush->value, std::vector<bool>{true});
  read_setting(s, "stop-after", Setting("none", "--stop-after"), test::lab());
  EXPECT_EQ(s.stop_after->value, 0.0);
  read_setting(s, "tiled.tile", Setting("16", "--tiled.tile"), test::lab());
  EXPECT_EQ(s.axes.at("tiled.tile").value, std::vector<std::string>{"16"});
  read_setting(s, "dns.planes.size", Setting("64,128", "--dns.planes.size"), test::lab());
  EXPECT_EQ(s.problems.at("dns.planes.size").value, (std::vector<Problem>{{64, 64, 64}, {128, 128, 128}}));
  read_setting(s, "resume", Setting("1", "--resume"), test::lab());
  EXPECT_TRUE(s.resume->value);
  // A value no parser takes: the field as it was, the error naming where the value was given.
  try {
    read_setting(s, "trials", Setting("many", "f.ini:3"), test::lab());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("f.ini:3: trials = many: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(s.trials->value.count, 12u);
  EXPECT_THROW(read_setting(s, "block", Setting("16x", "--block"), test::lab()), UsageError);  // no algorithm takes it
  EXPECT_THROW(read_setting(s, "naive.variant", Setting("nope", "--naive.variant"), test::lab()), UsageError);
  // The defaults are the table's, read by the same parsers.
  EXPECT_EQ(default_settings().trials->value.count, 20u);
  EXPECT_EQ(default_settings().size->value, std::vector<long>{1024});
  EXPECT_TRUE(default_settings().blocking->value);
}

TEST(Options, CommandLineParsing) {
  const char* argv[] = {"run", "exp.ini", "--size", "64", "--tiled.tile", "16", "--resume"};
  const Settings s = parse_command_line(7, argv);
  EXPECT_EQ(s.at("experiment"), "exp.ini");
  EXPECT_EQ(s.at("size"), "64");
  EXPECT_EQ(s.at("tiled.tile"), "16");
  EXPECT_EQ(s.at("resume"), "1");
  const char* bad[] = {"run", "--tiled.block", "16x16"};
  EXPECT_THROW(parse_command_line(3, bad), UsageError);
}

TEST(Options, ExperimentFilesWithSections) {
  const auto path = std::filesystem::temp_directory_path() / "mmlab-options-test.ini";
  {
    std::ofstream f(path);
    f << "# comment\nalgorithms = naive,tiled\nsize = 64\n[naive]\nblock = 8x8,32x8\n[tiled]\ntile = 16\n";
  }
  const Settings s = parse_experiment_file(path.string());
  EXPECT_EQ(s.at("naive.block"), "8x8,32x8");
  EXPECT_EQ(params_of(make_plan({}, s), "naive"), "block=8x8 block=32x8");
  {
    std::ofstream f(path);
    f << "sizes = 64\n";  // a typo
  }
  try {
    parse_experiment_file(path.string());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sizes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("did you mean size?"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(parse_experiment_file("/nonexistent/x.ini"), UsageError);
}

}  // namespace
}  // namespace mmlab
