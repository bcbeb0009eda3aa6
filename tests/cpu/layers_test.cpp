// The layers: each folder includes only from itself and the folders below it (README, Layout):
//   include/mmlab (the plugin SDK's C header)  <-  core
//   core  <-  runtime  <-  algorithms  <-  distributed;   core, runtime  <-  harness;   core  <-  analysis
//   every one of them  <-  api (the C API of libmmlab_lab.so, a composition root like mmlab's main)
// and core and analysis include no CUDA, MPI or NCCL header. Inside algorithms/ the same, one level down:
//   ptx  <-  kernels  <-  launch  <-  the algorithm files  <-  composite;   models (host-only, core alone)
// and only composite/ includes the registry (the algorithms that run others by name). mmlab's main
// (harness/main.cpp) is the one place that names the algorithm lists (algorithms/ and
// distributed/registry.hpp). The libraries' linked symbols keep the same order (Layers.LinkedSymbols...).
#include <gtest/gtest.h>

#include <cstdio>
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
    {"api", {"mmlab", "core", "runtime", "algorithms", "distributed", "harness", "analysis", "api"}},
};

// algorithms/'s sub-folders: what each may include from algorithms/ ("." is the algorithm files
// themselves, algorithms/*.cu and registry.hpp).
std::string sub_folder(const std::string& path) {  // of "algorithms/x/..." or "algorithms/x.cu"
  const std::string rest = path.substr(path.find('/') + 1);
  return rest.find('/') == std::string::npos ? "." : rest.substr(0, rest.find('/'));
}
const std::map<std::string, std::set<std::string>> kAlgorithmsMayInclude = {
    {"ptx", {"ptx"}},
    {"kernels", {"ptx", "kernels"}},
    {"models", {"models"}},
    {"launch", {"ptx", "kernels", "launch", "models"}},
    {".", {"ptx", "kernels", "launch", "models", "."}},
    {"composite", {"ptx", "kernels", "launch", "models", ".", "composite"}},
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
      if (i.file == "harness/main.cpp" && i.target == "distributed/registry.hpp")
        continue;  // the composition root: it hands the lab's list (lab_registry) to the harness
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

TEST(Layers, AlgorithmsSubFoldersIncludeDownward) {
  std::size_t checked = 0;
  for (const Include& i : includes_under("algorithms")) {
    if (i.system || top_folder(i.target) != "algorithms") continue;
    const std::string from = sub_folder(i.file), to = sub_folder(i.target);
    ++checked;
    if (i.target == "algorithms/registry.hpp") {
      EXPECT_TRUE(from == "composite" || i.file == "algorithms/registry.cpp")
          << i.file << ":" << i.line << " includes the registry: only composite/ runs algorithms by name";
      continue;
    }
    ASSERT_TRUE(kAlgorithmsMayInclude.count(from)) << i.file << ": a folder the layers do not know";
    EXPECT_TRUE(kAlgorithmsMayInclude.at(from).count(to))
        << i.file << ":" << i.line << " includes " << i.target << " (algorithms/" << from
        << " may include from: ptx <- kernels <- launch <- the algorithm files <- composite; models alone)";
  }
  EXPECT_GT(checked, 50u);
  for (const Include& i : includes_under("algorithms/models"))  // host-only: core, nothing of CUDA
    EXPECT_TRUE(!i.system ? top_folder(i.target) == "core" || sub_folder(i.target) == "models"
                          : !toolkit_header(i.target))
        << i.file << ":" << i.line << " includes " << i.target << ": models/ are host-only";
}

// The linked symbols keep the layers: every mmlab:: symbol a library takes from another is defined in
// a library of its own layer or below (nm of the static libraries of this build).
std::set<std::string> symbols(const std::string& library, const char* which) {
  std::set<std::string> out;
  const std::string cmd = "nm -C " + std::string(which) + " " + library + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string text(line);
    text.erase(text.find_last_not_of("\n") + 1);
    // "                 U mmlab::x(...)" or "0000000000000000 T mmlab::x(...)": the name follows the type
    // letter, the 18th character.
    if (text.size() < 20 || text[17] == ' ' || text[18] != ' ') continue;
    const std::string name = text.substr(19);
    if (name.rfind("mmlab::", 0) == 0 && name.find("(anonymous namespace)") == std::string::npos) out.insert(name);
  }
  pclose(p);
  return out;
}

TEST(Layers, LinkedSymbolsPointOnlyDownward) {
  // Each library and the libraries it may take mmlab:: symbols from (itself included).
  const std::map<std::string, std::set<std::string>> may_use = {
      {"core", {"core"}},
      {"runtime", {"core", "runtime"}},
      {"algorithms", {"core", "runtime", "algorithms"}},
      {"distributed", {"core", "runtime", "algorithms", "distributed"}},
      {"harness", {"core", "runtime", "harness"}},
      {"analysis", {"core", "analysis"}},
  };
  std::map<std::string, std::set<std::string>> defined;
  for (const auto& [name, allowed] : may_use) {
    const std::string lib = std::string(MMLAB_LIBRARY_DIR) + "/libmmlab_" + name + ".a";
    if (fs::exists(lib)) defined[name] = symbols(lib, "--defined-only");
  }
  if (!defined.count("core") || defined["core"].empty()) GTEST_SKIP() << "no libraries to read (nm)";
  std::size_t checked = 0;
  for (const auto& [name, allowed] : may_use) {
    if (!defined.count(name)) continue;  // not built here (cpu-only)
    const std::string lib = std::string(MMLAB_LIBRARY_DIR) + "/libmmlab_" + name + ".a";
    for (const std::string& wanted : symbols(lib, "--undefined-only")) {
      if (defined[name].count(wanted)) continue;
      for (const auto& [other, theirs] : defined)
        if (other != name && theirs.count(wanted)) {
          ++checked;
          EXPECT_TRUE(allowed.count(other)) << "libmmlab_" << name << " takes " << wanted << " from libmmlab_"
                                            << other << ", a layer above it";
        }
    }
  }
  EXPECT_GT(checked, 20u) << "the symbols between the libraries were found";
}

// The test can fail: a planted include of the harness from an algorithm is caught by the same rule.
TEST(Layers, TheRuleCatchesAnUpwardInclude) {
  EXPECT_FALSE(kMayInclude.at("algorithms").count(top_folder("harness/runner.hpp")));
  EXPECT_FALSE(kMayInclude.at("core").count(top_folder("runtime/gpu.hpp")));
  EXPECT_TRUE(toolkit_header("cuda_runtime.h"));
  EXPECT_TRUE(toolkit_header("mpi.h"));
  EXPECT_FALSE(toolkit_header("vector"));
  EXPECT_GT(includes_under("core").size(), 10u);  // the walk found the files
  EXPECT_FALSE(kAlgorithmsMayInclude.at("kernels").count(sub_folder("algorithms/launch/common.cuh")));
  EXPECT_FALSE(kAlgorithmsMayInclude.at("ptx").count(sub_folder("algorithms/kernels/pad.cuh")));
  EXPECT_FALSE(kAlgorithmsMayInclude.at(".").count(sub_folder("algorithms/composite/flagship.cu")));
}

}  // namespace
