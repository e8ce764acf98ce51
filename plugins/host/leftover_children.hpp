// Processes a plugin started and left behind must not outlive the call that started them.
// Out of process the runner's whole process group is killed once the runner has ended
// (child_process.hpp). In process the plugin's code runs on a thread of its own
// (plugin_thread.hpp), so the children of that thread are the plugin's: they are killed and
// reaped after each step. A child that detached (a double fork, setsid) is beyond both.
#pragma once

#include <string>
#include <vector>

namespace simprec::plugins {

// Kills (SIGKILL) and reaps every child process of the calling thread; returns their pids.
// Reads /proc/thread-self/children; where the kernel lacks it, does nothing.
std::vector<int> end_children_of_this_thread();

}  // namespace simprec::plugins
