// Tables and how they are written: Markdown or LaTeX for people, and for programs JSON, CSV or TSV
// of the table's typed records (numbers as numbers, at full precision), always whole (temp file, then
// rename).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/columns.hpp"

namespace mmlab::analysis {

enum class Format { markdown, csv, latex, json, tsv };
Format parse_format(const std::string& text);  // "md"/"markdown", "csv", "latex"/"tex", "json", "tsv"

// One field of a record: nothing (null), a number, a text or a yes/no.
struct Value {
  enum class Kind { none, number, text, boolean } kind = Kind::none;
  double number = 0;
  std::string text;
  bool yes = false;
  Value() = default;
  Value(double v);  // NaN or an infinity: none
  Value(int v) : Value(double(v)) {}
  Value(long v) : Value(double(v)) {}
  Value(std::size_t v) : Value(double(v)) {}
  Value(const char* s) : kind(Kind::text), text(s) {}
  Value(std::string s) : kind(Kind::text), text(std::move(s)) {}
  static Value flag(bool b);
};

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // provenance and caveats, printed under the table
  // The rows as a program reads them (json, csv, tsv): the fields' names once, then a record a row.
  // Empty: those formats write the printed rows, a cell that reads as a number as a number.
  std::vector<std::string> fields;
  std::vector<std::vector<Value>> records;
  // Each field's type where the table declares them (core/schema.hpp's words: whole, number, choice,
  // text, flag), written with the JSON records as "columns": what a program types them by.
  std::vector<std::string> types;
};

// A field of a table's records: one of the results' columns (its name and type as core/columns.hpp
// lists them) or the table's own (a name and a type). Tables declare their fields with these, so a
// results column keeps its name and type from the CSV through the analysis' records to a DataFrame.
struct Field {
  std::string name;
  ColumnType type;
  Field(Col c);  // NOLINT(google-explicit-constructor): a results column stands for itself
  Field(const char* own, ColumnType t) : name(own), type(t) {}
};
// Sets the table's fields and their types.
void declare(Table& t, const std::vector<Field>& fields);

std::string render(const Table& t, Format f);

// Where a command's tables go as records instead of text (the C API's mmlab_analyze_tables: cli.hpp's
// Session): the table, its fields' names and its records (the same the JSON would hold).
using TableSink =
    std::function<void(const Table&, const std::vector<std::string>&, const std::vector<std::vector<Value>>&)>;
// The table's fields and records, as its JSON would hold them, handed to `sink`.
void send(const Table& t, const TableSink& sink);
// Several tables as one text: read in turn (md, latex); for programs one document, a JSON array of
// the tables, or one CSV / TSV whose `table` column names each record's table (the union of their
// fields, empty where a table has none).
std::string render_all(const std::vector<Table>& tables, Format f);
std::string fixed(double v, int decimals);       // "12.35"; "" for NaN
std::string scientific(double v, int decimals);  // "1.23e-07"; "" for NaN

// Writes the whole text to `path` or nothing: a temporary file beside it, then rename(2).
void write_atomically(const std::string& path, const std::string& text);

}  // namespace mmlab::analysis
