// --threads (and -j) for every command that has it: 0 (every core) to kMaxThreads, read by
// limits::parse_integer rather than by CLI11, so that a count the OpenMP runtime could not start
// (it ends the process when asked for 100000) is refused with the value and the range first.
#pragma once

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

#include "emulation/parallel.hpp"
#include "lib/cli/command.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::cli {

// `names`: "--threads" or "--threads,-j".
inline CLI::Option* add_threads_option(CLI::App& command, unsigned& threads,
                                       const std::string& names, const std::string& description) {
  return command.add_option_function<std::string>(
      names,
      [&threads](const std::string& text) {
        try {
          threads = static_cast<unsigned>(limits::parse_integer(text, 0, kMaxThreads, "--threads"));
        } catch (const std::invalid_argument& e) {
          throw UsageError(std::string(e.what()) + " (0: every core)");
        }
      },
      description);
}

}  // namespace simprec::cli
