// JSON text for the programs' machine-readable outputs (`mmlab list --format json`, mmlab-analyze
// --format json, the C API's schema): a string literal with its escapes.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace mmlab {

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// The shortest text that reads back as the same double (277.7, not 277.69999999999999): full
// precision, no noise (as JSON for a finite number).
inline std::string shortest_text(double v) {
  char buf[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace mmlab
