// Runs a program in a child process (fork/exec) with a time limit, its stdout and stderr going
// to a file. A child that outlives the limit is killed with its whole process group, so a
// plugin that hangs, or that started helpers, cannot outlive the call.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace simprec::plugins {

struct ChildOutcome {
  bool timed_out = false;
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // when a signal ended it (not counting our kill on timeout)

  bool succeeded() const { return !timed_out && signal == 0 && exit_code == 0; }
};

// Throws PluginError when the program cannot be started at all.
ChildOutcome run_child(const std::filesystem::path& program,
                       const std::vector<std::string>& arguments,
                       const std::filesystem::path& output_file, std::chrono::milliseconds timeout);

// "signal 11 (Segmentation fault)".
std::string signal_text(int signal);

}  // namespace simprec::plugins
