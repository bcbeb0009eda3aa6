// What an algorithm keeps across the runs of one Lab (harness/lab.hpp): the flagship's measured picks
// and the states of the candidates it timed. Each Lab owns a LabStates and frees it with itself (its
// GPU state with it); while a Lab runs a plan its LabStates is the current one (LabScope), and an
// algorithm's hooks reach their own by a key of theirs, whichever hook asks (resolve, supports, an
// engine's run on a worker thread): two Labs in one process keep apart. Outside any Lab's run (a probe,
// a test calling a hook) the process's own. CUDA-free (core/).
#pragma once

#include <map>
#include <memory>
#include <mutex>

namespace mmlab {

class LabStates {
 public:
  // The value kept under `key` (an address of the algorithm's own), made on first use. Thread-safe.
  template <class T>
  T& get(const void* key) {
    const std::lock_guard<std::mutex> hold(lock_);
    std::shared_ptr<void>& kept = kept_[key];
    if (!kept) kept = std::make_shared<T>();
    return *static_cast<T*>(kept.get());
  }
  std::size_t size() const {
    const std::lock_guard<std::mutex> hold(lock_);
    return kept_.size();
  }

 private:
  mutable std::mutex lock_;
  std::map<const void*, std::shared_ptr<void>> kept_;
};

// The LabStates of the Lab whose run is under way (one run at a time in a process: harness/lab.hpp's
// run()), or the process's own.
LabStates& current_lab_states();

// Makes `states` the current one for its lifetime (the previous one after).
class LabScope {
 public:
  explicit LabScope(LabStates& states);
  ~LabScope();
  LabScope(const LabScope&) = delete;
  LabScope& operator=(const LabScope&) = delete;

 private:
  LabStates* previous_;
};

}  // namespace mmlab
