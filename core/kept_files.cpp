#include "core/kept_files.hpp"

#include <atomic>
#include <map>
#include <mutex>

namespace mmlab::kept_files {

namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<const std::string>>& kept() {
  static std::map<std::string, std::shared_ptr<const std::string>> files;
  return files;
}

}  // namespace

void put(const std::string& name, std::string text) {
  auto file = std::make_shared<std::string>(std::move(text));  // a reader holding the last text keeps it
  const std::lock_guard<std::mutex> hold(lock());
  kept()[name] = std::move(file);
}

std::shared_ptr<const std::string> find(const std::string& name) {
  const std::lock_guard<std::mutex> hold(lock());
  const auto it = kept().find(name);
  return it == kept().end() ? nullptr : it->second;
}

void drop(const std::string& name) {
  const std::lock_guard<std::mutex> hold(lock());
  kept().erase(name);
}

std::string new_name() {
  static std::atomic<unsigned long> count{0};
  return "<mmlab run " + std::to_string(++count) + ">.csv";
}

}  // namespace mmlab::kept_files
