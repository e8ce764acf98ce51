// Long calls that Ctrl-C can stop. Python runs signal handlers only on the main thread and only
// when it gets control back, so a call that keeps the thread for 30 s keeps KeyboardInterrupt
// waiting as long. Here the work runs on a thread of its own, without the GIL, under a
// CancellationToken (emulation/cancellation.hpp), while the calling thread checks for signals
// every few milliseconds. When a handler raises (KeyboardInterrupt), the token is cancelled; the
// work stops at its next cancellation point (the next item of a parallel loop: an attention
// head, a row of a GEMM), and the handler's exception is raised once the work has stopped, so
// nothing the work uses is freed under it. The C++ core knows nothing of Python.
#pragma once

#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace simprec::python {

// Runs `work` as above; rethrows what it throws, or raises the signal handler's exception.
// Called with the GIL held; `work` must not touch Python objects.
void run_interruptibly(const std::function<void()>& work);

template <class Work>
auto interruptible(Work&& work) -> std::invoke_result_t<Work&> {
  using Result = std::invoke_result_t<Work&>;
  if constexpr (std::is_void_v<Result>) {
    run_interruptibly(work);
  } else {
    std::optional<Result> result;
    run_interruptibly([&] { result.emplace(work()); });
    return std::move(*result);
  }
}

}  // namespace simprec::python
