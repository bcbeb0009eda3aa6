// The git revision the program was built from (generated at every build: cmake/git_revision.cmake),
// so every CSV row and `--version` name the code that produced them.
#pragma once

namespace mmlab {

const char* git_revision();

}  // namespace mmlab
