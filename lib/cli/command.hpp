// Subcommands register themselves here; main() builds the CLI from the registry.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace simprec::cli {

// Adds one subcommand (with its options and callback) to the application.
using CommandSetup = std::function<void(CLI::App& app)>;

std::vector<CommandSetup>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(CommandSetup setup) { command_registry().push_back(std::move(setup)); }
};

// An error in what the user asked for; main() prints it after "simprec: error: " and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A command that has already reported what happened and only needs main() to exit with `code`.
struct ExitStatus {
  int code;
};

}  // namespace simprec::cli
