// The one way simprec uses several cores: OpenMP (GCC's libgomp, clang's libomp), behind a
// parallel loop over independent items. Every caller gives each item its own outputs and its own
// random indices, so results are bit-identical for any thread count.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace simprec {

// The threads a call asked for `requested` uses: `requested` itself, or where it is 0 OpenMP's
// default (OMP_NUM_THREADS where set, else the cores this process may run on, which respects
// taskset and a batch scheduler's CPU set).
unsigned resolve_threads(unsigned requested);

namespace detail {
void parallel_for_erased(int64_t count, unsigned threads, void (*call)(void*, int64_t), void* fn);
}

// Runs fn(i) for every i in [0, count) on at most `threads` threads (0: resolve_threads(0)),
// items handed out one at a time as threads free up. Called from inside another parallel_for,
// it runs on threads of its own (a sweep's cases each using the cores left over). If items
// throw, the items after the first failed one that have not started are skipped and the
// exception of the lowest failed item is rethrown: the same error whatever the thread count.
template <class Fn>
void parallel_for(int64_t count, unsigned threads, Fn&& fn) {
  using Callable = std::remove_reference_t<Fn>;
  detail::parallel_for_erased(
      count, threads, [](void* f, int64_t i) { (*static_cast<Callable*>(f))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace simprec
