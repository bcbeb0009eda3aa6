// libmmlab_lab.so: the C API of include/mmlab/lab.h over the Lab and Plan of harness/lab.hpp, the
// commands of harness/cli.cpp and analysis/cli.cpp, and core's reader. Like mmlab's main, a
// composition root: it names the lab's algorithm lists.
#include "mmlab/lab.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/cli.hpp"
#include "analysis/commands.hpp"
#include "analysis/report.hpp"
#include "core/exit_status.hpp"
#include "core/invocation.hpp"
#include "core/json.hpp"
#include "core/kept_files.hpp"
#include "core/results.hpp"
#include "core/revision.hpp"
#include "core/schema.hpp"
#include "distributed/registry.hpp"
#include "harness/cli.hpp"
#include "harness/lab.hpp"
#include "harness/sink.hpp"
#include "runtime/job.hpp"

struct mmlab_lab {
  mmlab::Lab lab{mmlab::lab_registry};
};
struct mmlab_plan {
  mmlab::Plan plan;
};

namespace {

// The process's lab (the commands'): made on first use, never freed (plugins' code stays loaded).
mmlab_lab& default_lab() {
  static mmlab_lab* lab = new mmlab_lab;
  return *lab;
}

void put(const std::string& text, char* out, size_t size) {
  if (!out || size == 0) return;
  std::strncpy(out, text.c_str(), size - 1);
  out[size - 1] = '\0';
}

// One command or run at a time in the process: they share the GPU, the signal handlers and std::cout's
// buffer (swapped for a command's stdout_path), and a caller's threads may call at once (Python's ctypes
// releases the GIL). A second caller waits for the first's to end. (A Lab itself is safe to share.)
std::mutex& commands() {
  static std::mutex m;
  return m;
}
thread_local bool t_in_command = false;  // a command called from inside one (a Python algorithm's body)

// Holds the process's one command, or refuses one called from inside a command on the same thread
// (it would wait for itself).
class OneCommand {
 public:
  OneCommand() {
    if (t_in_command) return;
    lock_ = std::unique_lock<std::mutex>(commands());
    t_in_command = true;
  }
  ~OneCommand() {
    if (lock_.owns_lock()) t_in_command = false;
  }
  bool held() const { return lock_.owns_lock(); }

 private:
  std::unique_lock<std::mutex> lock_;
};
const char* kReentered = "mmlab: a command was called from inside a running command (an algorithm's body calling "
                         "the lab?): commands run one at a time";

// A command with its standard output in a file (where asked), its message copied out, and nothing
// thrown across the boundary.
template <class Command>
int32_t call(Command command, int32_t argc, const char* const* argv, const char* stdout_path, char* message,
             size_t message_size) {
  const OneCommand one;
  put(one.held() ? "" : kReentered, message, message_size);
  if (!one.held()) return MMLAB_BAD_INPUT;
  std::ofstream file;
  std::streambuf* saved = nullptr;
  try {
    if (stdout_path) {
      file.open(stdout_path, std::ios::binary | std::ios::trunc);
      if (!file) {
        put(std::string("cannot write ") + stdout_path, message, message_size);
        return 3;
      }
      std::cout.flush();
      saved = std::cout.rdbuf(file.rdbuf());
    }
    std::vector<std::string> storage(argv, argv + argc);
    std::vector<char*> args;
    for (std::string& a : storage) args.push_back(a.data());
    args.push_back(nullptr);
    std::string error;
    const int status = command(argc, args.data(), error);
    if (saved) std::cout.rdbuf(saved);
    put(error, message, message_size);
    return status;
  } catch (const std::exception& e) {
    if (saved) std::cout.rdbuf(saved);
    put(e.what(), message, message_size);
    return 1;
  }
}

template <class Columns>
std::string columns_json(const Columns& columns) {
  std::string out = "[";
  for (const mmlab::Column& c : columns) {  // a choice column with its values, as core/columns.hpp has them
    std::string values;
    for (std::size_t i = 0; i < c.values.count; ++i)
      values += (values.empty() ? "" : ", ") + mmlab::json_string(c.values.names[i]);
    out += std::string(out.size() > 1 ? ", " : "") + "{\"name\": " + mmlab::json_string(c.name) +
           ", \"type\": \"" + mmlab::column_type_name(c.type) + "\", \"unit\": " + mmlab::json_string(c.unit) +
           (c.type == mmlab::ColumnType::choice
                ? ", \"values\": [" + values + "], \"open\": " + (c.values.open ? "true" : "false")
                : std::string()) +
           "}";
  }
  return out + "]";
}

// {"size": sizeof, "fields": {name: offset}} of one of plugin.h's structs, for the Python package's
// test of its ctypes layouts (tests/python/test_package.py).
#define MMLAB_LAYOUT_FIELD(T, f) (std::string("\"" #f "\": ") + std::to_string(offsetof(T, f)))
template <class T>
std::string layout(const char* name, std::initializer_list<std::string> fields) {
  std::string out = std::string("\"") + name + "\": {\"size\": " + std::to_string(sizeof(T)) + ", \"fields\": {";
  bool first = true;
  for (const std::string& f : fields) out += (first ? "" : ", ") + f, first = false;
  return out + "}}";
}

// Whatever a call throws, as the commands' exit statuses (core/exit_status.hpp).
template <class Work>
int32_t guarded(Work work, char* message, size_t message_size) {
  put("", message, message_size);
  try {
    return work();
  } catch (const std::exception& e) {
    put(e.what(), message, message_size);
    return mmlab::exit_status_of(e);
  }
}

// A caller's sink (mmlab_row_sink): each row's cells as they were made (a number as the number, never
// its text parsed again).
class CallerSink : public mmlab::RowSink {
 public:
  explicit CallerSink(const mmlab_row_sink& sink) : sink_(sink) {}
  void samples(const std::vector<mmlab::Row>& lines) override {
    for (const mmlab::Row& line : lines) send(MMLAB_SAMPLES, line);
  }
  void row(const mmlab::Row& row) override { send(MMLAB_RESULTS, row); }

  void send(int32_t table, const mmlab::Row& row) {
    cells_.assign(row.size(), mmlab_value{MMLAB_EMPTY, nullptr, 0});
    for (std::size_t i = 0; i < row.size(); ++i) {
      const mmlab::Cell& c = row[i];
      if (c.kind == mmlab::Cell::Kind::number)
        cells_[i].kind = MMLAB_NUMBER, cells_[i].number = c.number;
      else if (c.kind == mmlab::Cell::Kind::text && !c.text.empty())
        cells_[i].kind = MMLAB_TEXT, cells_[i].text = c.text.c_str();
    }
    if (sink_.row) sink_.row(sink_.user, table, cells_.data(), int32_t(cells_.size()));
  }

  // A results row as the reader read it (mmlab_read): each numeric column's number as the reader read it
  // (Result::numbers), never its text again; the rest as the file holds them.
  void send_result(const mmlab::Result& r) {
    cells_.assign(mmlab::kResultColumns.size(), mmlab_value{MMLAB_EMPTY, nullptr, 0});
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      mmlab_value& v = cells_[i];
      if (r.numbers[i]) {
        v.kind = MMLAB_NUMBER, v.number = *r.numbers[i];
        continue;
      }
      if (mmlab::numeric_column(mmlab::kResultColumns[i].name)) continue;
      const auto it = r.fields.find(mmlab::kResultColumns[i].name);
      if (it != r.fields.end() && !it->second.empty()) v.kind = MMLAB_TEXT, v.text = it->second.c_str();
    }
    if (sink_.row) sink_.row(sink_.user, MMLAB_RESULTS, cells_.data(), int32_t(cells_.size()));
  }

  // A samples row read from a file (mmlab_read: text, as the file holds it), its cells in `columns'`
  // order, each number column's read as a number (here, its one reading); one that is not a number is
  // an error naming `where`.
  template <class Columns>
  void send_read(int32_t table, const mmlab::CsvRow& row, const Columns& columns, const std::string& where) {
    cells_.assign(row.size(), mmlab_value{MMLAB_EMPTY, nullptr, 0});
    std::size_t i = 0;
    for (const mmlab::Column& c : columns) {
      if (i == row.size()) break;
      const std::string& text = row[i];
      mmlab_value& v = cells_[i++];
      if (text.empty()) continue;
      if (c.type == mmlab::ColumnType::whole || c.type == mmlab::ColumnType::number) {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && !*end) {
          v.kind = MMLAB_NUMBER, v.number = x;
          continue;
        }
        throw mmlab::AnalysisError(where + ": column '" + c.name + "': '" + text + "' is not a number");
      }
      v.kind = MMLAB_TEXT, v.text = text.c_str();
    }
    if (sink_.row) sink_.row(sink_.user, table, cells_.data(), int32_t(cells_.size()));
  }

 private:
  const mmlab_row_sink& sink_;
  std::vector<mmlab_value> cells_;
};

// A caller's table sink (mmlab_table_sink) as the analysis' TableSink: each table with its number, then
// its records, a flag as the number 1 or 0.
class CallerTables {
 public:
  explicit CallerTables(const mmlab_table_sink& sink)
      : sink_(sink),
        tables_([this](const mmlab::analysis::Table& t, const std::vector<std::string>& fields,
                       const std::vector<std::vector<mmlab::analysis::Value>>& records) { send(t, fields, records); }) {}
  const mmlab::analysis::TableSink& tables() const { return tables_; }

 private:
  void send(const mmlab::analysis::Table& t, const std::vector<std::string>& fields,
            const std::vector<std::vector<mmlab::analysis::Value>>& records) {
    using Kind = mmlab::analysis::Value::Kind;
    std::vector<const char*> names, types;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      names.push_back(fields[i].c_str());
      types.push_back(t.types.size() == fields.size() ? t.types[i].c_str() : "");
    }
    const int32_t table = count_++;
    if (sink_.table) sink_.table(sink_.user, table, t.title.c_str(), t.note.c_str(), names.data(), types.data(),
                                 int32_t(names.size()));
    for (const auto& record : records) {
      cells_.assign(record.size(), mmlab_value{MMLAB_EMPTY, nullptr, 0});
      for (std::size_t i = 0; i < record.size(); ++i) {
        const mmlab::analysis::Value& v = record[i];
        if (v.kind == Kind::number || v.kind == Kind::boolean)
          cells_[i].kind = MMLAB_NUMBER, cells_[i].number = v.kind == Kind::number ? v.number : double(v.yes);
        else if (v.kind == Kind::text)
          cells_[i].kind = MMLAB_TEXT, cells_[i].text = v.text.c_str();
      }
      if (sink_.row) sink_.row(sink_.user, table, cells_.data(), int32_t(cells_.size()));
    }
  }
  const mmlab_table_sink& sink_;
  mmlab::analysis::TableSink tables_;
  int32_t count_ = 0;
  std::vector<mmlab_value> cells_;
};

std::string text_or_empty(const char* s) { return s ? s : ""; }

}  // namespace

extern "C" {

MMLAB_PLUGIN_EXPORT int32_t mmlab_lab_api_version(void) { return MMLAB_LAB_API_VERSION; }

MMLAB_PLUGIN_EXPORT const char* mmlab_version(void) { return mmlab::git_revision(); }

MMLAB_PLUGIN_EXPORT int32_t mmlab_catalog(mmlab_lab* lab, mmlab_text_put put, void* context, char* message,
                                          size_t message_size) {
  return guarded(
      [&] {
        if (!lab || !put) throw mmlab::UsageError("mmlab_catalog: a lab and a put function");
        const auto catalog = lab->lab.catalog();  // as it is now: another thread may add algorithms after
        std::ostringstream os;
        mmlab::list_json(catalog->registry.all(), os);
        put(context, os.str().c_str());
        return int32_t(MMLAB_DONE);
      },
      message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_read_params(mmlab_lab* lab, const char* algorithm, const char* text, mmlab_text_put put,
                                         void* context, char* message, size_t message_size) {
  return guarded(
      [&] {
        if (!lab || !algorithm || !text || !put)
          throw mmlab::UsageError("mmlab_read_params: a lab, an algorithm, a text and a put function");
        const auto catalog = lab->lab.catalog();
        const mmlab::Algorithm* a = catalog->registry.find(algorithm);
        if (!a) throw mmlab::UsageError(std::string("mmlab_read_params: no algorithm '") + algorithm + "' in this lab");
        std::string out = "{";
        const mmlab::Params read = mmlab::read_params(*a, "", text);
        for (const auto& [axis, value] : read.values())
          out += (out.size() > 1 ? ", " : "") + mmlab::json_string(axis) + ": " + mmlab::json_string(value);
        put(context, (out + "}").c_str());
        return int32_t(MMLAB_DONE);
      },
      message, message_size);
}

MMLAB_PLUGIN_EXPORT mmlab_lab* mmlab_lab_new(char* message, size_t message_size) {
  mmlab_lab* lab = nullptr;
  guarded([&] { return lab = new mmlab_lab, 0; }, message, message_size);
  return lab;
}

MMLAB_PLUGIN_EXPORT void mmlab_lab_free(mmlab_lab* lab) {
  if (lab != &default_lab()) delete lab;
}

MMLAB_PLUGIN_EXPORT mmlab_lab* mmlab_lab_default(void) { return &default_lab(); }

MMLAB_PLUGIN_EXPORT mmlab_plan* mmlab_plan_new(mmlab_lab* lab, const char* experiment, char* message,
                                               size_t message_size) {
  mmlab_plan* plan = nullptr;
  guarded(
      [&] {
        if (!lab) throw mmlab::UsageError("mmlab_plan_new: no lab");
        auto made = std::make_unique<mmlab_plan>(mmlab_plan{mmlab::Plan(lab->lab)});
        if (experiment) made->plan.experiment(experiment);
        plan = made.release();
        return 0;
      },
      message, message_size);
  return plan;
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_plan_set(mmlab_plan* plan, const char* key, const char* value, char* message,
                                           size_t message_size) {
  return guarded(
      [&] {
        if (!plan || !key || !value) throw mmlab::UsageError("mmlab_plan_set: a plan, a key and a value");
        plan->plan.set(key, value);
        return 0;
      },
      message, message_size);
}

MMLAB_PLUGIN_EXPORT void mmlab_plan_free(mmlab_plan* plan) { delete plan; }

namespace {

// A run's rows and samples as the text its files would hold (each line as CsvFiles writes it), kept in
// memory under a name when the run ends (core/kept_files.hpp).
class KeptSink : public mmlab::RowSink {
 public:
  KeptSink()
      : name_(mmlab::kept_files::new_name()),
        rows_(mmlab::csv_line(mmlab::result_columns())),
        samples_(mmlab::csv_line(mmlab::sample_columns())) {}
  void samples(const std::vector<mmlab::Row>& lines) override {
    for (const mmlab::Row& line : lines) samples_ += mmlab::csv_line(mmlab::csv_row(line));
  }
  void row(const mmlab::Row& row) override { rows_ += mmlab::csv_line(mmlab::csv_row(row)); }
  // The rows kept (its samples under samples_path_for of the name); the name.
  const std::string& keep() {
    mmlab::kept_files::put(mmlab::samples_path_for(name_), std::move(samples_));
    mmlab::kept_files::put(name_, std::move(rows_));
    return name_;
  }

 private:
  std::string name_, rows_, samples_;
};

}  // namespace

namespace {

// mmlab_run's and mmlab_run_kept's: the caller's sink (where given) after `kept` (where given).
int32_t run_plan(mmlab_lab* lab, const mmlab_plan* plan, const mmlab_row_sink* sink, KeptSink* kept, char* message,
                 size_t message_size) {
  const OneCommand one;
  put(one.held() ? "" : kReentered, message, message_size);
  if (!one.held()) return MMLAB_BAD_INPUT;
  return guarded(
      [&] {
        if (!lab || !plan || &plan->plan.lab() != &lab->lab)
          throw mmlab::UsageError("mmlab_run: a lab and a plan of that lab's");
        std::optional<CallerSink> caller;
        if (sink) caller.emplace(*sink);
        mmlab::RowTee tee;  // a row the caller sees is kept
        tee.add(kept);
        if (caller) tee.add(&*caller);
        try {
          return mmlab::run(plan->plan, kept || caller ? &tee : nullptr);
        } catch (const mmlab::UsageError&) {
          throw;
        } catch (const std::exception&) {  // the other ranks may be waiting in a collective
          if (mmlab::job().size > 1) mmlab::abort_job(1);
          throw;
        }
      },
      message, message_size);
}

}  // namespace

MMLAB_PLUGIN_EXPORT int32_t mmlab_run(mmlab_lab* lab, const mmlab_plan* plan, const mmlab_row_sink* sink,
                                      char* message, size_t message_size) {
  return run_plan(lab, plan, sink, nullptr, message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_run_kept(mmlab_lab* lab, const mmlab_plan* plan, const mmlab_row_sink* sink,
                                           char* name, size_t name_size, char* message, size_t message_size) {
  put("", name, name_size);
  KeptSink kept;
  const int32_t status = run_plan(lab, plan, sink, &kept, message, message_size);
  if (status != MMLAB_BAD_INPUT) put(kept.keep(), name, name_size);  // an interrupted run's rows too
  return status;
}

MMLAB_PLUGIN_EXPORT void mmlab_kept_free(const char* name) {
  if (name) mmlab::kept_files::drop(name), mmlab::kept_files::drop(mmlab::samples_path_for(name));
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_read(mmlab_lab* lab, const char* path, const mmlab_row_sink* sink, char* message,
                                       size_t message_size) {
  (void)lab;  // the reader needs no algorithms; the lab is the handle every call is made on
  return guarded(
      [&] {
        if (!path || !sink) throw mmlab::UsageError("mmlab_read: a path and a sink");
        CallerSink caller(*sink);
        for (const mmlab::Result& r : mmlab::load_results({path}, false)) caller.send_result(r);
        const std::string samples = mmlab::samples_path_for(path);
        const auto kept = mmlab::kept_files::find(samples);
        if (!samples.empty() && (kept ? !kept->empty() : std::ifstream(samples).peek() != std::ifstream::traits_type::eof())) {
          // An older file's columns are a part of today's: each cell to its column, the rest empty.
          const mmlab::CsvTable table = mmlab::read_csv(samples);
          std::vector<std::size_t> at;  // the file's column of each of today's (npos: none)
          for (const std::string& name : mmlab::sample_columns())
            at.push_back(std::size_t(std::find(table.header.begin(), table.header.end(), name) - table.header.begin()));
          for (const std::string& name : table.header)
            if (!mmlab::sample_column(name))
              throw mmlab::AnalysisError(samples + ": column '" + name + "' is not one of the samples schema's");
          mmlab::CsvRow line;
          for (std::size_t i = 0; i < table.rows.size(); ++i) {
            line.clear();
            for (std::size_t c : at) line.push_back(c < table.rows[i].size() ? table.rows[i][c] : std::string());
            caller.send_read(MMLAB_SAMPLES, line, mmlab::kSampleColumns, samples + ": row " + std::to_string(i + 1));
          }
        }
        return 0;
      },
      message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_command(int32_t argc, const char* const* argv, const char* stdout_path,
                                          char* message, size_t message_size) {
  return call([](int n, char** v, std::string& error) { return mmlab::cli(default_lab().lab, n, v, &error); },
              argc, argv, stdout_path, message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_interrupted(void) { return mmlab::interrupted() ? 1 : 0; }

MMLAB_PLUGIN_EXPORT int32_t mmlab_analyze(int32_t argc, const char* const* argv, const char* stdout_path,
                                          char* message, size_t message_size) {
  return call(
      [](int n, char** v, std::string& error) {
        mmlab::analysis::Session session;
        const int status = mmlab::analysis::cli(n, v, &session);
        error = session.error;
        return status;
      },
      argc, argv, stdout_path, message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_analyze_tables(int32_t argc, const char* const* argv, const mmlab_table_sink* sink,
                                                 char* message, size_t message_size) {
  if (!sink) {
    put("mmlab_analyze_tables: no sink", message, message_size);
    return MMLAB_BAD_INPUT;
  }
  CallerTables caller(*sink);
  const mmlab::analysis::TableSink& tables = caller.tables();
  std::vector<const char*> args(argv, argv + argc);
  args.push_back("--format");
  args.push_back("json");
  return call(
      [&](int n, char** v, std::string& error) {
        mmlab::analysis::Session session;  // the tables to the sink, no text
        session.tables = &tables;
        const int status = mmlab::analysis::cli(n, v, &session);
        error = session.error;
        return status;
      },
      int32_t(args.size()), args.data(), nullptr, message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_read_table(const char* path, const mmlab_table_sink* sink, char* message,
                                             size_t message_size) {
  return guarded(
      [&] {
        if (!path || !sink) throw mmlab::UsageError("mmlab_read_table: a path and a sink");
        CallerTables caller(*sink);
        mmlab::analysis::send(mmlab::analysis::records(path), caller.tables());
        return int32_t(MMLAB_DONE);
      },
      message, message_size);
}

MMLAB_PLUGIN_EXPORT void mmlab_compare_defaults(mmlab_compare_options* options) {
  if (!options) return;
  static const mmlab::analysis::CompareOptions kDefaults;  // the command's defaults, written once there
  *options = mmlab_compare_options{};
  options->baseline = "";
  options->run = kDefaults.run.c_str();
  options->level = kDefaults.level, options->resamples = kDefaults.resamples, options->seed = kDefaults.seed;
  options->margin = kDefaults.margin;
  options->family = kDefaults.family.c_str(), options->metric = kDefaults.metric.c_str();
  options->cycles = kDefaults.cycles, options->across_runs = kDefaults.across_runs;
  options->baseline_scope = "";
  options->bad_samples = mmlab::analysis::kBadSamplesNames[0];
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_compare(const char* const* files, int32_t file_count,
                                          const mmlab_compare_options* options, const mmlab_table_sink* sink,
                                          char* message, size_t message_size) {
  return guarded(
      [&] {
        if (!options || !sink || file_count < 0 || (file_count > 0 && !files))
          throw mmlab::UsageError("mmlab_compare: files, options and a sink");
        mmlab::analysis::CompareOptions o;
        o.baseline = text_or_empty(options->baseline);
        o.run = text_or_empty(options->run);
        for (int32_t i = 0; i < options->size_count; ++i) o.sizes.push_back(text_or_empty(options->sizes[i]));
        o.level = options->level, o.resamples = options->resamples, o.seed = options->seed;
        o.margin = options->margin;
        o.family = text_or_empty(options->family), o.metric = text_or_empty(options->metric);
        o.cycles = options->cycles != 0, o.across_runs = options->across_runs != 0;
        if (const std::string scope = text_or_empty(options->baseline_scope); !scope.empty())
          o.baseline_scope = mmlab::analysis::scope_option(scope, "compare: --baseline-scope");
        mmlab::analysis::check(o);
        const mmlab::BadSamples bad = mmlab::analysis::bad_samples_option(text_or_empty(options->bad_samples));
        const std::vector<std::string> paths(files, files + file_count);
        CallerTables caller(*sink);
        mmlab::analysis::send(mmlab::analysis::compare(mmlab::load_results(paths, true, bad), o), caller.tables());
        return int32_t(MMLAB_DONE);
      },
      message, message_size);
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_lab_add_algorithms(mmlab_lab* lab, const mmlab_plugin_info* info,
                                                     const char* source, const char* hash, char* message,
                                                     size_t message_size) {
  const int32_t status = guarded(
      [&] {
        if (!lab) throw mmlab::UsageError("mmlab_lab_add_algorithms: no lab");
        lab->lab.add_plugin(mmlab::Plugin::adopt(info, source ? source : "memory", hash ? hash : ""));
        return 0;
      },
      message, message_size);
  return status == 0 ? 0 : 2;
}

MMLAB_PLUGIN_EXPORT int32_t mmlab_add_algorithms(const mmlab_plugin_info* info, const char* source,
                                                 const char* hash, char* message, size_t message_size) {
  return mmlab_lab_add_algorithms(&default_lab(), info, source, hash, message, message_size);
}

MMLAB_PLUGIN_EXPORT const char* mmlab_layouts_json(void) {
#define F MMLAB_LAYOUT_FIELD
  static const std::string json =
      "{" + layout<mmlab_problem>("mmlab_problem", {F(mmlab_problem, m), F(mmlab_problem, n), F(mmlab_problem, k)}) +
      ", " + layout<mmlab_param>("mmlab_param", {F(mmlab_param, name), F(mmlab_param, value), F(mmlab_param, number)}) + ", " +
      layout<mmlab_params>("mmlab_params", {F(mmlab_params, variant), F(mmlab_params, values), F(mmlab_params, count)}) +
      ", " + layout<mmlab_variant>("mmlab_variant", {F(mmlab_variant, name), F(mmlab_variant, summary)}) + ", " +
      layout<mmlab_axis>("mmlab_axis", {F(mmlab_axis, name), F(mmlab_axis, kind), F(mmlab_axis, description),
                                        F(mmlab_axis, default_value), F(mmlab_axis, values), F(mmlab_axis, value_count)}) +
      ", " +
      layout<mmlab_algorithm>("mmlab_algorithm",
                              {F(mmlab_algorithm, name), F(mmlab_algorithm, summary), F(mmlab_algorithm, backend),
                               F(mmlab_algorithm, variants), F(mmlab_algorithm, variant_count), F(mmlab_algorithm, axes),
                               F(mmlab_algorithm, axis_count), F(mmlab_algorithm, supports),
                               F(mmlab_algorithm, workspace_bytes), F(mmlab_algorithm, run)}) +
      ", " +
      layout<mmlab_plugin_info>("mmlab_plugin_info",
                                {F(mmlab_plugin_info, abi_version), F(mmlab_plugin_info, name),
                                 F(mmlab_plugin_info, algorithms), F(mmlab_plugin_info, algorithm_count)}) +
      ", " + layout<mmlab_value>("mmlab_value", {F(mmlab_value, kind), F(mmlab_value, text), F(mmlab_value, number)}) +
      ", " + layout<mmlab_row_sink>("mmlab_row_sink", {F(mmlab_row_sink, user), F(mmlab_row_sink, row)}) + ", " +
      layout<mmlab_table_sink>("mmlab_table_sink",
                               {F(mmlab_table_sink, user), F(mmlab_table_sink, table), F(mmlab_table_sink, row)}) +
      ", " +
      layout<mmlab_compare_options>(
          "mmlab_compare_options",
          {F(mmlab_compare_options, baseline), F(mmlab_compare_options, run), F(mmlab_compare_options, sizes),
           F(mmlab_compare_options, size_count), F(mmlab_compare_options, level), F(mmlab_compare_options, resamples),
           F(mmlab_compare_options, seed), F(mmlab_compare_options, margin), F(mmlab_compare_options, family),
           F(mmlab_compare_options, metric), F(mmlab_compare_options, cycles), F(mmlab_compare_options, across_runs),
           F(mmlab_compare_options, baseline_scope), F(mmlab_compare_options, bad_samples)}) +
      "}";
#undef F
  return json.c_str();
}
#undef MMLAB_LAYOUT_FIELD

MMLAB_PLUGIN_EXPORT const char* mmlab_schema_json(void) {
  static const std::string json = std::string("{\"version\": ") + mmlab::json_string(mmlab::kSchemaVersion) +
                                  ", \"results\": " + columns_json(mmlab::kResultColumns) +
                                  ", \"samples\": " + columns_json(mmlab::kSampleColumns) + "}";
  return json.c_str();
}

}  // extern "C"
