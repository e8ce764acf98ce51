#include "lib/cli/unknown_argument.hpp"

#include <vector>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"

namespace simprec::cli {

std::optional<std::string> unknown_argument_message(CLI::App& app) {
  // The program's name as its own messages give it (CLI11 takes argv[0]'s path).
  CLI::App* command = &app;
  std::string path = "simprec";
  while (!command->get_subcommands().empty()) {
    command = command->get_subcommands().front();
    path += " " + command->get_name();
  }
  const std::vector<std::string> extras = command->remaining();
  if (extras.empty()) return std::nullopt;
  std::vector<std::string> commands;
  for (const CLI::App* sub : command->get_subcommands({})) {
    if (!sub->get_name().empty()) commands.push_back(sub->get_name());
  }
  if (!commands.empty() && !extras.front().starts_with('-')) {
    const std::string hint = did_you_mean(extras.front(), commands);
    std::string message = path + ": error: unknown command '" + excerpt(extras.front()) + "'";
    if (!hint.empty()) return message + hint;
    std::string list;
    for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
    return message + " (commands: " + list + ")";
  }
  for (const std::string& argument : extras) {
    if (!argument.starts_with('-')) continue;
    const std::string option = argument.substr(0, argument.find('='));
    std::vector<std::string> names;
    for (const CLI::Option* o : command->get_options()) {
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    }
    const std::string hint = did_you_mean(option, names);
    if (hint.empty()) return std::nullopt;
    return path + ": error: unknown option '" + excerpt(option) + "'" + hint;
  }
  return std::nullopt;
}

}  // namespace simprec::cli
