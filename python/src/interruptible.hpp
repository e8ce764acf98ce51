// Long calls that Ctrl-C can stop. Python runs signal handlers only on the main thread and only
// when it gets control back, so a call that keeps the thread for 30 s keeps KeyboardInterrupt
// waiting as long. Here the work runs on a thread of its own, without the GIL, under a
// CancellationToken (emulation/cancellation.hpp), while the calling thread checks for signals
// every few milliseconds. When a handler raises (KeyboardInterrupt), the token is cancelled; the
// work stops at its next cancellation point (the next item of a parallel loop: an attention
// head, a row of a GEMM), and the handler's exception is raised once the work has stopped, so
// nothing the work uses is freed under it. The C++ core knows nothing of Python.
// The work counts its progress (emulation/progress.hpp); a call that lasts more than 2 s shows
// it on a line of its own on stderr where stderr is a terminal
// (lib/progress/terminal_progress.hpp), drawn from C++ without the GIL, so that the call costs
// Python nothing.
#pragma once

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace simprec::python {

// Whether long calls show their progress line (simprec.set_progress); on at import.
void set_progress_shown(bool shown);

// Runs `work` as above; rethrows what it throws, or raises the signal handler's exception.
// Called with the GIL held; `work` must not touch Python objects. `progress` false: no progress
// line (work that prints lines of its own, which the line would run into).
void run_interruptibly(const std::function<void()>& work, bool progress = true);

template <class Work>
auto interruptible(Work&& work, bool progress = true) -> std::invoke_result_t<Work&> {
  using Result = std::invoke_result_t<Work&>;
  if constexpr (std::is_void_v<Result>) {
    run_interruptibly(work, progress);
  } else {
    std::optional<Result> result;
    run_interruptibly([&] { result.emplace(work()); }, progress);
    return std::move(*result);
  }
}

}  // namespace simprec::python
