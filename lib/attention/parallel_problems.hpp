// The thread pool that runs a run's independent problems (batch x heads).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace simprec::attention {

// Runs fn(problem) for every problem on `threads` threads; each problem writes only its own
// slices, so the result does not depend on the thread count.
template <class Fn>
void parallel_problems(int64_t problems, unsigned threads, Fn&& fn) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<int64_t>(threads, problems));
  if (threads <= 1) {
    for (int64_t p = 0; p < problems; ++p) fn(p);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int64_t p = next++; p < problems; p = next++) {
        try {
          fn(p);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace simprec::attention
