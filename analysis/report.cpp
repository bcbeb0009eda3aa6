#include "analysis/report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/results.hpp"
#include "core/csv.hpp"
#include "core/json.hpp"
#include "core/schema.hpp"

namespace mmlab::analysis {

Field::Field(Col c) : name(column_name(c)), type(kResultColumns[static_cast<std::size_t>(c)].type) {}

void declare(Table& t, const std::vector<Field>& fields) {
  t.fields.clear(), t.types.clear();
  for (const Field& f : fields) t.fields.push_back(f.name), t.types.push_back(column_type_name(f.type));
}

Format parse_format(const std::string& text) {
  if (text == "md" || text == "markdown") return Format::markdown;
  if (text == "csv") return Format::csv;
  if (text == "tsv") return Format::tsv;
  if (text == "json") return Format::json;
  if (text == "latex" || text == "tex") return Format::latex;
  throw AnalysisError("unknown format '" + text + "' (valid: md, latex, json, csv, tsv)");
}

Value::Value(double v) {
  if (std::isfinite(v)) kind = Kind::number, number = v;
}
Value Value::flag(bool b) {
  Value v;
  v.kind = Kind::boolean, v.yes = b;
  return v;
}

namespace {

// A printed cell as a record's field: a number where the whole cell reads as one.
Value from_cell(const std::string& cell) {
  if (cell.empty()) return {};
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end && *end == '\0' && std::isfinite(v) && cell.find_first_of("xX") == std::string::npos) return Value(v);
  return Value(cell);
}

std::string number_text(double v) { return shortest_text(v); }

std::string json_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::none: return "null";
    case Value::Kind::number: return number_text(v.number);
    case Value::Kind::boolean: return v.yes ? "true" : "false";
    case Value::Kind::text: return json_string(v.text);
  }
  return "null";
}

std::string delimited_value(const Value& v, char sep) {
  switch (v.kind) {
    case Value::Kind::none: return "";
    case Value::Kind::number: return number_text(v.number);
    case Value::Kind::boolean: return v.yes ? "true" : "false";
    case Value::Kind::text:
      if (sep == ',') return mmlab::csv_escape(v.text);
      {
        std::string out = v.text;  // TSV: no tab or newline inside a field
        for (char& c : out)
          if (c == '\t' || c == '\n') c = ' ';
        return out;
      }
  }
  return "";
}

// A printed header's names as fields, each once: a name the header repeats is qualified in every
// place by its group, the parenthetical of the nearest column before it that has one ("Min" after
// "Trials (C2070)": "Min (C2070)"), else by its place ("Min 2").
std::vector<std::string> unique_fields(const std::vector<std::string>& header) {
  std::map<std::string, int> count;
  for (const std::string& h : header) ++count[h];
  std::vector<std::string> out;
  std::string group;
  std::map<std::string, int> seen;
  for (const std::string& h : header) {
    const auto open = h.rfind(" ("), close = h.rfind(')');
    if (count[h] == 1 && open != std::string::npos && close == h.size() - 1) group = h.substr(open);
    std::string name = h;
    if (count[h] > 1) name = group.empty() ? h + " " + std::to_string(++seen[h]) : h + group;
    out.push_back(name);
  }
  std::set<std::string> distinct(out.begin(), out.end());
  if (distinct.size() != out.size()) {  // groups that did not tell them apart: by place
    seen.clear();
    for (std::size_t i = 0; i < out.size(); ++i)
      if (count[header[i]] > 1) out[i] = header[i] + " " + std::to_string(++seen[header[i]]);
  }
  return out;
}

// The table's records, or its printed rows read as values.
void records_of(const Table& t, std::vector<std::string>& fields, std::vector<std::vector<Value>>& records) {
  if (!t.fields.empty()) {
    fields = t.fields, records = t.records;
    return;
  }
  fields = unique_fields(t.header);
  for (const auto& r : t.rows) {
    std::vector<Value> rec;
    for (std::size_t i = 0; i < fields.size(); ++i) rec.push_back(from_cell(i < r.size() ? r[i] : ""));
    records.push_back(std::move(rec));
  }
}

}  // namespace

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string scientific(double v, int decimals) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", decimals, v);
  return buf;
}

static std::string latex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '%' || c == '&' || c == '#' || c == '$') out += '\\';
    if (c == '^') {
      out += "\\^{}";
      continue;
    }
    out += c;
  }
  return out;
}

std::string render_all(const std::vector<Table>& tables, Format f) {
  if (tables.size() == 1) return render(tables.front(), f);
  std::string out;
  if (f == Format::markdown || f == Format::latex) {
    for (const Table& t : tables) out += (out.empty() ? "" : "\n") + render(t, f);
    return out;
  }
  if (f == Format::json) {  // one document: an array of the tables
    out = "[";
    for (std::size_t i = 0; i < tables.size(); ++i) {
      std::string one = render(tables[i], f);
      if (!one.empty() && one.back() == '\n') one.pop_back();
      out += (i ? ",\n" : "\n") + one;
    }
    return out + "\n]\n";
  }
  // CSV and TSV: one header, a `table` column naming each record's table, the union of the fields.
  std::vector<std::string> fields = {"table"};
  std::vector<std::vector<std::string>> names(tables.size());
  std::vector<std::vector<std::vector<Value>>> records(tables.size());
  for (std::size_t i = 0; i < tables.size(); ++i) {
    records_of(tables[i], names[i], records[i]);
    for (const std::string& n : names[i])
      if (std::find(fields.begin(), fields.end(), n) == fields.end()) fields.push_back(n);
  }
  Table all;
  all.fields = fields;
  for (std::size_t i = 0; i < tables.size(); ++i)
    for (const auto& rec : records[i]) {
      std::vector<Value> row(fields.size());
      row[0] = Value(tables[i].title);
      for (std::size_t j = 0; j < names[i].size() && j < rec.size(); ++j)
        row[std::size_t(std::find(fields.begin(), fields.end(), names[i][j]) - fields.begin())] = rec[j];
      all.records.push_back(std::move(row));
    }
  return render(all, f);
}

void send(const Table& t, const TableSink& sink) {
  std::vector<std::string> fields;
  std::vector<std::vector<Value>> records;
  records_of(t, fields, records);
  sink(t, fields, records);
}

std::string render(const Table& t, Format f) {
  std::ostringstream os;
  const std::size_t cols = t.header.size();
  if (f == Format::csv || f == Format::tsv || f == Format::json) {
    std::vector<std::string> fields;
    std::vector<std::vector<Value>> records;
    records_of(t, fields, records);
    if (f == Format::json) {
      os << "{\"title\": " << json_string(t.title) << ", \"note\": " << json_string(t.note);
      if (!t.types.empty() && t.types.size() == t.fields.size()) {
        os << ", \"columns\": [";
        for (std::size_t i = 0; i < t.fields.size(); ++i)
          os << (i ? ", " : "") << "{\"name\": " << json_string(t.fields[i]) << ", \"type\": " << json_string(t.types[i])
             << "}";
        os << "]";
      }
      os << ", \"records\": [";
      for (std::size_t r = 0; r < records.size(); ++r) {
        os << (r ? ",\n  {" : "\n  {");
        for (std::size_t i = 0; i < fields.size(); ++i)
          os << (i ? ", " : "") << json_string(fields[i]) << ": " << json_value(i < records[r].size() ? records[r][i] : Value());
        os << "}";
      }
      os << (records.empty() ? "]}\n" : "\n]}\n");
      return os.str();
    }
    const char sep = f == Format::csv ? ',' : '\t';
    for (std::size_t i = 0; i < fields.size(); ++i) os << (i ? std::string(1, sep) : "") << delimited_value(Value(fields[i]), sep);
    os << "\n";
    for (const auto& rec : records) {
      for (std::size_t i = 0; i < fields.size(); ++i)
        os << (i ? std::string(1, sep) : "") << delimited_value(i < rec.size() ? rec[i] : Value(), sep);
      os << "\n";
    }
    return os.str();
  }
  if (f == Format::latex) {
    os << "% " << t.title << "\n\\begin{tabular}{" << std::string(cols, 'l') << "}\n\\hline\n";
    for (std::size_t i = 0; i < cols; ++i) os << (i ? " & " : "") << latex_escape(t.header[i]);
    os << " \\\\\n\\hline\n";
    for (const auto& r : t.rows) {
      for (std::size_t i = 0; i < cols; ++i) os << (i ? " & " : "") << latex_escape(i < r.size() ? r[i] : "");
      os << " \\\\\n";
    }
    os << "\\hline\n\\end{tabular}\n";
    if (!t.note.empty()) os << "% " << t.note << "\n";
    return os.str();
  }
  if (!t.title.empty()) os << "**" << t.title << "**\n\n";
  os << "|";
  for (const auto& h : t.header) os << " " << h << " |";
  os << "\n|";
  for (std::size_t i = 0; i < cols; ++i) os << "---|";
  os << "\n";
  for (const auto& r : t.rows) {
    os << "|";
    for (std::size_t i = 0; i < cols; ++i) os << " " << (i < r.size() ? r[i] : "") << " |";
    os << "\n";
  }
  if (!t.note.empty()) os << "\n" << t.note << "\n";
  return os.str();
}

void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (fs::is_directory(p, ec)) throw AnalysisError(path + ": is a folder; name a file to write");
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) throw AnalysisError(path + ": cannot be written (" + std::strerror(errno) + ")");
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw AnalysisError(path + ": write failed");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw AnalysisError(path + ": cannot be written (" + ec.message() + ")");
  }
}

}  // namespace mmlab::analysis
