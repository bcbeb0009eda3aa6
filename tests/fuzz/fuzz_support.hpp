// Shared by the libFuzzer targets: a scratch folder per process, inputs split into parts, and a
// registry small enough to build without CUDA (the host baseline and a descriptor with one axis of
// every kind), so the option parsers meet every axis kind.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/algorithm.hpp"

namespace mmlab::fuzz {

const Registry& registry();  // fuzz_registry.cpp: eigen and `axes`

inline const std::string& scratch() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/mmlab-fuzz-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir;
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// "rows" and "samples" of one input: the text before and after the first line "--samples--".
inline std::pair<std::string, std::string> split_files(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size), marker = "\n--samples--\n";
  const auto at = text.find(marker);
  if (at == std::string::npos) return {text, ""};
  return {text.substr(0, at + 1), text.substr(at + marker.size())};
}

}  // namespace mmlab::fuzz
