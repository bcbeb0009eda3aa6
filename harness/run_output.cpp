#include "harness/run_output.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <random>

#include "core/schema.hpp"
#include "harness/progress.hpp"
#include "harness/record.hpp"
#include "harness/resume.hpp"

namespace mmlab {

namespace {

// A run's id, unique across the runs of a process (a counter: runs called in a loop or from threads
// within one second), its processes (the pid) and the pids a host reuses (the time, and random bits
// for processes of other hosts or containers that share a file): seconds-pid-counter-random, in hex.
std::string new_session() {
  static std::atomic<unsigned> runs{0};
  static const unsigned nonce = std::random_device{}() & 0xffffu;
  char session[80];
  std::snprintf(session, sizeof session, "%lx-%d-%x%04x", long(std::time(nullptr)), int(getpid()), runs++, nonce);
  return session;
}

}  // namespace

RunOutput::RunOutput(const RunPlan& plan, const DeviceInfo& device, RowSink* sink)
    : plan_(plan), device_(device), sink_(sink), session_(new_session()) {}

std::set<std::string> RunOutput::open() {
  const bool writes = !plan_.dry_run && !plan_.output.empty();
  if (writes) {
    const auto numbers = [](const CsvRow& header) {
      return [&header](const CsvRow& row, const std::string& where) { check_existing_row(header, row, where); };
    };
    files_.emplace(plan_.output, plan_.samples_output, plan_.overwrite ? OpenMode::overwrite : OpenMode::append,
                   numbers(result_columns()), numbers(sample_columns()));
    rows_.add(&*files_);
  }
  rows_.add(sink_);  // after the files: a row the caller sees is on disk
  std::set<std::string> done;
  if (plan_.resume) done = recorded_keys(plan_);  // a dry run's too: what is left to run
  if (files_) files_->open_samples();
  if (plan_.resume && files_) record_in_flight(done);
  return done;
}

// The configurations being prepared or timed, named in <output>.inflight while they run, so that a
// job that ends inside one (a library's abort, a crash, or a kill from outside) leaves word of it:
// --resume runs such a configuration once more, marked as a second try, and records one that a job
// ended inside on its second try as a failed row with that reason, then goes on (an experiment's
// script reruns the job with --resume until it completes).
void RunOutput::mark_in_flight(const std::vector<const Configuration*>& which) {
  if (!files_) return;
  std::vector<std::pair<std::string, bool>> keys;
  for (const Configuration* c : which) keys.emplace_back(c->key(), retried_.count(c->key()) > 0);
  files_->mark_in_flight(keys);
}

void RunOutput::clear_in_flight() {
  if (files_) files_->clear_in_flight();
}

void RunOutput::record_in_flight(std::set<std::string>& done) {
  const CsvFiles::InFlight left = files_->read_in_flight();
  retried_.insert(left.once.begin(), left.once.end());  // run again, as a second try
  for (std::size_t i = 0; i < plan_.configurations.size(); ++i) {
    const Configuration& cfg = plan_.configurations[i];
    if (!left.twice.count(cfg.key()) || done.count(cfg.key())) continue;
    Outcome o;
    o.status = Status::failed;
    o.reason = "two jobs ended while this configuration ran (" + std::to_string(left.named) +
               " in flight the second time: an abort or crash, in a library or the lab); recorded by --resume";
    emit(make_row(session_ + "-inflight-" + std::to_string(i), plan_, device_, cfg, o));
    count(Status::failed);
    done.insert(cfg.key());
    std::fprintf(stderr, "mmlab: recorded as failed (two jobs ended inside it): %s\n", describe(cfg).c_str());
  }
  files_->clear_in_flight();
}

void RunOutput::emit(const Row& row, const std::vector<Row>& lines) {
  rows_.samples(lines);
  rows_.row(row);
}

// Samples first: a row implies its samples are complete.
void RunOutput::record(std::size_t index, const Configuration& cfg, const Outcome& o, bool samples) {
  std::vector<Row> lines;  // in sample_columns()' order
  if (samples && !o.samples.empty()) {
    const bool host = o.host_samples.size() == o.samples.size();
    for (std::size_t t = 0; t < o.samples.size(); ++t) {
      const ClockSample* c = t < o.clocks.size() ? &o.clocks[t] : nullptr;
      lines.push_back({Cell::of_text(run_id(index)), Cell::of_whole((long long)t), Cell::of_number(o.samples[t]),
                       c && c->sm_mhz > 0 ? Cell::of_number(c->sm_mhz, 6) : Cell{},
                       host ? Cell::of_number(o.host_samples[t]) : Cell{},
                       c && c->energy_j >= 0 ? Cell::of_number(c->energy_j, 6) : Cell{}});
    }
  }
  emit(make_row(run_id(index), plan_, device_, cfg, o), lines);
}

std::string RunOutput::where() const {
  return plan_.output.empty() ? std::string("the caller's sink") : plan_.output;
}

}  // namespace mmlab
