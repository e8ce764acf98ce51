// A reduction as a GPU kernel's threads perform it (FlashAttention-2's thread_reduce_ and
// Allreduce in utils.h, Triton's tl.sum over an MMA layout, CUTLASS's per-thread partial sums):
// the elements are dealt to `threads` threads in chunks of `chunk` consecutive elements (element
// j to thread (j / chunk) % threads), each thread adds its elements in order, and a butterfly
// combines the threads: at a step of offset o, thread t adds thread t ^ o's value to its own.
// Every lane and butterfly sum of the engine is one of these, with the kernel's layout as data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace simprec::attention {

class LaneReduction {
 public:
  // every_thread: every thread forms its sums at every step (a shuffle all-reduce: each thread
  // ends with the total, and each thread's roundings are the kernel's, as a trace counts them);
  // otherwise only the sums thread 0's result depends on (a reduction into thread 0).
  LaneReduction(int threads, int chunk, std::vector<int> offsets, bool every_thread = false)
      : threads_(threads),
        chunk_(chunk),
        offsets_(std::move(offsets)),
        every_thread_(every_thread) {}

  // The butterfly's offsets from the widest down: threads/2, ..., 2, 1.
  static std::vector<int> offsets_down(int threads);
  // From the narrowest up: 1, 2, ..., threads/2.
  static std::vector<int> offsets_up(int threads);

  int threads() const { return threads_; }
  int chunk() const { return chunk_; }
  int offset(int step) const { return offsets_[step]; }

  // The elements of [0, n) that `thread` holds, in its order, appended to `out`.
  void elements(int thread, int64_t n, std::vector<int64_t>& out) const;

  // Thread 0's value after the butterfly over `values` (one per thread): add(a, b, thread, step)
  // is a + b as `thread` forms it at butterfly step `step` (a its own value, b its partner's).
  template <class Add>
  double combine(std::vector<double> values, Add&& add) const {
    if (every_thread_) {
      std::vector<double> next(values.size());
      for (std::size_t step = 0; step < offsets_.size(); ++step) {
        for (int t = 0; t < threads_; ++t) {
          next[t] = add(values[t], values[t ^ offsets_[step]], t, static_cast<int>(step));
        }
        values.swap(next);
      }
      return values[0];
    }
    return value_of(values, add, 0, static_cast<int>(offsets_.size()));
  }

 private:
  // Thread t's value after `steps` butterfly steps.
  template <class Add>
  double value_of(const std::vector<double>& values, Add& add, int t, int steps) const {
    if (steps == 0) return values[t];
    const int step = steps - 1;
    const double own = value_of(values, add, t, step);
    const double other = value_of(values, add, t ^ offsets_[step], step);
    return add(own, other, t, step);
  }

  int threads_, chunk_;
  std::vector<int> offsets_;
  bool every_thread_;
};

}  // namespace simprec::attention
