// mmlab-analyze: statistics, comparisons, the papers' tables and plots from mmlab's CSV files.
// See `mmlab-analyze --help`; the commands are analysis/cli.cpp.
#include "analysis/cli.hpp"

int main(int argc, char** argv) { return mmlab::analysis::cli(argc, argv); }
