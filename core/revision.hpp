// The git revision the program was built from (generated at every build: cmake/git_revision.cmake),
// so every CSV row and `--version` name the code that produced them.
#pragma once

#include <string>

namespace mmlab {

const char* git_revision();

// The source tree's folder as the build saw it ("/home/x/mmlab/"), and a source file's path inside
// it ("distributed/comm.cu" for __FILE__): messages name files as the repository does, not as the
// machine that built it.
const char* source_prefix();
inline std::string repository_path(const char* file) {
  const std::string f = file, prefix = source_prefix();
  return f.compare(0, prefix.size(), prefix) == 0 ? f.substr(prefix.size()) : f;
}

}  // namespace mmlab
