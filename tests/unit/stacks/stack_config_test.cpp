// --stacks / PROFLAUNCH_STACKS and --stack-depth / PROFLAUNCH_STACK_DEPTH:
// what parses, what the defaults are, and that a bad value warns and keeps
// the default.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "preload/config.h"

namespace proflaunch {
namespace {

TEST(StackPoints, ParseNamesAndLists) {
  uint32_t points = 0xff;
  ASSERT_TRUE(parse_stack_points("none", points));
  EXPECT_EQ(points, 0u);
  ASSERT_TRUE(parse_stack_points("all", points));
  EXPECT_EQ(points, uint32_t{kStacksAll});
  ASSERT_TRUE(parse_stack_points("launch", points));
  EXPECT_EQ(points, uint32_t{kStacksLaunch});
  ASSERT_TRUE(parse_stack_points("sync,memory", points));
  EXPECT_EQ(points, uint32_t{kStacksSync | kStacksMemory});
  for (const char* bad : {"", "launches", "launch,", ",sync", "LAUNCH", "all,bogus"})
    EXPECT_FALSE(parse_stack_points(bad, points)) << bad;
}

struct Environment {
  std::map<std::string, std::string> values;
  std::vector<std::string> warnings;
};

Config parse(Environment& env) {
  Config config;
  parse_config(
      config,
      [](const char* name, void* context) -> const char* {
        auto& values = static_cast<Environment*>(context)->values;
        auto found = values.find(name);
        return found == values.end() ? nullptr : found->second.c_str();
      },
      &env,
      [](const char* variable, const char*, const char*, void* context) {
        static_cast<Environment*>(context)->warnings.push_back(variable);
      },
      &env);
  return config;
}

TEST(StackConfig, DefaultsAreAllPointsAnd32Frames) {
  Environment env;
  const Config config = parse(env);
  EXPECT_EQ(config.stack_points, uint32_t{kStacksAll});
  EXPECT_EQ(config.stack_depth, 32u);
  EXPECT_TRUE(env.warnings.empty());
}

TEST(StackConfig, VariablesAreRead) {
  Environment env;
  env.values = {{kEnvStacks, "sync"}, {kEnvStackDepth, "7"}};
  const Config config = parse(env);
  EXPECT_EQ(config.stack_points, uint32_t{kStacksSync});
  EXPECT_EQ(config.stack_depth, 7u);
}

TEST(StackConfig, BadValuesWarnAndKeepTheDefaults) {
  Environment env;
  env.values = {{kEnvStacks, "everything"}, {kEnvStackDepth, "129"}};
  const Config config = parse(env);
  EXPECT_EQ(config.stack_points, uint32_t{kStacksAll});
  EXPECT_EQ(config.stack_depth, 32u);
  EXPECT_EQ(env.warnings, (std::vector<std::string>{kEnvStacks, kEnvStackDepth}));
  env.values = {{kEnvStackDepth, "0"}};
  env.warnings.clear();
  EXPECT_EQ(parse(env).stack_depth, 32u);
  EXPECT_EQ(env.warnings.size(), 1u);
}

}  // namespace
}  // namespace proflaunch
