// What to tell someone whose command line names a command or an option that does not exist.
// CLI11 answers `simprec atention` with "A subcommand is required" and `--formt` with "The
// following argument was not expected"; this names the word and the known ones it is close to.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace simprec::cli {

// After a failed app.parse: "simprec: error: unknown command 'atention'; did you mean
// 'attention'?" (with the commands listed where none is close), or "simprec attention: error:
// unknown option '--formt'; did you mean '--format'?" for the first argument the deepest
// command reached did not take. Nullopt where there is no such argument, or where an unknown
// option is close to none (CLI11's own message says as much).
std::optional<std::string> unknown_argument_message(CLI::App& app);

}  // namespace simprec::cli
