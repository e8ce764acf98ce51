#include "plugins/host/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "plugins/host/plugin_error.hpp"

namespace simprec::plugins {

std::string signal_text(int signal) {
  const char* name = strsignal(signal);
  return "signal " + std::to_string(signal) + " (" + (name ? name : "unknown") + ")";
}

ChildOutcome run_child(const std::filesystem::path& program,
                       const std::vector<std::string>& arguments,
                       const std::filesystem::path& output_file,
                       std::chrono::milliseconds timeout) {
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed (the host may have other threads).
  std::vector<std::string> argv_storage{program.string()};
  argv_storage.insert(argv_storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int output = open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (output < 0) {
    throw PluginError("cannot create " + output_file.string() + ": " + std::strerror(errno));
  }

  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(output);
    throw PluginError(std::string("cannot start the plugin runner: fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, killed as a whole on timeout
    dup2(output, STDOUT_FILENO);
    dup2(output, STDERR_FILENO);
    execv(argv[0], argv.data());
    const char message[] = "simprec: cannot execute the plugin runner\n";
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(127);
  }
  close(output);
  setpgid(pid, pid);  // also from the parent, so the group exists before any kill

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  ChildOutcome outcome;
  for (;;) {
    // Seen ended but left unreaped (WNOWAIT): while the runner is a zombie its pid, and so its
    // process group's id, cannot be taken by another process.
    siginfo_t ended{};
    const int waited = waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOHANG | WNOWAIT);
    if (waited == 0 && ended.si_pid == pid) break;
    if (waited < 0 && errno != EINTR) {
      throw PluginError(std::string("waiting for the plugin runner: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      outcome.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  // Whatever the runner (the plugin) started and left in its group ends with it.
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!outcome.timed_out) {
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace simprec::plugins
