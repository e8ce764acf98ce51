#include "lib/experiments/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace simprec::experiments {

Progress::Progress(size_t total, size_t already_done, bool quiet)
    : total_(total),
      done_(already_done),
      started_with_(already_done),
      quiet_(quiet),
      terminal_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {
  if (!quiet_ && !terminal_) {
    std::fprintf(stderr, "simprec run: %zu cases, %zu already done\n", total_, already_done);
  }
}

void Progress::draw() {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const size_t ran = done_ - started_with_;
  const double rate = elapsed > 0 ? ran / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : 0;
  constexpr int kWidth = 30;
  const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu cases  %.2f cases/s  ETA %.0fs ", filled,
               "##############################", kWidth - filled, "", done_, total_, rate, eta);
  std::fflush(stderr);
}

void Progress::case_finished(const std::string& label, double seconds, bool failed) {
  std::lock_guard lock(mutex_);
  ++done_;
  if (quiet_) return;
  if (terminal_) {
    draw();
  } else {
    std::fprintf(stderr, "case %zu/%zu %s in %.2fs: %s\n", done_, total_,
                 failed ? "FAILED" : "done", seconds, label.c_str());
  }
}

void Progress::message(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (quiet_) return;
  std::fprintf(stderr, terminal_ ? "\r\033[K%s\n" : "%s\n", text.c_str());
  if (terminal_) draw();
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (!quiet_ && terminal_) std::fprintf(stderr, "\n");
}

}  // namespace simprec::experiments
