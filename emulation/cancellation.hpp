// Stopping long work early from outside it: Python's Ctrl-C (the binding cancels a token while
// the work runs on another thread) and a time limit (`simprec validate --timeout`). The work
// never learns why; it only meets a Cancelled exception at its next cancellation point: before
// each item of a parallel_for, and where a long serial loop calls throw_if_cancelled(). Nothing
// here knows of Python or of the command line.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace simprec {

// What the work throws at a cancellation point once its token is cancelled or past its deadline.
struct Cancelled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CancellationToken {
 public:
  using Clock = std::chrono::steady_clock;

  // `reason` is the message of the Cancelled exception; `deadline`, where given, cancels the
  // token by itself when it has passed; `outer`, where given, cancels it too (a time limit inside
  // work that Ctrl-C may also stop), and then its reason is the message.
  explicit CancellationToken(std::string reason,
                             std::optional<Clock::time_point> deadline = std::nullopt,
                             const CancellationToken* outer = nullptr)
      : reason_(std::move(reason)), deadline_(deadline), outer_(outer) {}
  CancellationToken(const CancellationToken&) = delete;
  CancellationToken& operator=(const CancellationToken&) = delete;

  // From any thread; the work stops at its next cancellation point.
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool requested() const {
    return cancelled_.load(std::memory_order_relaxed) ||
           (deadline_ && Clock::now() >= *deadline_) || (outer_ && outer_->requested());
  }
  const std::string& reason() const {
    return outer_ && outer_->requested() ? outer_->reason() : reason_;
  }

 private:
  const std::string reason_;
  const std::optional<Clock::time_point> deadline_;
  const CancellationToken* const outer_;
  std::atomic<bool> cancelled_{false};
};

// Makes `token` the one that work on this thread answers to, until the scope ends (scopes nest;
// the inner one wins). parallel_for hands the token of the thread that starts a loop on to the
// threads that run its items.
class CancellationScope {
 public:
  explicit CancellationScope(const CancellationToken* token);
  ~CancellationScope();
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

 private:
  const CancellationToken* previous_;
};

// The token of this thread's work; nullptr when none is set.
const CancellationToken* current_cancellation();

// A cancellation point: throws Cancelled(reason) when this thread's token asks to stop.
void throw_if_cancelled();

}  // namespace simprec
