// Finding plugins: SIMPREC_PLUGIN_PATH entries, directories expanded to their *.so files, and
// --plugin names resolved on the path.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>

#include "plugins/host/plugin_search.hpp"

namespace simprec::plugins {
namespace {

const std::string kPluginDir = SIMPREC_TEST_PLUGIN_DIR;
const std::string kBrokenDir = SIMPREC_TEST_BROKEN_PLUGIN_DIR;

TEST(PluginSearch, SplitsThePathAndSkipsEmptyEntries) {
  setenv("SIMPREC_PLUGIN_PATH", "/a::/b/c.so:", 1);
  EXPECT_EQ(plugin_path_entries(), (std::vector<std::string>{"/a", "/b/c.so"}));
  unsetenv("SIMPREC_PLUGIN_PATH");
  EXPECT_TRUE(plugin_path_entries().empty());
}

TEST(PluginSearch, ExpandsDirectoriesInNameOrder) {
  const auto files = expand_plugin_entries({kBrokenDir, kPluginDir + "/cpu_reference.so"});
  ASSERT_EQ(files.size(), 24u);  // 23 broken plugins and the CPU reference
  EXPECT_EQ(files.front().filename(), "broken_bad_utf8.so");
  EXPECT_EQ(files.back().filename(), "cpu_reference.so");
  EXPECT_THROW(expand_plugin_entries({"/nonexistent/dir"}), std::invalid_argument);
}

TEST(PluginSearch, AFileReachedTwiceIsListedOnce) {
  const auto files = expand_plugin_entries(
      {kPluginDir + "/cpu_reference.so", kPluginDir, kPluginDir + "/../lib/cpu_reference.so"});
  EXPECT_EQ(std::count_if(files.begin(), files.end(),
                          [](const auto& f) { return f.filename() == "cpu_reference.so"; }),
            1);
}

TEST(PluginSearch, ResolvesNamesOnThePath) {
  setenv("SIMPREC_PLUGIN_PATH", (kBrokenDir + ":" + kPluginDir).c_str(), 1);
  EXPECT_EQ(resolve_plugin("cpu_reference"),
            std::filesystem::path(kPluginDir) / "cpu_reference.so");
  EXPECT_EQ(resolve_plugin("broken_wrong_claim.so"),
            std::filesystem::path(kBrokenDir) / "broken_wrong_claim.so");
  EXPECT_EQ(resolve_plugin(kPluginDir + "/cpu_reference.so"),
            std::filesystem::path(kPluginDir) / "cpu_reference.so");
  try {
    resolve_plugin("no_such_plugin");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SIMPREC_PLUGIN_PATH="), std::string::npos) << e.what();
  }
  unsetenv("SIMPREC_PLUGIN_PATH");
}

}  // namespace
}  // namespace simprec::plugins
