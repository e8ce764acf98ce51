// simprec numerics: check a numerics spec (its canonical form and the configuration it means),
// or list what a spec can say (presets, sites, slots and their strategies, parameters,
// mitigations), all read from the registries.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "emulation/format.hpp"
#include "lib/attention/model.hpp"
#include "lib/attention/numerics_spec.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/site.hpp"
#include "lib/cli/command.hpp"

namespace simprec::cli {
namespace {

using namespace simprec::attention;

struct Options {
  std::string spec, format = "bf16";
  bool list = false, json = false;
};

void print_reference() {
  std::printf("## Presets\n\n| preset | model file | numerics |\n| --- | --- | --- |\n");
  for (const KernelModel& m : builtin_models()) {
    std::printf("| `%s` | %s | %s |\n", m.name.c_str(), m.path.c_str(), m.description.c_str());
  }
  std::printf("\n## Sites\n\n| site | accumulates | what rounds there |\n| --- | --- | --- |\n");
  for (int i = 0; i < kSiteCount; ++i) {
    const Site s = static_cast<Site>(i);
    std::printf("| `%s` | %s | %s |\n", std::string(site_name(s)).c_str(),
                site_accumulates(s) ? "yes" : "no", std::string(site_description(s)).c_str());
  }
  std::printf("\nSite groups (a key that sets each of its sites): %s.\n",
              site_group_names().c_str());
  std::printf("\n## Slots\n\n%s", slots_markdown().c_str());
  std::printf("\n## Parameters\n\n%s", parameters_markdown().c_str());
  std::printf("\n## Strategies\n\n%s", strategies_markdown().c_str());
  std::printf("## Mitigations\n\n%s", mitigations_markdown().c_str());
}

void run(const Options& o) {
  if (o.list) {
    print_reference();
    return;
  }
  if (o.spec.empty()) throw UsageError("give a numerics spec, or --list");
  AttentionConfig config;
  try {
    config = parse_numerics(o.spec, parse_format(o.format));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (o.json) {
    nlohmann::json j = to_json(config);
    j["numerics"] = canonical_numerics(config);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s\n", canonical_numerics(config).c_str());
  }
}

const RegisterCommand kRegistration([](CLI::App& app) {
  auto* command = app.add_subcommand(
      "numerics",
      "Print the canonical form of a numerics spec (PRESET[,format=F][,SITE=FORMAT:ROUNDING"
      "[:ACCUMULATION]...][,OPTION=VALUE...][,MITIGATION...] or a .toml file), or --list what a "
      "spec can say. See docs/attention.md.");
  auto opt = std::make_shared<Options>();
  command->add_option("spec", opt->spec, "the numerics spec or a .toml file");
  command->add_option("--format", opt->format,
                      "the preset's format when the spec names none (default bf16)");
  command->add_flag("--json", opt->json, "print the whole configuration as JSON");
  command->add_flag(
      "--list", opt->list,
      "print the presets, sites, slots with their strategies, parameters and mitigations "
      "(Markdown)");
  command->callback([opt] { run(*opt); });
});

}  // namespace
}  // namespace simprec::cli
