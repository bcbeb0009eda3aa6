// Results held in memory: a run's rows and samples files as the text the files would hold, under a name
// (no file on disk). The C API keeps a run made without an output this way (mmlab_run_kept), so that
// Python's compare() hands it to the analysis without writing a temporary file. The lab's CSV reader
// (core/csv.hpp's LineReader, and so the results reader) reads a kept name as it reads a file.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

namespace mmlab::kept_files {

// Keeps `text` under `name` (replacing what was kept under it).
void put(const std::string& name, std::string text);
// The text kept under `name`, or null: no such kept file.
std::shared_ptr<const std::string> find(const std::string& name);
void drop(const std::string& name);
// A new name, unlike any kept before in this process, "<mmlab run N>.csv" (a name no file is given by
// mmlab; its samples are kept under samples_path_for of it).
std::string new_name();

}  // namespace mmlab::kept_files
