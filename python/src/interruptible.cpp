#include "python/src/interruptible.hpp"

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "emulation/cancellation.hpp"
#include "emulation/progress.hpp"
#include "lib/progress/terminal_progress.hpp"

namespace py = pybind11;

namespace simprec::python {
namespace {

std::atomic<bool> g_progress_shown{true};

}  // namespace

void set_progress_shown(bool shown) {
  g_progress_shown.store(shown, std::memory_order_relaxed);
}

void run_interruptibly(const std::function<void()>& work, bool progress) {
  // How often the calling thread looks for a signal: short against a person's patience, long
  // against the cost of taking the GIL.
  constexpr auto kSignalCheckInterval = std::chrono::milliseconds(20);
  CancellationToken token("interrupted by a signal");
  std::mutex mutex;
  std::condition_variable finished_changed;
  bool finished = false;
  std::exception_ptr error;
  bool signalled = false;  // a handler raised: its exception waits in this thread's state
  ProgressMeter meter;
  const TerminalProgress shown("simprec", meter,
                               progress && g_progress_shown.load(std::memory_order_relaxed));

  PyThreadState* python_thread = PyEval_SaveThread();
  std::thread worker;
  try {
    worker = std::thread([&] {
      {
        const CancellationScope scope(&token);
        const ProgressScope counted(&meter);
        try {
          work();
        } catch (...) {
          error = std::current_exception();
        }
      }
      const std::lock_guard lock(mutex);
      finished = true;
      finished_changed.notify_all();
    });
  } catch (...) {
    PyEval_RestoreThread(python_thread);  // no thread to run the work on
    throw;
  }
  {
    std::unique_lock lock(mutex);
    while (!finished_changed.wait_for(lock, kSignalCheckInterval, [&] { return finished; })) {
      if (signalled) continue;  // the work is stopping; wait for it
      lock.unlock();
      PyEval_RestoreThread(python_thread);
      signalled = PyErr_CheckSignals() != 0;
      python_thread = PyEval_SaveThread();
      if (signalled) token.cancel();
      lock.lock();
    }
  }
  worker.join();
  PyEval_RestoreThread(python_thread);
  if (signalled) throw py::error_already_set();
  if (error) std::rethrow_exception(error);
}

}  // namespace simprec::python
