// simprec report DIR: rebuild summary.csv, report.md and the plots from DIR/results.jsonl.
#include <cstdio>

#include "lib/cli/command.hpp"
#include "lib/reports/report.hpp"

namespace simprec::cli {
namespace {

const RegisterCommand kRegistration([](CLI::App& app) {
  auto* command =
      app.add_subcommand("report", "Rebuild an experiment's report from its results.jsonl alone.");
  auto dir = std::make_shared<std::string>();
  command->add_option("dir", *dir, "the results folder")->required();
  command->callback([dir] {
    const auto files = reports::write_report(*dir);
    if (!files.skipped_note.empty()) std::printf("%s\n", files.skipped_note.c_str());
    std::printf("report: %s\nsummary: %s\n", files.markdown.string().c_str(),
                files.csv.string().c_str());
    for (const auto& p : files.plots) std::printf("plot: %s\n", p.string().c_str());
    if (!files.plot_note.empty()) std::printf("%s\n", files.plot_note.c_str());
  });
});

}  // namespace
}  // namespace simprec::cli
