// Progress of a run on stderr: a bar redrawn in place when stderr is a terminal, plain log lines
// otherwise, nothing when quiet.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace simprec::experiments {

class Progress {
 public:
  Progress(size_t total, size_t already_done, bool quiet);
  void case_finished(const std::string& label, double seconds, bool failed);
  void message(const std::string& text);  // a line of its own
  void finish();

 private:
  void draw();
  size_t total_, done_, started_with_;
  bool quiet_, terminal_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

}  // namespace simprec::experiments
