// How far long work has come, for a sign of life on a terminal (lib/progress/terminal_progress.hpp
// shows it; nothing here prints). As with cancellation (emulation/cancellation.hpp), the work
// never knows who watches: a ProgressScope makes a meter the one of the thread's work, every
// parallel_for that work starts outside another loop counts its items on that meter, and the
// stages the work names (progress_stage) restart the count. Loops inside an item are not counted,
// so the count is of the coarse units (attention heads, GEMM rows) that finish in order of time.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace simprec {

class ProgressMeter {
 public:
  struct Reading {
    std::string stage;  // empty until the work names one
    int64_t done = 0;
    int64_t total = 0;  // items of the loops started in this stage so far
  };

  // From any thread.
  void start_stage(std::string_view name);
  void add_items(int64_t count) { total_.fetch_add(count, std::memory_order_relaxed); }
  void item_done() { done_.fetch_add(1, std::memory_order_relaxed); }
  Reading read() const;

 private:
  mutable std::mutex stage_mutex_;
  std::string stage_;
  std::atomic<int64_t> done_{0}, total_{0};
};

// Makes `meter` (or none: nullptr) the one that work on this thread counts on, until the scope
// ends; scopes nest, the inner one wins.
class ProgressScope {
 public:
  explicit ProgressScope(ProgressMeter* meter);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  ProgressMeter* previous_;
};

// The meter of this thread's work; nullptr when none is set.
ProgressMeter* current_progress();

// Names the stage the work of this thread begins ("reference", "baseline"); nothing without a
// meter.
void progress_stage(std::string_view name);

}  // namespace simprec
