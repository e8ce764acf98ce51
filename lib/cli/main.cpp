#include <cstdio>
#include <exception>

#include "lib/cli/command.hpp"

namespace simprec::cli {
std::vector<CommandSetup>& command_registry() {
  static std::vector<CommandSetup> registry;
  return registry;
}
}  // namespace simprec::cli

int main(int argc, char** argv) {
  CLI::App app{"simprec: find where low-precision rounding bias comes from"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "simprec 0.1.0");
  for (const auto& setup : simprec::cli::command_registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const simprec::cli::ExitStatus& status) {
    return status.code;
  } catch (const simprec::cli::UsageError& e) {
    std::fprintf(stderr, "simprec: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simprec: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
