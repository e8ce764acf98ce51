#include "emulation/parallel.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

#include "emulation/cancellation.hpp"
#include "emulation/progress.hpp"

namespace simprec {

unsigned resolve_threads(unsigned requested) {
  if (requested > kMaxThreads) {
    throw std::invalid_argument("a thread count of " + std::to_string(requested) +
                                " is above the limit of " + std::to_string(kMaxThreads));
  }
  if (requested > 0) return requested;
  return static_cast<unsigned>(std::clamp(omp_get_max_threads(), 1, int{kMaxThreads}));
}

namespace {

// OpenMP runs a parallel region inside another on one thread unless more than one level may be
// active (the default allows one). A sweep runs its cases in parallel and gives each case the
// cores left over, which needs two levels; more would only oversubscribe.
void allow_two_levels() {
  static const bool raised = [] {
    if (omp_get_max_active_levels() < 2) omp_set_max_active_levels(2);
    return true;
  }();
  (void)raised;
}

// GCC's OpenMP runtime cannot start threads in a child forked after it started its own (the
// child waits forever in its first parallel region: Python's multiprocessing forks so). Such a
// child runs its loops on one thread, with the same results.
std::atomic<pid_t> g_threads_started_in{0};

bool threads_usable() {
  const pid_t self = ::getpid();
  pid_t owner = 0;
  return g_threads_started_in.compare_exchange_strong(owner, self) || owner == self;
}

}  // namespace

namespace detail {

void parallel_for_erased(int64_t count, unsigned threads, void (*call)(void*, int64_t), void* fn) {
  if (count <= 0) return;
  const CancellationToken* token = current_cancellation();
  // Only the outermost loop counts: its items are what a person waiting can follow.
  ProgressMeter* const meter = current_progress();
  if (meter) meter->add_items(count);
  const auto run_item = [&](int64_t i) {
    if (token && token->requested()) throw Cancelled(token->reason());
    {
      const ProgressScope inside(nullptr);
      call(fn, i);
    }
    if (meter) meter->item_done();
  };
  const int team = static_cast<int>(std::min<int64_t>(resolve_threads(threads), count));
  if (team <= 1 || !threads_usable()) {
    for (int64_t i = 0; i < count; ++i) run_item(i);
    return;
  }
  allow_two_levels();
  // An exception must not leave an OpenMP region: each item's is caught, and the lowest
  // failed item's is kept. Items are never skipped below it, so it is the one a single
  // thread would have met first.
  std::atomic<int64_t> first_failed{count};
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (int64_t i = 0; i < count; ++i) {
    if (i > first_failed.load(std::memory_order_relaxed)) continue;
    try {
      const CancellationScope scope(token);
      run_item(i);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (i < first_failed.load(std::memory_order_relaxed)) {
        first_failed.store(i, std::memory_order_relaxed);
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace detail

}  // namespace simprec
