// Plugins (include/mmlab/plugin.h): the example loads and becomes registry entries; every kind of
// bad plugin is a clear message naming the file, before anything is written; a plugin's reported
// errors are `failed` rows; rows name the plugin and its hash.
#include "core/plugin.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/csv.hpp"
#include "mmlab/plugin.h"
#include "tests/lab.hpp"

namespace mmlab {
namespace {

namespace fs = std::filesystem;

std::string bad(const std::string& which) {
  return std::string(MMLAB_BAD_PLUGIN_DIR) + "/libbad_plugin_" + which + ".so";
}

std::string error_of(const std::string& path) {
  try {
    Plugin::load(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

struct Ran {
  int code;
  std::string output;
};
Ran mmlab(const std::string& args) {
  FILE* p = popen((std::string(MMLAB_BINARY) + " " + args + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

struct Dir {
  fs::path path;
  Dir() {
    path = fs::temp_directory_path() / ("mmlab-plugin-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

TEST(Plugin, TheExampleBecomesRegistryEntries) {
  const auto p = Plugin::load(MMLAB_EXAMPLE_PLUGIN);
  ASSERT_EQ(p->algorithms().size(), 2u);
  const Algorithm& tiled = *p->algorithms()[0];
  EXPECT_EQ(tiled.name, "my_tiled");
  EXPECT_EQ(tiled.backend, Backend::device);
  EXPECT_EQ(tiled.source, p->path());
  ASSERT_EQ(tiled.axes.size(), 1u);
  EXPECT_EQ(tiled.axes[0].default_value, "16");
  EXPECT_EQ(tiled.axes[0].values, (std::vector<std::string>{"8", "16", "32"}));
  EXPECT_EQ(p->algorithms()[1]->backend, Backend::host);
  EXPECT_EQ(p->hash(), file_hash(MMLAB_EXAMPLE_PLUGIN));
  EXPECT_EQ(p->hash().rfind("fnv1a64:", 0), 0u);
  EXPECT_TRUE(test::lab().find("my_tiled"));  // the tests' registry holds it
  // The supports() of the library, through the adapter: a reason, not an error.
  Params q("default");
  q.set("tile", "8");
  EXPECT_FALSE(tiled.supports(Problem{64, 64, 64}, q, DeviceInfo{}));
  EXPECT_NE(tiled.supports(Problem{8 * 70000L, 64, 64}, q, DeviceInfo{})->find("65536"), std::string::npos);
}

TEST(Plugin, BadFilesSayWhatIsWrongWithWhichFile) {
  Dir d;
  { std::ofstream(d / "notes.txt") << "not a library\n"; }
  const std::string text = error_of(d / "notes.txt");
  EXPECT_NE(text.find(d / "notes.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("not a loadable shared library"), std::string::npos) << text;
  EXPECT_NE(error_of(d / "absent.so").find("no such file"), std::string::npos);
  EXPECT_NE(error_of(d.path).find("a folder; --plugin takes the shared library itself"), std::string::npos);
  const std::string entry = error_of(bad("no_entry"));
  EXPECT_NE(entry.find("no mmlab_plugin() entry point"), std::string::npos) << entry;
  EXPECT_NE(entry.find("libbad_plugin_no_entry.so"), std::string::npos) << entry;
  const std::string abi = error_of(bad("abi"));
  EXPECT_NE(abi.find("built against mmlab plugin ABI 3; this mmlab loads ABI 1 to 2"), std::string::npos) << abi;
}

// What a plugin's supports() was handed, read at the stride of the ABI it was built against.
struct Seen {
  int abi = 0;
  std::vector<std::string> text;
  std::vector<std::int64_t> numbers;
} g_seen;

struct ParamV1 {  // ABI 1's mmlab_param
  const char* name;
  const char* value;
};

int32_t record_params(const mmlab_problem*, const mmlab_params* q, char*, size_t) {
  g_seen.text.clear(), g_seen.numbers.clear();
  for (int i = 0; i < q->count; ++i) {
    if (g_seen.abi == 1) {
      g_seen.text.push_back(reinterpret_cast<const ParamV1*>(q->values)[i].value);
      continue;
    }
    g_seen.text.push_back(q->values[i].value);
    g_seen.numbers.push_back(q->values[i].number[0]), g_seen.numbers.push_back(q->values[i].number[1]);
  }
  return 0;
}

int32_t nothing(const mmlab_problem*, const mmlab_params*, const float*, const float*, float*, void*, void*, char*,
                size_t) {
  return 0;
}

// ABI 2 hands an integer's and a shape's numbers beside their text (a choice's both 0); a plugin built
// against ABI 1 still loads and reads its values' text at its own stride.
TEST(Plugin, ValuesComeAsNumbersAndAnAbiOnePluginStillReadsItsText) {
  static const mmlab_variant variants[] = {{"default", ""}};
  static const char* const blocks[] = {"8"};
  static const char* const tiles[] = {"2x3"};
  static const char* const modes[] = {"fast", "slow"};
  static const mmlab_axis axes[] = {{"block", MMLAB_AXIS_INTEGER, "", "8", blocks, 1},
                                    {"tile", MMLAB_AXIS_SHAPE, "", "2x3", tiles, 1},
                                    {"mode", MMLAB_AXIS_CHOICE, "", "fast", modes, 2}};
  static const mmlab_algorithm algorithms[] = {
      {"abi_probe", "", MMLAB_BACKEND_HOST, variants, 1, axes, 3, record_params, nullptr, nothing}};
  Params q("default");
  q.set("block", "24"), q.set("tile", "4x5"), q.set("mode", "slow");
  for (int abi : {1, 2}) {
    const mmlab_plugin_info info = {abi, "probe", algorithms, 1};
    const auto p = Plugin::adopt(&info, "memory", "");
    g_seen.abi = abi;
    EXPECT_FALSE(p->algorithms()[0]->supports(Problem{8, 8, 8}, q, DeviceInfo{}));
    EXPECT_EQ(g_seen.text, (std::vector<std::string>{"24", "4x5", "slow"})) << "ABI " << abi;
    if (abi == 2) {
      EXPECT_EQ(g_seen.numbers, (std::vector<std::int64_t>{24, 0, 4, 5, 0, 0}));
    }
  }
}

TEST(Plugin, ANameTakenIsRefused) {
  const auto dup = Plugin::load(bad("duplicate"));
  try {
    join_plugins({test::lab().all()}, {dup});
    ADD_FAILURE() << "a plugin's 'tiled' joined the built-in one";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'tiled' is already built in"), std::string::npos) << e.what();
  }
  const auto a = Plugin::load(bad("failing")), b = Plugin::load(bad("failing"));
  EXPECT_THROW(join_plugins({}, {a, b}), UsageError);  // the same plugin twice
}

// On the command line: a bad plugin is exit 2 before any file is written; the example runs from an
// experiment file's `plugin` key too; its rows name the library and its hash.
TEST(Plugin, TheCommandLine) {
  Dir d;
  for (const char* which : {"abi", "no_entry", "duplicate"}) {
    const Ran r =
        mmlab("run --plugin " + bad(which) + " --algorithms eigen --size 8 --output " + (d / "x.csv"));
    EXPECT_EQ(r.code, 2) << which << ": " << r.output;
    EXPECT_NE(r.output.find("libbad_plugin_" + std::string(which)), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(d / "x.csv")) << which;
  }
  const Ran list = mmlab("list my_host --plugin " + std::string(MMLAB_EXAMPLE_PLUGIN));
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("plugin " + fs::canonical(MMLAB_EXAMPLE_PLUGIN).string()), std::string::npos)
      << list.output;
  {
    std::ofstream(d / "e.ini") << "plugin = " << MMLAB_EXAMPLE_PLUGIN
                               << "\nalgorithms = my_host\nsize = 33, 64\n"
                               << "trials = 3\nwarmup = 0\n[my_host]\nblock = 16, 256\n";
  }
  const Ran ok = mmlab("run " + (d / "e.ini") + " --output " + (d / "ok.csv"));
  ASSERT_EQ(ok.code, 0) << ok.output;
  const CsvTable t = read_csv(d / "ok.csv");
  ASSERT_EQ(t.rows.size(), 4u);
  for (const auto& row : t.rows) {
    EXPECT_EQ(row[t.column("status")], "ok");
    EXPECT_EQ(row[t.column("plugin")], fs::canonical(MMLAB_EXAMPLE_PLUGIN).string());
    EXPECT_EQ(row[t.column("plugin_hash")], file_hash(MMLAB_EXAMPLE_PLUGIN));
  }
}

// A plugin's supports() or run() reporting an error: a `failed` row with its message, the run goes on.
TEST(Plugin, ReportedErrorsAreFailedRows) {
  Dir d;
  const Ran r = mmlab("run --plugin " + bad("failing") +
                      " --algorithms failing --variant all --size 8 --trials 1 "
                      "--warmup 0 --output " +
                      (d / "f.csv"));
  EXPECT_EQ(r.code, 1) << r.output;
  const CsvTable t = read_csv(d / "f.csv");
  ASSERT_EQ(t.rows.size(), 2u) << r.output;
  for (const auto& row : t.rows) {
    EXPECT_EQ(row[t.column("status")], "failed");
    EXPECT_NE(row[t.column("reason")].find("fails on purpose"), std::string::npos) << row[t.column("reason")];
  }
}

}  // namespace
}  // namespace mmlab
