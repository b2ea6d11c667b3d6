// The settings table (preload/settings.h) against the code that uses it: an
// option given on the command line reaches the shim's Config through its
// row's variable, the shim's defaults are the table's, and no row is
// half-wired (a variable the launcher exports but the shim ignores, or the
// other way round).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "launcher/settings_cli.h"
#include "preload/config.h"
#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::launcher {
namespace {

struct CommandLine {
  bool ok = false;
  std::string error;
  SettingValues values;
};

// Parses options as proflaunch's main() does (a program follows them).
CommandLine parse_command_line(const std::vector<std::string>& args) {
  CLI::App app("test", "proflaunch");
  app.prefix_command();
  SettingOptions options;
  options.add_to(app);
  std::vector<std::string> reversed = {"true", "--"};  // CLI11 takes them last first
  reversed.insert(reversed.end(), args.rbegin(), args.rend());
  CommandLine parsed;
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    parsed.error = error.what();
    return parsed;
  }
  parsed.ok = true;
  parsed.values = options.values();
  return parsed;
}

struct ShimView {
  Config config;
  std::vector<std::string> warnings;  // "VARIABLE: problem"
};

ShimView shim_reads(const Environment& environment) {
  struct Context {
    const Environment* environment;
    ShimView view;
  } context{&environment, {}};
  parse_config(
      context.view.config,
      [](const char* name, void* data) -> const char* {
        for (const auto& [variable, value] : *static_cast<Context*>(data)->environment)
          if (variable == name) return value.c_str();
        return nullptr;
      },
      &context,
      [](const char* variable, const char* value, const char* problem, void* data) {
        static_cast<Context*>(data)->view.warnings.push_back(std::string(variable) + "=" + value + ": " + problem);
      },
      &context);
  return context.view;
}

// The row and the options it needs, and what they need.
std::vector<Setting> with_needs(Setting setting) {
  std::vector<Setting> settings = {setting};
  for (size_t i = 0; i < settings.size(); ++i) {
    const Setting needed = setting_row(settings[i]).needs;
    if (needed != kNoSetting && std::find(settings.begin(), settings.end(), needed) == settings.end())
      settings.push_back(needed);
  }
  return settings;
}

std::string argument(const SettingRow& row) {
  return row.value == SettingValue::kFlag ? option_name(row) : option_name(row) + "=" + row.example;
}

// What the variable holds when the launcher passes the row's example on.
std::string passed_on(const SettingRow& row) { return row.value == SettingValue::kFlag ? "1" : row.example; }

Environment without(Environment environment, const char* variable) {
  std::erase_if(environment, [&](const auto& entry) { return entry.first == variable; });
  return environment;
}

const std::string* value_of(const Environment& environment, const char* variable) {
  for (const auto& [name, value] : environment)
    if (name == variable) return &value;
  return nullptr;
}

TEST(SettingsTable, EveryRowIsComplete) {
  std::vector<std::string> options, variables;
  for (const SettingRow& row : kSettingRows) {
    SCOPED_TRACE(row.flags != nullptr ? row.flags : row.env != nullptr ? row.env : "a row with neither");
    ASSERT_TRUE(row.flags != nullptr || row.env != nullptr) << "neither an option nor a variable";
    EXPECT_TRUE(row.help != nullptr && *row.help != '\0');
    // Half-wired: a variable exported but not read, or read but never set.
    EXPECT_EQ(row.env != nullptr, row.read != nullptr) << "a variable and the shim's reader go together";
    if (row.flags != nullptr) {
      EXPECT_EQ(option_name(row).rfind("--", 0), 0u) << "every option has a long name";
      const std::string flags = row.flags;
      for (size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
        end = flags.find(',', start);
        options.push_back(flags.substr(start, end == std::string::npos ? end : end - start));
      }
    }
    if (row.env != nullptr) {
      EXPECT_EQ(std::string(row.env).rfind("PROFLAUNCH_", 0), 0u);
      variables.push_back(row.env);
    }
    if (row.value != SettingValue::kFlag) {
      EXPECT_NE(row.syntax, nullptr);
      EXPECT_NE(row.example, nullptr) << "a value row carries an example for these tests";
    }
    if (row.value == SettingValue::kNumber) {
      EXPECT_LE(row.min, row.max);
      for (const char* text : {row.default_text, row.example}) {
        const unsigned long number = std::stoul(text);
        EXPECT_TRUE(number >= row.min && number <= row.max) << text;
      }
    }
    if (row.value == SettingValue::kChoice) {
      const std::string choices = "|" + std::string(row.syntax) + "|";
      EXPECT_NE(choices.find("|" + std::string(row.default_text) + "|"), std::string::npos)
          << "the default is one of the choices";
    }
    if (row.needs != kNoSetting) EXPECT_NE(setting_row(row.needs).flags, nullptr) << "needs an option";
    if (row.group != nullptr) EXPECT_NE(row.flags, nullptr) << "only options have a --help section";
  }
  std::sort(options.begin(), options.end());
  EXPECT_EQ(std::adjacent_find(options.begin(), options.end()), options.end()) << "an option spelled twice";
  std::sort(variables.begin(), variables.end());
  EXPECT_EQ(std::adjacent_find(variables.begin(), variables.end()), variables.end()) << "a variable used twice";
}

TEST(SettingsTable, EveryOptionReachesTheShimThroughItsVariable) {
  int checked = 0;
  for (const SettingRow& row : kSettingRows) {
    if (row.flags == nullptr || row.env == nullptr) continue;
    SCOPED_TRACE(row.flags);
    std::vector<std::string> args;
    for (Setting setting : with_needs(row.id)) args.push_back(argument(setting_row(setting)));
    const CommandLine parsed = parse_command_line(args);
    ASSERT_TRUE(parsed.ok) << parsed.error;

    const Environment environment = settings_environment(parsed.values);
    const std::string* value = value_of(environment, row.env);
    ASSERT_NE(value, nullptr) << "the launcher does not export " << row.env;
    EXPECT_EQ(*value, passed_on(row));
    EXPECT_EQ(shim_refusal(environment), "");

    const ShimView shim = shim_reads(environment);
    EXPECT_TRUE(shim.warnings.empty()) << shim.warnings.front();
    // The value changes what the shim does: without it, the Config differs.
    EXPECT_FALSE(shim.config == shim_reads(without(environment, row.env)).config)
        << "the shim does not use " << row.env;
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST(SettingsTable, TheShimsDefaultsAreTheTables) {
  int checked = 0;
  for (const SettingRow& row : kSettingRows) {
    if (row.env == nullptr || row.default_text == nullptr) continue;
    SCOPED_TRACE(row.env);
    Environment base;
    for (Setting setting : with_needs(row.id))
      if (setting != row.id) base.emplace_back(setting_row(setting).env, passed_on(setting_row(setting)));
    Environment with_default = base;
    with_default.emplace_back(row.env, row.default_text);
    const ShimView defaulted = shim_reads(base);
    const ShimView given = shim_reads(with_default);
    EXPECT_TRUE(given.warnings.empty()) << given.warnings.front();
    EXPECT_TRUE(given.config == defaulted.config) << row.default_text << " is not what the shim uses by default";
    ++checked;
  }
  EXPECT_GE(checked, 9);
  // And the constants the code uses in their units.
  const Config config = shim_reads({}).config;
  EXPECT_EQ(config.buffer_bytes_per_thread, kDefaultBufferBytes);
  EXPECT_EQ(config.flush_interval_ms, kDefaultFlushIntervalMs);
  EXPECT_EQ(config.stack_depth, kDefaultStackDepth);
  EXPECT_EQ(config.capture.ring_bytes, kDefaultRingBytes);
}

TEST(SettingsTable, WhatAnOptionNeedsIsWhatTheShimRequires) {
  int checked = 0;
  for (const SettingRow& row : kSettingRows) {
    if (row.needs == kNoSetting) continue;
    SCOPED_TRACE(row.flags);
    const std::string refusal = shim_refusal({{row.env, passed_on(row)}});
    EXPECT_NE(refusal, "") << "given alone, it is taken";
    EXPECT_NE(refusal.find(option_name(setting_row(row.needs))), std::string::npos) << refusal;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(SettingsTable, EveryChoiceIsTakenByTheLauncherAndTheShim) {
  for (const SettingRow& row : kSettingRows) {
    if (row.value != SettingValue::kChoice) continue;
    std::string choices = row.syntax;
    for (size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
      end = choices.find('|', start);
      const std::string choice = choices.substr(start, end == std::string::npos ? end : end - start);
      SCOPED_TRACE(option_name(row) + "=" + choice);
      EXPECT_TRUE(parse_command_line({option_name(row) + "=" + choice}).ok);
      EXPECT_TRUE(shim_reads({{row.env, choice}}).warnings.empty());
    }
    EXPECT_FALSE(parse_command_line({option_name(row) + "=bogus"}).ok);
  }
}

TEST(SettingsTable, TheLaunchersOwnOptionsStayWithIt) {
  for (const SettingRow& row : kSettingRows) {
    if (row.flags == nullptr || row.env != nullptr) continue;
    SCOPED_TRACE(row.flags);
    const CommandLine parsed = parse_command_line({argument(row)});
    ASSERT_TRUE(parsed.ok) << parsed.error;
    EXPECT_TRUE(parsed.values.given(row.id));
    EXPECT_TRUE(settings_environment(parsed.values).empty());
  }
}

TEST(SettingsTable, NotGivenMeansTheDefaultAndTheVariableUnset) {
  const CommandLine parsed = parse_command_line({});
  ASSERT_TRUE(parsed.ok);
  EXPECT_TRUE(settings_environment(parsed.values).empty());
  EXPECT_EQ(parsed.values.text(Setting::kOutput), "proflaunch-%p.trace");
  EXPECT_EQ(parsed.values.number(Setting::kWaitAfterExit), 10u);
  EXPECT_FALSE(parsed.values.flag(Setting::kForce));
  // Every variable of the table is unset but those the launcher sets itself.
  const std::vector<std::string> unset = settings_to_unset({{kEnvPartsDir, "/tmp/x.parts"}});
  size_t variables = 0;
  for (const SettingRow& row : kSettingRows) variables += row.env != nullptr;
  EXPECT_EQ(unset.size(), variables - 1);
  EXPECT_EQ(std::count(unset.begin(), unset.end(), std::string(kEnvPartsDir)), 0);
  EXPECT_EQ(std::count(unset.begin(), unset.end(), std::string(kEnvExecParent)), 1);
}

TEST(SettingsTable, TheLauncherRefusesWhatTheShimWouldReplace) {
  // Checked by the option's own check.
  EXPECT_FALSE(parse_command_line({"--count-calls=" + std::string(kMaxCountedCallsBytes, 'a')}).ok);
  // Checked together, by the shim's parser.
  EXPECT_NE(shim_refusal({{"PROFLAUNCH_STEPS", "1:2:3"}}).find("--steps '1:2:3': needs --step-range"),
            std::string::npos);
  EXPECT_NE(shim_refusal({{"PROFLAUNCH_IDLE", "1"}, {"PROFLAUNCH_DELAY", "3s"}}).find("--idle"), std::string::npos);
}

// The real binary: its --help lists every option with its help line, and a
// bad value of any option stops it with status 2 and a message naming it.
TEST(SettingsTable, TheLaunchersHelpAndRefusalsComeFromTheTable) {
  const std::string launcher = testing::required_env("PROFLAUNCH_EXE");
  testing::RunOptions help;
  help.argv = {launcher, "--help"};
  const testing::ProcessResult shown = testing::run_process(help);
  ASSERT_TRUE(shown.exited_with(0)) << shown.describe();
  for (const SettingRow& row : kSettingRows) {
    if (row.flags == nullptr) continue;
    EXPECT_NE(shown.out.find(row.flags), std::string::npos) << row.flags;
    EXPECT_NE(shown.out.find(row.help), std::string::npos) << row.flags;
  }

  testing::TempDir dir;
  int refused = 0;
  for (const SettingRow& row : kSettingRows) {
    if (row.flags == nullptr || row.value == SettingValue::kFlag) continue;
    if (row.check == nullptr && row.read == nullptr && row.value == SettingValue::kText) continue;  // any text
    const std::string bad = row.value == SettingValue::kNumber ? std::to_string(row.max + 1ul) : "%bogus%";
    testing::RunOptions run;
    run.argv = {launcher, "-q", "-o", dir / "t.trace", option_name(row) + "=" + bad, "--", "true"};
    const testing::ProcessResult result = testing::run_process(run);
    EXPECT_TRUE(result.exited_with(2)) << row.flags << ": " << result.describe();
    EXPECT_NE(result.err.find(option_name(row)), std::string::npos) << result.err;
    ++refused;
  }
  EXPECT_GE(refused, 15);
  EXPECT_TRUE(testing::list_files(dir.path(), "").empty()) << "nothing ran";
}

}  // namespace
}  // namespace proflaunch::launcher
