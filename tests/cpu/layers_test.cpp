// The layers: each folder includes only from itself and the folders below it (README, Layout):
//   include/mmlab (the plugin SDK's C header)  <-  core
//   core  <-  runtime  <-  algorithms  <-  distributed;   core, runtime  <-  harness;   core  <-  analysis
// and core and analysis include no CUDA, MPI or NCCL header. mmlab's main (harness/main.cpp) is the
// one place that names the algorithm lists (algorithms/ and distributed/registry.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Include {
  std::string file, target;
  int line;
  bool system;  // <...>
};

std::vector<Include> includes_under(const std::string& folder) {
  std::vector<Include> out;
  const std::regex directive(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  const fs::path root(MMLAB_SOURCE_DIR);
  for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh"))
      continue;
    std::ifstream in(entry.path());
    std::string text;
    std::smatch m;
    for (int line = 1; std::getline(in, text); ++line)
      if (std::regex_search(text, m, directive))
        out.push_back({fs::relative(entry.path(), root).string(), m[2], line, m[1] == "<"});
  }
  return out;
}

std::string top_folder(const std::string& path) { return path.substr(0, path.find('/')); }

const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"core", {"mmlab", "core"}},  // "mmlab/plugin.h": include/mmlab, the SDK
    {"runtime", {"core", "runtime"}},
    {"algorithms", {"core", "runtime", "algorithms"}},
    {"distributed", {"core", "runtime", "algorithms", "distributed"}},
    {"harness", {"core", "runtime", "harness"}},
    {"analysis", {"core", "analysis"}},
};

bool toolkit_header(const std::string& h) {
  for (const char* prefix : {"cuda", "cublas", "cooperative_groups", "mpi", "nccl", "mma.h", "cuda_fp16"})
    if (h.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(Layers, IncludesPointOnlyDownward) {
  for (const auto& [folder, allowed] : kMayInclude)
    for (const Include& i : includes_under(folder)) {
      if (i.system) continue;
      const std::string to = top_folder(i.target);
      if (i.file == "harness/main.cpp" &&
          (i.target == "algorithms/registry.hpp" || i.target == "distributed/registry.hpp"))
        continue;  // the composition root: it hands the joined list to the harness
      EXPECT_TRUE(allowed.count(to)) << i.file << ":" << i.line << " includes " << i.target << " (" << folder
                                     << "/ may include only from itself and the folders below it)";
    }
}

TEST(Layers, CoreAndAnalysisNeedNoToolkit) {
  for (const char* folder : {"core", "analysis"})
    for (const Include& i : includes_under(folder))
      EXPECT_FALSE(i.system && toolkit_header(i.target))
          << i.file << ":" << i.line << " includes <" << i.target << ">: " << folder
          << "/ builds without CUDA, MPI, NCCL";
}

// The test can fail: a planted include of the harness from an algorithm is caught by the same rule.
TEST(Layers, TheRuleCatchesAnUpwardInclude) {
  EXPECT_FALSE(kMayInclude.at("algorithms").count(top_folder("harness/runner.hpp")));
  EXPECT_FALSE(kMayInclude.at("core").count(top_folder("runtime/gpu.hpp")));
  EXPECT_TRUE(toolkit_header("cuda_runtime.h"));
  EXPECT_TRUE(toolkit_header("mpi.h"));
  EXPECT_FALSE(toolkit_header("vector"));
  EXPECT_GT(includes_under("core").size(), 10u);  // the walk found the files
}

}  // namespace
