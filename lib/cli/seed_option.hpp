// --seed for every command: a decimal integer in [0, 2^64), read by limits::parse_seed rather
// than by CLI11, whose conversion clamps 2^64 and above to 2^64 - 1 and reads '' as 0.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "lib/cli/command.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::cli {

inline CLI::Option* add_seed_option(CLI::App& command, uint64_t& seed,
                                    const std::string& description) {
  return command.add_option_function<std::string>(
      "--seed",
      [&seed](const std::string& text) {
        try {
          seed = limits::parse_seed(text, "--seed");
        } catch (const std::invalid_argument& e) {
          throw UsageError(e.what());
        }
      },
      description + " (default " + std::to_string(seed) + ")");
}

}  // namespace simprec::cli
