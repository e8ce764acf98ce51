// Runs a program in a child process (fork/exec) with a time limit, its stdout and stderr going
// to a file. The child runs in a process group of its own, which is killed once the child has
// ended or outlived the limit: a plugin that hangs, or that started helpers, cannot outlive the
// call (a helper that left the group, with setsid say, is beyond reach).
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
