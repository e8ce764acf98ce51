// A sign of life for long work on a terminal: a line on stderr, "simprec attention: reference
// 3/8, 12 s", redrawn in place from a thread of its own, from 2 s after the work began until it
// ends, then erased. Only where stderr is a terminal: piped or logged output stays as it was.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "emulation/progress.hpp"

namespace simprec {

class TerminalProgress {
 public:
  // Work that ends sooner shows nothing.
  static constexpr std::chrono::milliseconds kDelay{2000};

  // Shows `meter` under `label` while this object lives, where `enabled` (no --quiet) and stderr
  // is a terminal; otherwise does nothing. `meter` must outlive it.
  TerminalProgress(std::string label, const ProgressMeter& meter, bool enabled);
  // Stops the thread and erases the line, so that what is printed next starts a clean line.
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  // The line as drawn for `reading` after `seconds` (without the carriage return).
  static std::string line(const std::string& label, const ProgressMeter::Reading& reading,
                          double seconds);

 private:
  void show();

  const std::string label_;
  const ProgressMeter& meter_;
  std::mutex mutex_;
  std::condition_variable stop_changed_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace simprec
