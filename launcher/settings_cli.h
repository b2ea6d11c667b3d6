// The launcher's side of the settings table (preload/settings.h): every row
// with an option becomes a CLI11 option, its values go to the program as the
// row's environment variable, and the README tables are printed from it.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "preload/settings.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace proflaunch::launcher {

// What the command line said, one entry per row of the table.
class SettingValues {
 public:
  bool given(Setting setting) const { return given_[index(setting)]; }
  // The text given (a flag: "1"; a number: in decimal), else the row's
  // default ("" when it has none).
  std::string text(Setting setting) const;
  bool flag(Setting setting) const { return given(setting); }
  unsigned number(Setting setting) const;

  void set(Setting setting, std::string text);

 private:
  static size_t index(Setting setting) { return static_cast<size_t>(setting); }
  std::array<std::string, kSettingCount> text_;
  std::array<bool, kSettingCount> given_{};
};

// Registers the rows' options on `app` (their help, default, checks and
// --help section). After app.parse(), values() holds what was given.
class SettingOptions {
 public:
  void add_to(CLI::App& app);
  SettingValues values() const;

 private:
  std::array<std::string, kSettingCount> text_;
  std::array<unsigned, kSettingCount> number_{};
  std::array<bool, kSettingCount> flag_{};
  std::array<CLI::Option*, kSettingCount> option_{};
};

using Environment = std::vector<std::pair<std::string, std::string>>;

// The variables that carry the given settings to the shim (rows with an
// option and a variable), in table order.
Environment settings_environment(const SettingValues& values);

// Every row's variable that `environment` does not set: the launcher unsets
// them, so that settings inherited from an outer traced process are not taken
// for this run's (the shim then uses its defaults, the table's).
std::vector<std::string> settings_to_unset(const Environment& environment);

// What the shim would say about `environment` (parse_config), as the
// launcher's error message; empty when it would take every value.
std::string shim_refusal(const Environment& environment);

// A row's long option ("--output" for "-o,--output").
std::string option_name(const SettingRow& row);

// The Markdown tables the READMEs carry between their markers:
// "options" (README.md, every option) and "variables" (preload/README.md,
// every environment variable). Empty for another name.
std::string settings_markdown(const std::string& table);

}  // namespace proflaunch::launcher
