// The one way simprec uses several cores: OpenMP (GCC's libgomp, clang's libomp), behind a
// parallel loop over independent items. Every caller gives each item its own outputs and its own
// random indices, so results are bit-identical for any thread count.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace simprec {

// The most threads a call may ask for: more than the cores of any machine simprec runs on, and
// few enough for the OpenMP runtime to start (asked for 100000, GCC's ends the process). Counts
// a user gives (--threads, -j, threads=) are checked against it where they are read, so that
// the refusal names the option; OMP_NUM_THREADS, which may be set for other programs, is
// clamped to it.
inline constexpr unsigned kMaxThreads = 1024;

// The threads a call asked for `requested` uses: `requested` itself, or where it is 0 OpenMP's
// default (OMP_NUM_THREADS where set, at most kMaxThreads, else the cores this process may run
// on, which respects taskset and a batch scheduler's CPU set). Throws std::invalid_argument
// for a request above kMaxThreads, which no caller should pass on.
unsigned resolve_threads(unsigned requested);

namespace detail {
void parallel_for_erased(int64_t count, unsigned threads, void (*call)(void*, int64_t), void* fn);
}

// Runs fn(i) for every i in [0, count) on at most `threads` threads (0: resolve_threads(0)),
// items handed out one at a time as threads free up. Called from inside another parallel_for,
// it runs on threads of its own (a sweep's cases each using the cores left over). If items
// throw, the items after the first failed one that have not started are skipped and the
// exception of the lowest failed item is rethrown: the same error whatever the thread count.
// Each item is a cancellation point (emulation/cancellation.hpp): once the token of the thread
// that started the loop asks to stop, items not yet started throw Cancelled instead of running,
// and items run under that token, so that loops and checks inside them answer to it too.
template <class Fn>
void parallel_for(int64_t count, unsigned threads, Fn&& fn) {
  using Callable = std::remove_reference_t<Fn>;
  detail::parallel_for_erased(
      count, threads, [](void* f, int64_t i) { (*static_cast<Callable*>(f))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace simprec
