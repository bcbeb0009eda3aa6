// The mmlab binary as a user meets it: exit codes, messages, nothing written on bad input,
// interrupted runs that keep whole rows and resume. Uses the host algorithm, so no GPU is needed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/csv.hpp"
#include "core/schema.hpp"
#include "tests/lab.hpp"

namespace mmlab {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string output;
};

Result mmlab(const std::string& args) {
  const std::string cmd = std::string(MMLAB_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

struct Dir {
  fs::path path;
  Dir() {
    path = fs::temp_directory_path() / ("mmlab-cli-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

std::size_t rows_in(const std::string& csv) { return read_csv(csv).rows.size(); }

// A host sweep of 13 sizes long enough to be caught running (a few seconds), into `csv`.
std::string long_run(const std::string& csv) {
  return "run --algorithms eigen --eigen.threads 1 --size 96:480:32 --trials 40 --warmup 0 --output " + csv;
}

// Starts `mmlab ARGS` in the background; returns its pid.
pid_t start_mmlab(const std::string& args, const std::string& log = "/dev/null") {
  const pid_t child = fork();
  if (child == 0) {
    const std::string cmd = std::string(MMLAB_BINARY) + " " + args + " >" + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), (char*)nullptr);
    _exit(127);
  }
  return child;
}

TEST(Cli, ListShowsEveryAlgorithmWithItsAxes) {
  const Result r = mmlab("list");
  EXPECT_EQ(r.code, 0);
  for (const char* s :
       {"naive", "tiled", "cublas", "eigen", "block = 16x16", "tile = 32", "variants:", "constraints:"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
  EXPECT_EQ(mmlab("list nope").code, 2);
}

TEST(Cli, HelpIsComplete) {
  const Result r = mmlab("run --help");
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--size", "--shape", "--scope", "--trials", "--resume", "--l2-flush", "--naive.block",
                        "--tiled.tile", "Exit status"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
  EXPECT_EQ(mmlab("").code, 2);
  EXPECT_EQ(mmlab("frobnicate").code, 2);
}

TEST(Cli, BadInputExitsTwoAndWritesNothing) {
  Dir d;
  const std::string out = " --output " + (d / "r.csv");
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"--algorithms nope", "valid: naive"}, Case{"--size 0", ">= 1"},
                        Case{"--size 1:2", "start:stop:step"}, Case{"--size 12,,3", "empty item"},
                        Case{"--shape 3x4", "m x n x k"}, Case{"--eigen.variant fast", "valid: default"},
                        Case{"--tiled.block 8x8", "unknown option"}, Case{"--scope warm", "kernel"},
                        Case{"--trials -3", "trials"}, Case{"/nonexistent.ini", "cannot read"}}) {
    const Result r = mmlab("run " + c.args + out);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(d / "r.csv")) << c.args;
  }
  const Result dir = mmlab("run --algorithms eigen --size 4 --output " + d.path.string());
  EXPECT_EQ(dir.code, 2) << dir.output;
}

TEST(Cli, AnExistingCsvWithAnotherHeaderIsRefusedUntouched) {
  Dir d;
  { std::ofstream(d / "r.csv") << "x,y\n1,2\n"; }
  const Result r = mmlab("run --algorithms eigen --size 8 --output " + (d / "r.csv"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("not a CSV file of mmlab's"), std::string::npos) << r.output;
  std::ifstream in(d / "r.csv");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "x,y\n1,2\n");
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The reproduction: a foreign file whose last line lacks a newline lost that line, then
// the run said nothing was written. Now: refused, untouched.
TEST(Cli, AForeignCsvWithoutAFinalNewlineIsRefusedUntouched) {
  Dir d;
  for (const std::string& text : {std::string("a,b,c\n1,2,3\n4,5,6"), std::string("a,b,c")}) {
    { std::ofstream(d / "x.csv") << text; }
    const Result r = mmlab("run --algorithms eigen --size 32 --trials 2 --output " + (d / "x.csv"));
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_EQ(slurp(d / "x.csv"), text);
  }
}

// --resume reads what append mode would accept, repairs what it repairs, and refuses with exit 2
// (never a crash, never a silent rewrite) what it would refuse.
TEST(Cli, ResumeRepairsATornRowAndRefusesWhatIsNotOurs) {
  Dir d;
  const std::string csv = d / "r.csv", samples = d / "r.samples.csv";
  const std::string base = "run --algorithms eigen --eigen.threads 1 --trials 2 --output " + csv;
  const std::string args = base + " --size 8,16";
  ASSERT_EQ(mmlab(args).code, 0);
  const std::string rows = slurp(csv);

  { std::ofstream(csv, std::ios::app) << "3,abc-1-0,2026-11-22T"; }  // a torn row
  Result r = mmlab(base + " --size 8,16,32 --resume");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(rows_in(csv), 3u);

  const std::string header = rows.substr(0, rows.find('\n') + 1);
  std::string bad_m = rows;
  bad_m.replace(bad_m.find(",8,8,8,"), 7, ",8,x8,8,");
  for (const std::string& text : {rows + header, bad_m}) {  // a repeated header; a size that is not one
    { std::ofstream(csv) << text; }
    r = mmlab(args + " --resume");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("r.csv:"), std::string::npos) << r.output;  // file and line
    EXPECT_EQ(r.output.find("fatal"), std::string::npos) << r.output;
    EXPECT_EQ(slurp(csv), text);
  }
  { std::ofstream(csv) << rows; }
  { std::ofstream(samples) << "x,y\n1,2\n"; }  // a samples file of someone else's
  r = mmlab(args + " --resume");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_EQ(slurp(samples), "x,y\n1,2\n");
  EXPECT_EQ(mmlab(args + " --resume").code, 2);  // and append mode agrees
}

// Two runs on one new output: before, both wrote a header (4 of 5 tries a second one mid-file).
// Now the second is refused while the first holds the file, and the file stays one header + rows.
TEST(Cli, ASecondRunOnTheSameOutputIsRefused) {
  Dir d;
  const std::string csv = d / "r.csv";
  const std::string args = long_run(csv);
  const pid_t child = start_mmlab(args, d / "log.txt");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !(fs::exists(csv) && fs::file_size(csv) > 0))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const Result second = mmlab(args);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(second.code, 2) << second.output;
  EXPECT_NE(second.output.find("another mmlab run"), std::string::npos) << second.output;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(rows_in(csv), 13u);  // read_csv: one header, every row whole
}

TEST(Cli, DevicesFoldersAndEmptyFilesAreNotExperimentsOrOutputs) {
  Dir d;
  { std::ofstream(d / "empty.ini"); }
  for (const std::string& args :
       {std::string("/dev/null"), std::string("/dev/zero"), d.path.string(), d / "empty.ini",
        std::string("--algorithms eigen --size 8 --output /dev/full"),
        std::string("--algorithms eigen --size 8 --output /dev/null")}) {
    const Result r = mmlab("run " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_FALSE(fs::exists("results/null.csv") || fs::exists("results/zero.csv")) << args;
  }
}

TEST(Cli, ExperimentFileErrorsNameTheFileAndLine) {
  Dir d;
  struct Case {
    std::string text, says;
  };
  for (const Case& c : {Case{"algorithms = eigen\nsize = 32,x\n", "e.ini:2: size = 32,x"},
                        Case{"algorithms = eigen\n\n[eigen]\nthreads = 0\n", "e.ini:4: eigen.threads = 0"},
                        Case{"algorithms = eigen\nbogus = 1\n", "e.ini:2: unknown key 'bogus'"},
                        Case{"algorithms = eigen\nsize\n", "e.ini:2: 'size' is not a setting"},
                        Case{"size = 8\nwarmup = 4294967296\n", "e.ini:2: warmup"}}) {
    { std::ofstream(d / "e.ini") << c.text; }
    const Result r = mmlab("run " + (d / "e.ini") + " --dry-run");
    EXPECT_EQ(r.code, 2) << c.text;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.text << "\n" << r.output;
  }
  {
    std::ofstream(d / "bom.ini") << "\xEF\xBB\xBF"
                                 << "algorithms = eigen\nsize = 8\n";
  }
  const Result bom = mmlab("run " + (d / "bom.ini") + " --dry-run");
  EXPECT_EQ(bom.code, 0) << bom.output;
  EXPECT_NE(bom.output.find("1 configuration\n"), std::string::npos) << bom.output;
}

// Integer options were parsed as long and cut to int: --warmup 4294967296 recorded 0 and
// --repeats 4294967296 became 0 (a division by zero). Every option has a range.
TEST(Cli, NumericOptionsAreRangeChecked) {
  for (const char* bad : {"--warmup 4294967296", "--repeats 4294967296", "--repeats 0", "--trials 10000001",
                          "--device 4294967296", "--seed 18446744073709551616", "--threads 100000",
                          "--shape 2147483648x1x1", "--trials auto --ci-width nan",
                          "--trials auto --max-seconds 1e400", "--trials auto --max-trials 99999999999"}) {
    const Result r = mmlab(std::string("run --algorithms eigen --size 8 --dry-run ") + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.output;
  }
  EXPECT_EQ(mmlab("run --algorithms eigen --size 8 --dry-run --warmup 0 --seed 18446744073709551615").code,
            0);
}

// Found by fuzzing: a long size range took seconds per 10^4 sizes (a quadratic de-duplication);
// now 10^5 sizes plan at once, and a sweep past kMaxConfigurations is refused.
TEST(Cli, LargeSweepsPlanFastAndHugeOnesAreRefused) {
  const auto start = std::chrono::steady_clock::now();
  const Result many = mmlab("run --algorithms eigen --size 1:100000:1 --dry-run");
  EXPECT_EQ(many.code, 0);
  EXPECT_NE(many.output.find("100000 configurations"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  const Result huge = mmlab("run --size 1:100000:1,100001:200000:1 --dry-run");
  EXPECT_EQ(huge.code, 2);
  EXPECT_NE(huge.output.find("split it into several runs"), std::string::npos) << huge.output.substr(0, 300);
}

// A problem the host cannot hold is a skipped row with the reason (it was std::bad_alloc, exit 1,
// and the same on every --resume); the sizes after it run.
TEST(Cli, AProblemLargerThanHostMemoryIsSkipped) {
  Dir d;
  const std::string args =
      "run --algorithms eigen --eigen.threads 1 --size 32,100000,64 --trials 2 --output " + (d / "r.csv");
  const Result r = mmlab(args);
  EXPECT_EQ(r.code, 0) << r.output;
  const CsvTable t = read_csv(d / "r.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[1][t.column("status")], "skipped");
  EXPECT_NE(t.rows[1][t.column("reason")].find("host memory"), std::string::npos);
  EXPECT_EQ(t.rows[2][t.column("status")], "ok");
  EXPECT_EQ(mmlab(args + " --resume").code, 0);
}

TEST(Cli, HostRunWritesRowsAndSamplesThenResumeSkipsThem) {
  Dir d;
  const std::string common =
      "run --algorithms eigen,naive --shape 7x9x11 --trials 5 --output " + (d / "r.csv");
  const std::string args = common + " --size 8,16";
  const Result r = mmlab(args);
  EXPECT_EQ(r.code, 0) << r.output;
  const CsvTable t = read_csv(d / "r.csv");
  ASSERT_EQ(t.rows.size(), 6u);
  std::size_t ok = 0;
  for (const CsvRow& row : t.rows) {
    const std::string status = row[t.column("status")];
    if (row[t.column("algorithm")] == "eigen") {
      EXPECT_EQ(status, "ok");
      EXPECT_EQ(row[t.column("verified")], "1");
      EXPECT_EQ(row[t.column("trials")], "5");
      ++ok;
    } else {
      EXPECT_TRUE(status == "ok" || status == "skipped");  // naive needs a GPU
      if (status == "skipped") {
        EXPECT_NE(row[t.column("reason")].find("GPU"), std::string::npos);
      }
    }
  }
  EXPECT_EQ(ok, 3u);
  EXPECT_GE(rows_in(d / "r.samples.csv"), 15u);
  EXPECT_NE(r.output.find("[6/6]"), std::string::npos);
  EXPECT_NE(r.output.find("ETA"), std::string::npos);

  const Result again = mmlab(args + " --resume");
  EXPECT_EQ(again.code, 0);
  EXPECT_EQ(rows_in(d / "r.csv"), 6u);
  EXPECT_EQ(mmlab(common + " --size 8,16,32 --resume").code, 0);  // only the 32s are new
  EXPECT_EQ(rows_in(d / "r.csv"), 8u);
  EXPECT_EQ(mmlab(args).code, 0);  // no --resume: appends
  EXPECT_EQ(rows_in(d / "r.csv"), 14u);
  EXPECT_EQ(mmlab(args + " --size 4").code, 2);  // given twice
  EXPECT_EQ(mmlab(args + " --overwrite").code, 0);
  EXPECT_EQ(rows_in(d / "r.csv"), 6u);
}

// Starts a long host sweep, stops it with `sig` once rows appear, and checks what is left.
void interrupt_and_resume(int sig) {
  Dir d;
  const std::string csv = d / "r.csv";
  const std::string args = long_run(csv);
  const pid_t child = start_mmlab(args, d / "log.txt");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(csv) && rows_in(csv) >= 2) break;
  }
  kill(child, sig);
  int status = 0;
  waitpid(child, &status, 0);
  if (sig == SIGINT) {
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);
    // The first Ctrl-C says what happens (issue #60: it printed nothing).
    std::ifstream in(d / "log.txt");
    const std::string log((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(log.find("interrupted: the sweep ends when the step it is in ends"), std::string::npos) << log;
  }
  const std::size_t kept = rows_in(csv);  // read_csv throws on a torn row
  ASSERT_GE(kept, 2u);
  ASSERT_LT(kept, 13u) << "the run finished before it could be interrupted";

  const Result r = mmlab(args + " --resume");
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable t = read_csv(csv);
  ASSERT_EQ(t.rows.size(), 13u);  // 96, 128, ..., 480
  std::set<std::string> sizes, run_ids;
  for (const CsvRow& row : t.rows) {
    sizes.insert(row[t.column("m")]);
    run_ids.insert(row[t.column("run_id")]);
  }
  EXPECT_EQ(sizes.size(), 13u);  // no duplicates
  const CsvTable s = read_csv(d / "r.samples.csv");
  for (const CsvRow& row : s.rows) EXPECT_TRUE(run_ids.count(row[0])) << "orphan samples " << row[0];
  EXPECT_EQ(s.rows.size(), 13u * 40u);
}

TEST(Cli, CtrlCKeepsFinishedRowsAndResumeCompletes) { interrupt_and_resume(SIGINT); }
TEST(Cli, KillKeepsFinishedRowsAndResumeCompletes) { interrupt_and_resume(SIGKILL); }

TEST(Cli, DryRunListsTheConfigurations) {
  const Result r = mmlab("run --algorithms naive,tiled --block 8x8,16x16 --tile all --size 64,128 --dry-run");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("10 configurations"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mmlab

namespace mmlab {
namespace {

// The schema as a pandas user meets it: versions as text, verified empty where nothing ran,
// l2_flush as the CLI says it, and the resolved parameters of every row.
TEST(Cli, RowsSayWhatRanInWordsAReaderKeeps) {
  Dir d;
  const Result r = mmlab(
      "run --algorithms eigen,tiled,register_tiled --size 16 --trials 2 --warmup 0 --seed 0 "
      "--output " +
      (d / "x.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable t = read_csv(d / "x.csv");
  auto col = [&](const char* c) { return std::size_t(t.column(c)); };
  ASSERT_EQ(t.rows.size(), 1u + 1u + 2u);  // eigen, tiled (default tile), register_tiled tuned + manual
  for (const CsvRow& row : t.rows) {
    EXPECT_EQ(row[col("schema")], kSchemaVersion);
    EXPECT_EQ(row[col("inputs")], "uniform");
    EXPECT_EQ(row[col("l2_flush")], "off");
    EXPECT_EQ(row[col("seed")], "0");
    if (row[col("status")] == "skipped") {
      EXPECT_EQ(row[col("verified")], "") << row[col("algorithm")];
    }
    if (row[col("algorithm")] == "eigen") {
      EXPECT_EQ(row[col("verified")], "1");
      EXPECT_NE(row[col("max_sumabs_err")], "");
      EXPECT_NE(row[col("mean_sumabs_err")], "");
      // Two trials: a standard deviation, but no CI of the median (its [min, max] covers 50%).
      EXPECT_NE(row[col("std_ms")], "");
      EXPECT_EQ(row[col("ci_lo_ms")], "");
      EXPECT_EQ(row[col("ci_coverage")], "");
      EXPECT_EQ(row[col("order")], "sequential");  // the only configuration of its problem that ran
      EXPECT_EQ(row[col("clock_source")], "");     // a host algorithm has no GPU clock
    }
    if (row[col("algorithm")] == "register_tiled" && row[col("variant")] == "tuned") {
      EXPECT_EQ(row[col("params")], "");
      EXPECT_EQ(row[col("resolved")].rfind("tile=", 0), 0u) << row[col("resolved")];
    }
  }
  // The no-GPU reason is said once at the start, not on every row.
  std::size_t said = 0;
  for (std::size_t at = 0; (at = r.output.find("no CUDA GPU", at)) != std::string::npos; ++at) ++said;
  EXPECT_LE(said, 1u) << r.output;
}

// Interleaved trials (the default): a problem's configurations share an interleave_group and the
// same number of trials, which round i of each produced; --order sequential times one after another.
TEST(Cli, TrialsOfAProblemAreInterleavedUnlessSequentialIsAsked) {
  Dir d;
  const std::string run = "run --algorithms eigen --eigen.threads 1,2 --size 24,32 --trials 5 --warmup 1 ";
  ASSERT_EQ(mmlab(run + "--output " + (d / "i.csv")).code, 0);
  ASSERT_EQ(mmlab(run + "--order sequential --output " + (d / "s.csv")).code, 0);
  EXPECT_EQ(mmlab(run + "--order shuffled --output " + (d / "x.csv")).code, 2);
  const CsvTable i = read_csv(d / "i.csv"), s = read_csv(d / "s.csv");
  ASSERT_EQ(i.rows.size(), 4u);
  ASSERT_EQ(s.rows.size(), 4u);
  std::map<std::string, std::set<std::string>> groups;  // size -> interleave groups
  for (const CsvRow& row : i.rows) {
    EXPECT_EQ(row[i.column("order")], "interleaved");
    EXPECT_EQ(row[i.column("trials")], "5");
    EXPECT_NE(row[i.column("ci_coverage")], "");  // 5 trials: [min, max], 93.75%
    EXPECT_EQ(row[i.column("ci_coverage")], "0.9375");
    groups[row[i.column("m")]].insert(row[i.column("interleave_group")]);
  }
  ASSERT_EQ(groups.size(), 2u);
  for (const auto& [size, ids] : groups) {
    EXPECT_EQ(ids.size(), 1u) << size;  // one group per problem, not shared across problems
    EXPECT_NE(*ids.begin(), "");
  }
  EXPECT_NE(*groups["24"].begin(), *groups["32"].begin());
  for (const CsvRow& row : s.rows) {
    EXPECT_EQ(row[s.column("order")], "sequential");
    EXPECT_EQ(row[s.column("interleave_group")], "");
  }
  const CsvTable samples = read_csv(d / "i.samples.csv");
  EXPECT_EQ(samples.header, (CsvRow{"run_id", "trial", "ms", "clock_mhz", "host_ms", "energy_j"}));
  EXPECT_EQ(samples.rows.size(), 20u);
  for (const CsvRow& row : samples.rows) EXPECT_EQ(row[4], "");  // a host algorithm: no enqueueing to time
  for (const CsvRow& row : i.rows) {  // timed by the host's clock, which has no host time apart
    EXPECT_EQ(row[i.column("timer")], "host");
    EXPECT_EQ(row[i.column("host_ms")], "");
  }
}

TEST(Cli, AGlobalVariantListAndSeedZero) {
  Dir d;
  Result r = mmlab("run --algorithms cannon,dns --variant tiled_atomic --size 8 --dry-run --output " +
                   (d / "x.csv"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cannon tiled_atomic"), std::string::npos);
  EXPECT_NE(r.output.find("dns tiled_atomic"), std::string::npos);
  EXPECT_EQ(r.output.find("single_block"), std::string::npos);
  r = mmlab("run --algorithms cannon,naive --variant tiled --size 8 --dry-run");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("naive has none of the variants"), std::string::npos) << r.output;
  EXPECT_EQ(mmlab("run --algorithms eigen --size 8 --seed 0 --dry-run").code, 0);
}

// `all` sweeps the compiled list only; asking for uncompiled combinations says how many were left out.
TEST(Cli, SweepsOnlyWhatIsCompiled) {
  Result r =
      mmlab("run --algorithms cannon --cannon.variant tiled --tile all --block all --size 8 --dry-run");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\n9 configurations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("7 combinations"), std::string::npos) << r.output;  // 4 tiles x 4 blocks - 9
  r = mmlab("list warptile_1d");
  EXPECT_NE(
      r.output.find("compiled: block 16x16, 16x8, 16x4, 32x32, 32x16, 32x8, 32x4, 64x16, 64x8, 64x4, 64x2"),
      std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace mmlab

namespace mmlab {
namespace {

std::string analyze(const std::string& args) {  // mmlab-analyze, beside mmlab in the build
  return (fs::path(MMLAB_BINARY).parent_path() / "mmlab-analyze").string() + " " + args;
}
Result run_analyze(const std::string& args) {
  const std::string cmd = analyze(args) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

const std::string kTwoEigens = "run --algorithms eigen --eigen.threads 1,2 --size 12 --trials 4 --warmup 0 ";

// A symlinked --output: rows and samples go to the link's target, side by side, and the analysis
// finds the samples from the link's name too.
TEST(NewUser, ASymlinkedOutputKeepsRowsAndSamplesTogether) {
  Dir d;
  fs::create_symlink(d / "target.csv", d / "link.csv");
  const Result r = mmlab(kTwoEigens + "--output " + (d / "link.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(d / "target.samples.csv"));
  EXPECT_FALSE(fs::exists(d / "link.samples.csv"));
  const Result c = run_analyze("compare " + (d / "link.csv") + " --baseline eigen:default:threads=1");
  EXPECT_EQ(c.code, 0) << c.output;
}

// Plain appends are checked as --resume is: a repeated header or a field that is not a number in
// the file's last rows is an error naming the line, exit 2, the file untouched.
TEST(NewUser, AppendsRefuseWhatMmlabWouldNotHaveWritten) {
  Dir d;
  ASSERT_EQ(mmlab(kTwoEigens + "--output " + (d / "x.csv")).code, 0);
  const std::string good = slurp(d / "x.csv");
  const std::string header = good.substr(0, good.find('\n') + 1);
  const std::size_t median = std::size_t(read_csv(d / "x.csv").column("median_ms"));
  std::string fast = good;  // the last row's median_ms = fast
  std::size_t at = fast.rfind('\n', fast.size() - 2) + 1;
  for (std::size_t c = 0; c < median; ++c) at = fast.find(',', at) + 1;
  fast.replace(at, fast.find(',', at) - at, "fast");
  for (const std::string& bad : {good + header, fast})
    for (const char* resume : {"", "--resume "}) {
      { std::ofstream(d / "x.csv", std::ios::trunc) << bad; }
      const Result r = mmlab(kTwoEigens + resume + "--output " + (d / "x.csv"));
      EXPECT_EQ(r.code, 2) << resume << r.output;
      EXPECT_TRUE(r.output.find("header again") != std::string::npos ||
                  r.output.find("'fast' is not a number") != std::string::npos)
          << r.output;
      EXPECT_EQ(slurp(d / "x.csv"), bad);
    }
  { std::ofstream(d / "x.csv", std::ios::trunc) << good + header; }
  const Result a = run_analyze("summary " + (d / "x.csv"));
  EXPECT_EQ(a.code, 2);
  EXPECT_NE(a.output.find("x.csv:4: the header again"), std::string::npos) << a.output;
}

// What a new user hit (#35): a file of another schema is not appended to; a key twice in an
// experiment file names both lines; `mmlab list --help` is help.
TEST(NewUser, AnotherSchemaARepeatedKeyAndListHelp) {
  Dir d;
  ASSERT_EQ(mmlab(kTwoEigens + "--output " + (d / "x.csv")).code, 0);
  std::string text = slurp(d / "x.csv");
  text.replace(text.find('\n') + 1, 1, "99");  // the first row's schema (its first column)
  for (const char* resume : {"", "--resume "}) {
    { std::ofstream(d / "x.csv", std::ios::trunc) << text; }
    const Result r = mmlab(kTwoEigens + resume + "--output " + (d / "x.csv"));
    EXPECT_EQ(r.code, 2) << resume << r.output;
    EXPECT_NE(r.output.find("column 'schema': '99': a row of another schema"), std::string::npos) << r.output;
    EXPECT_EQ(slurp(d / "x.csv"), text);
  }

  { std::ofstream(d / "e.ini") << "algorithms = eigen\nsize = 32\n# a comment\nsize = 64\n"; }
  Result r = mmlab("run " + (d / "e.ini") + " --dry-run");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("e.ini:4: 'size' again (first at " + (d / "e.ini") + ":2)"), std::string::npos)
      << r.output;

  r = mmlab("list --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("usage: mmlab list"), std::string::npos) << r.output;
  EXPECT_EQ(mmlab("list --verbose").code, 2);
}

// A run whose rows are all skipped leaves a samples file with its header, which the analysis
// reads; compare then says why the baseline has nothing to compare.
TEST(NewUser, ARunWithoutTimedRowsLeavesReadableFiles) {
  if (fs::exists("/proc/driver/nvidia/version")) GTEST_SKIP() << "a GPU machine times cuBLAS";
  Dir d;
  ASSERT_EQ(mmlab("run --algorithms cublas,tiled --size 8 --output " + (d / "x.csv")).code, 0);
  EXPECT_EQ(slurp(d / "x.samples.csv"), "run_id,trial,ms,clock_mhz,host_ms,energy_j\n");
  const Result s = run_analyze("summary " + (d / "x.csv") + " --all");
  EXPECT_EQ(s.code, 0) << s.output;
  const Result c = run_analyze("compare " + (d / "x.csv") + " --baseline cublas");
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.output.find("baseline cublas has no ok rows"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("skipped: no NVIDIA driver or GPU found"), std::string::npos) << c.output;
}

// An output that is the run's own experiment file is refused before anything is written.
TEST(NewUser, AnOutputThatIsAnInputIsRefused) {
  Dir d;
  const std::string ini = d / "x.ini";
  { std::ofstream(ini) << "algorithms = eigen\nsize = 8\n"; }
  const std::string before = slurp(ini);
  for (const std::string& out : {ini, d / "x"}) {  // x.ini itself; x.samples.csv is not it, but
    const Result r = mmlab("run " + ini + " --output " + out + (out == ini ? " --overwrite" : " --dry-run"));
    if (out == ini) {
      EXPECT_EQ(r.code, 2) << r.output;
      EXPECT_NE(r.output.find("is the experiment file"), std::string::npos) << r.output;
    }
    EXPECT_EQ(slurp(ini), before);
  }
}

// mmlab-analyze: a command's own help, a version, and a folder as the output named as such.
TEST(NewUser, AnalyzeHelpVersionAndAFolderAsOutput) {
  const Result help = run_analyze("compare --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.output.rfind("usage: mmlab-analyze compare", 0), 0u) << help.output;
  EXPECT_EQ(help.output.find("frontier FILE"), std::string::npos);  // not every command's
  const Result version = run_analyze("--version");
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.output.rfind("mmlab-analyze ", 0), 0u) << version.output;
  Dir d;
  ASSERT_EQ(mmlab(kTwoEigens + "--output " + (d / "x.csv")).code, 0);
  const Result folder = run_analyze("summary " + (d / "x.csv") + " -o " + d.path.string());
  EXPECT_EQ(folder.code, 2);
  EXPECT_NE(folder.output.find("is a folder"), std::string::npos) << folder.output;
  EXPECT_EQ(folder.output.find("Success"), std::string::npos) << folder.output;
}

// An output that cannot be written (here a file-size limit, as a full disk) exits 3, documented,
// with the message on a line of its own and the file ending in whole rows.
TEST(NewUser, AFullDiskExitsThreeOnALineOfItsOwn) {
  Dir d;
  const std::string cmd = "ulimit -f 4; trap '' XFSZ; exec " + std::string(MMLAB_BINARY) +
                          " run --algorithms eigen --size 4:400:4 --trials 2 --warmup 0 --output " +
                          (d / "x.csv");
  FILE* p = popen(("sh -c \"" + cmd + "\" 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << out;
  EXPECT_NE(out.find("\nmmlab: error: "), std::string::npos) << out;
  EXPECT_NO_THROW(read_csv(d / "x.csv"));  // whole rows only
  EXPECT_NE(mmlab("run --help").output.find("3 an output"), std::string::npos);
}

// Option names: '-' and '_' alike, the nearest key suggested on a typo, not every key listed; more
// host threads than the machine has is a skipped row with the reason.
TEST(NewUser, OptionSpellingsTyposAndThreads) {
  Dir d;
  EXPECT_EQ(mmlab("run --algorithms eigen --size 8 --l2_flush off --min_trials 3 --dry-run --output " +
                  (d / "x.csv"))
                .code,
            0);
  const Result typo = mmlab("run --algorithms eigen --size 8 --trails 4 --output " + (d / "x.csv"));
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.output.find("did you mean --trials?"), std::string::npos) << typo.output;
  EXPECT_LT(typo.output.size(), 300u) << typo.output;
  const Result many = mmlab("run --algorithms eigen --eigen.threads 999 --size 8 --output " + (d / "t.csv"));
  EXPECT_EQ(many.code, 0) << many.output;
  const CsvTable t = read_csv(d / "t.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][std::size_t(t.column("status"))], "skipped");
  EXPECT_NE(t.rows[0][std::size_t(t.column("reason"))].find("hardware threads"), std::string::npos);
  const std::string help = mmlab("run --help").output;
  EXPECT_EQ(help.find("(default: every hardware thread) (default"), std::string::npos);
}

// Without a driver the no-GPU message says so, not "CUDA driver version is insufficient".
TEST(NewUser, NoDriverIsSaidPlainly) {
  if (fs::exists("/proc/driver/nvidia/version")) GTEST_SKIP() << "this machine has the NVIDIA driver";
  Dir d;
  const Result r = mmlab("run --algorithms tiled --size 8 --output " + (d / "x.csv"));
  EXPECT_NE(r.output.find("no NVIDIA driver or GPU found"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("insufficient"), std::string::npos) << r.output;
}

// Every CSV under data/ is a table (a header, and rows of its width): what pandas and the
// analysis can read. Nsight Compute's exports are text, named .ncu.txt.
TEST(NewUser, EveryCsvUnderDataIsATable) {
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(MMLAB_SOURCE_DIR) / "data")) {
    if (!e.is_regular_file() || e.path().extension() != ".csv") continue;
    ++files;
    LineReader in(e.path().string());
    std::string line;
    ASSERT_TRUE(in.next(line)) << e.path();
    const std::size_t width = parse_csv_line(line, in.where()).size();
    while (in.next(line)) {
      if (line.empty()) continue;
      ASSERT_EQ(parse_csv_line(line, in.where()).size(), width) << in.where();
    }
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
}  // namespace mmlab

namespace mmlab {
namespace {

// Issue #47, item 7: a symbolic-link loop given as the experiment file says so; the ETA waits for
// three configurations and comes from a fit to their times, not from the first alone; a verified
// configuration's line does not promise a count of the problem's configurations it cannot know yet.
TEST(NewUser, TheProgressAndTheMessagesSayWhatIsTrue) {
  Dir d;
  fs::create_symlink(d / "b.ini", d / "a.ini");
  fs::create_symlink(d / "a.ini", d / "b.ini");
  const Result loop = mmlab("run " + (d / "a.ini"));
  EXPECT_EQ(loop.code, 2);
  EXPECT_NE(loop.output.find("a loop of symbolic links"), std::string::npos) << loop.output;
  const Result r = mmlab("run --algorithms eigen --eigen.threads 1 --size 64,96,128,160 --trials 3 --warmup 0 "
                         "--output " + (d / "r.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::vector<std::string> etas;
  for (std::size_t at = r.output.find("ETA "); at != std::string::npos; at = r.output.find("ETA ", at + 1))
    etas.push_back(r.output.substr(at + 4, r.output.find(')', at) - at - 4));
  ASSERT_EQ(etas.size(), 4u) << r.output;
  EXPECT_EQ(etas[0], "?");
  EXPECT_EQ(etas[1], "?");
  EXPECT_NE(etas[2], "?");
  EXPECT_EQ(etas[3], "0:00");
  EXPECT_EQ(r.output.find("timed with the"), std::string::npos) << r.output;
  // Issue #80: under the interleaved order the counts go up (they jumped back to a problem's first), and
  // why its trials wait is said once.
  const Result mixed = mmlab("run --algorithms eigen,cublas --eigen.threads 1 --shape 64x64x64,96x96x96,128x128x128 "
                             "--trials 3 --warmup 0 --output " + (d / "m.csv"));
  ASSERT_EQ(mixed.code, 0) << mixed.output;
  std::vector<int> counts;
  for (std::size_t at = mixed.output.find("["); at != std::string::npos; at = mixed.output.find("[", at + 1))
    if (std::isdigit(static_cast<unsigned char>(mixed.output[at + 1]))) counts.push_back(std::stoi(mixed.output.substr(at + 1)));
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 3, 4, 5, 6})) << mixed.output;
  const std::string why = "timed once every configuration of its problem is verified";
  EXPECT_EQ(mixed.output.find(why), mixed.output.rfind(why)) << mixed.output;
  // Issue #60: what will be skipped for want of a GPU is not priced (cuBLAS at 32768 after eigen's
  // small products promised hours on a machine without one).
  if (fs::exists("/proc/driver/nvidia/version")) return;  // a GPU machine times cuBLAS
  const Result cpu = mmlab("run --algorithms eigen,cublas --eigen.threads 1 --size 64,96,128,160,32768 "
                           "--eigen.size 64,96,128,160 --trials 3 --warmup 0 --output " + (d / "c.csv"));
  ASSERT_EQ(cpu.code, 0) << cpu.output;
  etas.clear();
  for (std::size_t at = cpu.output.find("ETA "); at != std::string::npos; at = cpu.output.find("ETA ", at + 1))
    etas.push_back(cpu.output.substr(at + 4, cpu.output.find(')', at) - at - 4));
  ASSERT_FALSE(etas.empty()) << cpu.output;
  EXPECT_EQ(etas.back(), "0:00") << cpu.output;
  for (const std::string& e : etas) EXPECT_TRUE(e == "?" || e == "0:00") << e << "\n" << cpu.output;
}

}  // namespace
}  // namespace mmlab

namespace mmlab {
namespace {

// Issue #47, item 8: README is a front door: what the lab is, the two commands and the headline table
// (against cuBLAS and CUTLASS, each row naming its data) on the first screen, about 60 lines.
TEST(NewUser, TheFrontDoorFitsTheFirstScreen) {
  std::ifstream in(std::string(MMLAB_SOURCE_DIR) + "/README.md");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && lines.size() < 60;) lines.push_back(line);
  std::string screen;
  for (const std::string& l : lines) screen += l + "\n";
  EXPECT_NE(screen.find("## Two commands"), std::string::npos);
  EXPECT_NE(screen.find("build/bin/mmlab run experiments/quick.ini"), std::string::npos);
  EXPECT_NE(screen.find("ctest --preset release"), std::string::npos);
  const auto begin = screen.find("<!-- mmlab-analyze front: begin -->"), end = screen.find("<!-- mmlab-analyze front: end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos) << "the headline table runs past the first screen";
  const std::string table = screen.substr(begin, end - begin);
  std::size_t rows = 0;
  for (std::size_t at = table.find("\n| "); at != std::string::npos; at = table.find("\n| ", at + 1)) ++rows;
  EXPECT_GE(rows, 6u) << table;  // the header and the claims
  for (const char* word : {"cublas", "cutlass", "cublasxt", "flagship cuda_cores", "flagship tensor_cores", "data/"})
    EXPECT_NE(table.find(word), std::string::npos) << word << " in\n" << table;
}


// A results file of `rows` (algorithm, variant, params, resolved, m, n, k, median ms; every other column
// empty or a plausible value), as the harness writes it.
struct Written {
  std::string algorithm, variant, params, resolved;
  long m, n, k;
  double median_ms;
};
void write_results(const std::string& path, const std::vector<Written>& rows) {
  std::ofstream out(path);
  out << csv_line(result_columns());
  int id = 0;
  for (const Written& w : rows) {
    Record r(result_columns());
    r.set("schema", kSchemaVersion).set("run_id", "run-" + std::to_string(id++)).set("precision", "fp32");
    r.set("order", "sequential").set("timer", "events").set("trials", 1).set("ranks", 1).set("gpus", 1);
    r.set("min_ms", w.median_ms).set("max_ms", w.median_ms).set("mean_ms", w.median_ms).set("std_ms", 0.0);
    r.set("gflops", 2e-6 * double(w.m) * double(w.n) * double(w.k) / w.median_ms).set("verified", 1);
    r.set("algorithm", w.algorithm).set("variant", w.variant).set("params", w.params).set("resolved", w.resolved);
    r.set("m", w.m).set("n", w.n).set("k", w.k).set("sm_count", 132).set("inputs", "uniform").set("scope", "kernel");
    r.set("l2_flush", "off").set("median_ms", w.median_ms).set("status", "ok");
    out << csv_line(csv_row(r.values()));
  }
}

std::map<std::string, std::string> fields(const CsvRow& header, const CsvRow& row) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < header.size() && i < row.size(); ++i) out[header[i]] = row[i];
  return out;
}

// `mmlab terms` prints each row's terms, fitted row and time as the lab's own models give them
// (Algorithm::model_terms on the H100's description: issue #48), leaves out rows of algorithms without
// a linear model, prices no configuration its model has no row for, and refuses a file that is not a
// results file (exit 2, nothing on standard output).
TEST(Cli, TermsAreTheModelsOwn) {
  Dir d;
  const DeviceInfo h100 = h100_description();
  const Problem tuned_at{1500, 1300, 900};
  const std::string tuned =
      test::lab().find("register_tiled")->resolve(tuned_at, Params::parse("tuned", ""), h100).canonical();
  const std::string sk = "tile=128x128;warp=32x64;depth=32;stages=3;a=transposed";
  const std::vector<Written> rows = {
      {"streamk", "hybrid", sk, sk, 1000, 3000, 700, 0.1},
      {"small", "default", "tile=64x64;thread=8x4;split=4", "tile=64x64;thread=8x4;split=4", 200, 300, 1000, 0.02},
      {"small", "default", "tile=64x64;thread=8x4;split=32", "tile=64x64;thread=8x4;split=32", 200, 300, 1000, 0.02},
      {"skinny", "staged", "", "", 16, 4000, 3000, 0.03},
      {"skinny", "staged", "", "", 4000, 16, 3000, 0.03},
      {"register_tiled", "tuned", "", tuned, tuned_at.m, tuned_at.n, tuned_at.k, 0.2},
      {"tf32x3", "half3", "stages=3;split=auto", "stages=3;split=2", 512, 512, 4096, 0.1},
      {"tma_tiled", "tma", "tile=128x256;warp=32x128;depth=32;stages=3;split=1",
       "tile=128x256;warp=32x128;depth=32;stages=3;split=1", 3000, 3000, 3000, 1.0},
      {"eigen", "default", "threads=1", "threads=1", 64, 64, 64, 0.1}};
  write_results(d / "run.csv", rows);
  const Result r = mmlab("terms " + d / "run.csv");
  ASSERT_EQ(r.code, 0) << r.output;
  std::istringstream text(r.output);
  std::string line;
  std::getline(text, line);
  const CsvRow header = parse_csv_line(line, "terms");
  std::map<long, std::map<std::string, std::string>> by_line;
  while (std::getline(text, line)) {
    const auto f = fields(header, parse_csv_line(line, "terms"));
    by_line[std::stol(f.at("line"))] = f;
  }
  EXPECT_EQ(by_line.size(), rows.size() - 1) << r.output;  // eigen has no model
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Written& w = rows[i];
    const Algorithm& a = *test::lab().find(w.algorithm);
    if (!a.model_terms) {
      EXPECT_FALSE(by_line.count(long(i) + 2)) << w.algorithm;
      continue;
    }
    ASSERT_TRUE(by_line.count(long(i) + 2)) << w.algorithm << "\n" << r.output;
    const auto& f = by_line[long(i) + 2];
    const Problem p{w.m, w.n, w.k};
    const Params q = Params::parse(a.resolve ? a.resolve(p, Params::parse(w.variant, w.params), h100).variant() : w.variant,
                                   w.resolved);
    const ModelTerms t = a.model_terms(p, q, h100);
    EXPECT_EQ(f.at("variant"), q.variant());
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(std::stod(f.at("f" + std::to_string(j + 1))), t.f[j], 1e-9 * std::max(1.0, std::abs(t.f[j])))
          << w.algorithm << " f" << j + 1;
    EXPECT_EQ(f.at("fit").empty(), t.fit == nullptr) << w.algorithm << " " << w.params;
    if (t.fit) {
      EXPECT_NEAR(std::stod(f.at("model_ms")), t.ms(), 1e-9 * t.ms()) << w.algorithm;
      EXPECT_NEAR(t.ms(), a.predict_ms(p, q, h100), 1e-12) << w.algorithm;
    }
  }
  EXPECT_TRUE(by_line.at(4).at("fit").empty()) << "small's grouped split below k = 8192 is not modelled";
  EXPECT_TRUE(by_line.at(5).at("fit").empty()) << "skinny staged's rows kernel has no row of its own";
  EXPECT_EQ(by_line.at(6).at("fit"), "staged (cols)");
  EXPECT_EQ(by_line.at(7).at("variant"), "manual") << "register_tiled tuned resolves to manual";

  std::ofstream(d / "foreign.csv") << "a,b\n1,2\n";
  const Result foreign = mmlab("terms " + d / "foreign.csv");
  EXPECT_EQ(foreign.code, 2);
  EXPECT_NE(foreign.output.find("not an mmlab results file"), std::string::npos) << foreign.output;
  EXPECT_EQ(mmlab("terms " + d.path.string()).code, 2) << "a folder";
  EXPECT_EQ(mmlab("terms").code, 2);
  EXPECT_EQ(mmlab("terms --help").code, 0);
  // A file none of whose rows has terms says so and names the algorithms that have them (README's
  // `mmlab terms results/quick.csv` printed a header and nothing else).
  write_results(d / "none.csv", {rows.back()});
  const Result none = mmlab("terms " + d / "none.csv");
  EXPECT_EQ(none.code, 0);
  EXPECT_NE(none.output.find("none of the 1 rows is of an algorithm with a cost model's terms"), std::string::npos)
      << none.output;
  EXPECT_NE(none.output.find("tf32x3"), std::string::npos) << none.output;
}

// scripts/pick-regret: the share of problems whose pick is within 5% of the fastest candidate the
// dispatcher prices (not a configuration without a fitted model: small's split 32 below k = 8192), and
// the models' error, read from the lab (`mmlab list --format json flagship`, `mmlab terms`).
TEST(Cli, PickRegretJudgesThePickAgainstThePricedCandidates) {
  if (std::system("python3 --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  Dir d;
  const std::string sk = "tile=128x128;warp=32x64;depth=32;stages=3;a=transposed",
                    tma = "tile=128x256;warp=32x128;depth=32;stages=3;split=1";
  write_results(d / "run.csv",
                {{"flagship", "cuda_cores", "kernel=auto;launch=graph", "kernel=streamk:hybrid:" + sk + ";launch=graph",
                  1000, 3000, 700, 1.00},
                 {"streamk", "hybrid", sk, sk, 1000, 3000, 700, 0.98},
                 {"tma_tiled", "tma", tma, tma, 1000, 3000, 700, 1.20},
                 {"flagship", "cuda_cores", "kernel=auto;launch=graph",
                  "kernel=small:default:tile=64x64;thread=8x4;split=8;launch=graph", 200, 300, 1000, 0.050},
                 {"small", "default", "tile=64x64;thread=8x4;split=4", "tile=64x64;thread=8x4;split=4", 200, 300, 1000,
                  0.040},
                 {"small", "default", "tile=64x64;thread=8x4;split=32", "tile=64x64;thread=8x4;split=32", 200, 300,
                  1000, 0.010}});
  const std::string script = "python3 " + std::string(MMLAB_SOURCE_DIR) + "/scripts/pick-regret --mmlab " +
                             MMLAB_BINARY + " ",
                    cmd = script + d / "run.csv" + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("cuda_cores: the pick within 5% of the fastest candidate on 1 of 2 problems (50.0%)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("200x300x1000 uniform: 1.25x"), std::string::npos) << out;
  EXPECT_NE(out.find("streamk hybrid:" + sk), std::string::npos) << "each model's error\n" << out;
  // --reprice: the pick this build's models make among the measured rows. At k = 1000 small's grouped
  // split 32 has no model, so split 4 is the one priced small row: the pick and the fastest priced.
  p = popen((script + "--reprice " + d / "run.csv" + " 2>&1").c_str(), "r");
  out.clear();
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out.find("200x300x1000 uniform"), std::string::npos) << out;
  EXPECT_NE(out.find("of 2 problems"), std::string::npos) << out;
}

}  // namespace
}  // namespace mmlab
