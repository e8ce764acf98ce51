// The tables and lists generated from the numerics registries: every model file in
// lib/attention/models/ is a preset with its description, every strategy file's strategies are in
// their slot and in `simprec numerics --list`, the CLI's help lists the presets and mitigations,
// docs/attention.md carries the slot, parameter and mitigation tables as the code has them, and
// every strategy's requirements name options that exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "lib/attention/model.hpp"
#include "lib/attention/options.hpp"
#include "lib/attention/preset.hpp"
#include "tests/cli_support.hpp"

namespace simprec::attention {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = SIMPREC_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

TEST(NumericsRegistry, EveryModelFileIsAPreset) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kSource / "lib/attention/models")) {
    if (e.path().extension() == ".toml") files.push_back(e.path().stem().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(preset_names(), files);
  const std::string listing = testing::run_simprec("numerics --list").output;
  for (const KernelModel& m : builtin_models()) {
    EXPECT_FALSE(m.description.empty()) << m.path;
    EXPECT_NE(listing.find("| `" + m.name + "` | " + m.path + " | " + m.description + " |"),
              std::string::npos)
        << m.name;
  }
}

TEST(NumericsRegistry, EveryStrategyFileIsListedInItsSlot) {
  const std::string listing = testing::run_simprec("numerics --list").output;
  const std::regex name_item("\\.name = \"([^\"]+)\"");
  int found = 0;
  for (const auto& e : fs::recursive_directory_iterator(kSource / "lib/attention/strategies")) {
    if (e.path().extension() != ".cpp") continue;
    // A slot's folder holds one file per strategy; a file beside the folders, a closed slot's.
    const std::string text = read(e.path());
    for (std::sregex_iterator it(text.begin(), text.end(), name_item), end; it != end; ++it) {
      const std::string name = (*it)[1];
      bool registered = false;
      for (const StructuralOption& o : structural_options()) {
        if (o.slot && strategy_registry().find(o.key, name)) registered = true;
      }
      EXPECT_TRUE(registered) << e.path() << ": " << name;
      EXPECT_NE(listing.find("| `" + name + "`"), std::string::npos) << name;
      ++found;
    }
  }
  EXPECT_GT(found, 60);
}

TEST(NumericsRegistry, RequirementsNameOptionsAndValuesThatExist) {
  for (const StructuralOption& o : structural_options()) {
    if (!o.slot) continue;
    for (const Strategy* s : strategy_registry().of_slot(o.key)) {
      for (const Requirement& r : s->info().needs) {
        const StructuralOption* target = find_structural_option(r.key);
        ASSERT_NE(target, nullptr) << s->name() << " needs " << r.key;
        for (const auto& v : r.values) {
          AttentionConfig c;
          EXPECT_NO_THROW(target->set(c, v)) << s->name() << " needs " << r.key << "=" << v;
        }
        if (!r.tag.empty()) {
          bool any = false;
          for (const Strategy* t : strategy_registry().of_slot(r.key)) any |= t->has_tag(r.tag);
          EXPECT_TRUE(any) << s->name() << " needs a " << r.key << " tagged " << r.tag;
        }
      }
    }
  }
}

TEST(NumericsRegistry, CommandHelpListsThePresetsAndMitigations) {
  const std::string help = testing::run_simprec("attention --help").output;
  for (const std::string& p : preset_names()) EXPECT_NE(help.find(p), std::string::npos) << p;
  for (const Mitigation& m : mitigations()) {
    EXPECT_NE(help.find(std::string(m.name)), std::string::npos) << m.name;
  }
}

TEST(NumericsRegistry, DocsCarryTheTablesAsTheCodeHasThem) {
  const std::string page = read(kSource / "docs/attention.md");
  EXPECT_NE(page.find(slots_markdown()), std::string::npos)
      << "docs/attention.md lacks the slots table; run scripts/update_attention_tables.py:\n"
      << slots_markdown();
  EXPECT_NE(page.find(parameters_markdown()), std::string::npos)
      << "docs/attention.md lacks the parameters table; run "
         "scripts/update_attention_tables.py:\n"
      << parameters_markdown();
  EXPECT_NE(page.find(mitigations_markdown()), std::string::npos)
      << "docs/attention.md lacks the mitigations table:\n"
      << mitigations_markdown();
}

TEST(NumericsRegistry, EveryModelInstantiatesAtTheFormatsItModels) {
  for (const KernelModel& m : builtin_models()) {
    const std::vector<std::string> formats =
        m.only_formats.empty() ? std::vector<std::string>{"bf16", "fp16", "e4m3fn", "fp32", "fp64"}
                               : m.only_formats;
    for (const std::string& f : formats) {
      SCOPED_TRACE(m.name + " at " + f);
      const AttentionConfig c = make_preset(m.name, parse_format(f));
      EXPECT_NO_THROW(check_requirements(c));
      EXPECT_EQ(c.preset, m.name);
    }
  }
}

}  // namespace
}  // namespace simprec::attention
