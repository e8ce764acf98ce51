// Running the simprec executable from tests: exit code and captured output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace simprec::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line; its output is what it writes to stdout (add 2>&1 for stderr).
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Runs `simprec <arguments>` through the shell, feeding `input` on stdin.
inline CommandResult run_simprec(const std::string& arguments, const std::string& input = "") {
  // One file per call: ctest runs the tests of a program as parallel processes.
  static int calls = 0;
  const std::string input_file = ::testing::TempDir() + "simprec_cli_input_" +
                                 std::to_string(::getpid()) + "_" + std::to_string(calls++) +
                                 ".txt";
  if (FILE* f = std::fopen(input_file.c_str(), "w")) {
    std::fputs(input.c_str(), f);
    std::fclose(f);
  }
  const CommandResult result =
      run_command(std::string(SIMPREC_CLI) + " " + arguments + " < " + input_file + " 2>&1");
  std::remove(input_file.c_str());
  return result;
}

// An empty folder TempDir()/simprec_NAME, made afresh.
// A new empty folder for one test. The process id keeps two test processes that ctest runs at
// once (each test is its own process) from emptying each other's folder of the same name.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("simprec_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write_file(const std::filesystem::path& file,
                                        const std::string& text) {
  std::ofstream(file) << text;
  return file;
}

// `simprec ARGS` run in `dir` with no input, killed after `seconds`, so that a command that
// hangs fails its test instead of stalling the suite (exit -1: killed by a signal).
inline CommandResult run_simprec_in(const std::filesystem::path& dir, const std::string& arguments,
                                    int seconds = 60) {
  return run_command("cd '" + dir.string() + "' && timeout -s KILL " + std::to_string(seconds) +
                     " " + SIMPREC_CLI + " " + arguments + " </dev/null 2>&1");
}

inline std::string text_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace simprec::testing
