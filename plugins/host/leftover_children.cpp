#include "plugins/host/leftover_children.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>

namespace simprec::plugins {

std::vector<int> end_children_of_this_thread() {
  std::vector<int> pids;
  // Linux lists a thread's children here (CONFIG_PROC_CHILDREN, on in distribution kernels).
  std::ifstream list("/proc/thread-self/children");
  for (int pid = 0; list >> pid;) {
    if (pid > 0) pids.push_back(pid);
  }
  for (const int pid : pids) ::kill(pid, SIGKILL);
  for (const int pid : pids) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  return pids;
}

}  // namespace simprec::plugins
