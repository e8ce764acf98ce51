#include "lib/progress/terminal_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace simprec {
namespace {

// At most one line is shown at a time: long work inside long work (a Python kernel that calls
// simprec again) leaves the line to the outermost.
std::atomic<bool> g_showing{false};

// Often enough that the seconds count up one by one, rarely enough to cost nothing.
constexpr std::chrono::milliseconds kRedrawInterval{250};

// One write(2) per line: a line is never torn by another thread's output to stderr.
void write_stderr(const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + written, text.size() - written);
    if (n <= 0) return;  // a closed terminal: nothing to show progress on
    written += static_cast<size_t>(n);
  }
}

}  // namespace

TerminalProgress::TerminalProgress(std::string label, const ProgressMeter& meter, bool enabled)
    : label_(std::move(label)), meter_(meter) {
  if (!enabled || !::isatty(STDERR_FILENO) || g_showing.exchange(true)) return;
  try {
    thread_ = std::thread([this] { show(); });
  } catch (...) {
    g_showing.store(false);  // no thread, no progress: the work itself goes on
  }
}

TerminalProgress::~TerminalProgress() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stop_changed_.notify_all();
  thread_.join();
  g_showing.store(false);
}

std::string TerminalProgress::line(const std::string& label, const ProgressMeter::Reading& reading,
                                   double seconds) {
  std::string text = label + ":";
  if (!reading.stage.empty()) text += " " + reading.stage;
  if (reading.total > 0) {
    // A stage that restarted between the two counts' reads can show done > total for a moment.
    text += " " + std::to_string(std::min(reading.done, reading.total)) + "/" +
            std::to_string(reading.total);
  }
  if (text.size() > label.size() + 1) text += ",";
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, " %.0f s", seconds);
  return text + elapsed;
}

void TerminalProgress::show() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  if (stop_changed_.wait_for(lock, kDelay, [this] { return stop_; })) return;
  std::string drawn;
  do {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string now = line(label_, meter_.read(), seconds);
    // Only what changed: a terminal recorded to a file (script(1)) gets a line a second or so.
    // \033[K erases what a longer line drawn before left on the right.
    if (now != drawn) write_stderr("\r" + now + "\033[K");
    drawn = now;
  } while (!stop_changed_.wait_for(lock, kRedrawInterval, [this] { return stop_; }));
  write_stderr("\r\033[K");
}

}  // namespace simprec
