#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

#include "emulation/excerpt.hpp"
#include "lib/cli/command.hpp"
#include "lib/cli/unknown_argument.hpp"

namespace simprec::cli {
std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}
}  // namespace simprec::cli

int main(int argc, char** argv) {
  CLI::App app{"simprec: find where low-precision rounding bias comes from"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "simprec " SIMPREC_VERSION);
  for (const auto& setup : simprec::cli::command_registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A word or option that names nothing gets a hint instead of CLI11's message, which
    // complains of something else ("A subcommand is required") or names no alternative.
    if (e.get_exit_code() != 0) {
      if (const auto message = simprec::cli::unknown_argument_message(app)) {
        std::fprintf(stderr, "%s\n", simprec::bounded_message(*message).c_str());
        return 2;
      }
    }
    // CLI11 prints the message; --help and --version exit 0, every parse error 2 (its own codes,
    // 100 and up, would collide with nothing we document).
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const simprec::cli::ExitStatus& status) {
    return status.code;
  } catch (const simprec::cli::UsageError& e) {
    std::fprintf(stderr, "simprec: error: %s\n", simprec::bounded_message(e.what()).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    // Sizes from input are checked and estimated before allocating (docs: the memory bound);
    // this is what is left when the machine has less free memory than the estimate assumed.
    std::fprintf(stderr,
                 "simprec: error: out of memory: the work needs more memory than is free now "
                 "(see --max-memory)\n");
    return 1;
  } catch (const std::length_error&) {
    std::fprintf(stderr,
                 "simprec: error: a size computed from the input is too large to allocate\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simprec: error: %s\n", simprec::bounded_message(e.what()).c_str());
    return 1;
  }
  return 0;
}
