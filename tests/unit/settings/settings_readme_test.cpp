// README.md's options table and preload/README.md's variables table are
// printed from the settings table (`proflaunch --help-markdown=options`,
// `=variables`); this test fails when what stands between their markers is
// not what the table prints, so neither can drift from the code.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "launcher/settings_cli.h"

namespace proflaunch::launcher {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines between "<!-- NAME:begin -->" and "<!-- NAME:end -->".
std::string between_markers(const std::string& text, const std::string& name, std::string* problem) {
  const std::string begin = "<!-- " + name + ":begin -->\n";
  const std::string end = "<!-- " + name + ":end -->";
  const size_t from = text.find(begin);
  const size_t to = from == std::string::npos ? std::string::npos : text.find(end, from);
  if (to == std::string::npos) {
    *problem = "no lines '" + begin.substr(0, begin.size() - 1) + "' ... '" + end + "'";
    return "";
  }
  return text.substr(from + begin.size(), to - from - begin.size());
}

void expect_table(const std::string& readme, const std::string& name) {
  const std::string path = std::string(PROFLAUNCH_SOURCE_ROOT) + "/" + readme;
  const std::string text = read_file(path);
  ASSERT_FALSE(text.empty()) << "cannot read " << path;
  std::string problem;
  const std::string shown = between_markers(text, name, &problem);
  ASSERT_EQ(problem, "") << readme;
  const std::string expected = settings_markdown(name);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(shown, expected) << readme << "'s table is not the settings table (preload/settings.h): replace "
                             << "the lines between its " << name << " markers with the output of "
                             << "`proflaunch --help-markdown=" << name << "`";
}

TEST(SettingsReadme, TheOptionsTableIsTheSettingsTable) { expect_table("README.md", "options"); }

TEST(SettingsReadme, TheVariablesTableIsTheSettingsTable) { expect_table("preload/README.md", "variables"); }

}  // namespace
}  // namespace proflaunch::launcher
