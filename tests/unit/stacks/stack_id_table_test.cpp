// The lock-free table from a stack's hash to its id: what is inserted is
// found, what is not is not, it refuses to fill past 3/4, and readers racing
// a writer never see a hash without its id.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "preload/stacks/frame_hash.h"
#include "preload/stacks/stack_id_table.h"

namespace proflaunch::stacks {
namespace {

TEST(StackIdTable, FindsWhatWasInsertedAndNothingElse) {
  StackIdTable table;
  ASSERT_TRUE(table.init(1024));
  for (uint32_t id = 1; id <= 500; ++id) ASSERT_TRUE(table.insert(mix64(id), id));
  for (uint32_t id = 1; id <= 500; ++id) EXPECT_EQ(table.find(mix64(id)), id);
  for (uint32_t id = 501; id <= 1000; ++id) EXPECT_EQ(table.find(mix64(id)), 0u);
  EXPECT_EQ(table.used(), 500u);
}

TEST(StackIdTable, CollidingHashesProbeToTheirOwnSlots) {
  StackIdTable table;
  ASSERT_TRUE(table.init(64));
  // Same low bits: the same home slot.
  const uint64_t a = 0x100000005, b = 0x200000005, c = 0x300000005;
  ASSERT_TRUE(table.insert(a, 1));
  ASSERT_TRUE(table.insert(b, 2));
  ASSERT_TRUE(table.insert(c, 3));
  EXPECT_EQ(table.find(a), 1u);
  EXPECT_EQ(table.find(b), 2u);
  EXPECT_EQ(table.find(c), 3u);
  EXPECT_EQ(table.find(0x400000005), 0u);
}

TEST(StackIdTable, StopsAtThreeQuartersFull) {
  StackIdTable table;
  ASSERT_TRUE(table.init(64));
  uint32_t inserted = 0;
  while (table.insert(mix64(inserted + 1), inserted + 1)) ++inserted;
  EXPECT_EQ(inserted, 48u);
  EXPECT_TRUE(table.full());
  EXPECT_EQ(table.find(mix64(49)), 0u);
  EXPECT_EQ(table.find(mix64(48)), 48u);
}

TEST(StackIdTable, ReadersRacingTheWriterSeeEitherNothingOrTheRightId) {
  StackIdTable table;
  ASSERT_TRUE(table.init(1 << 16));
  constexpr uint32_t kStacks = 40000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> wrong{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire))
        for (uint32_t id = 1; id <= kStacks; id += 97) {
          const uint32_t found = table.find(mix64(id));
          if (found != 0 && found != id) wrong.fetch_add(1);
        }
    });
  for (uint32_t id = 1; id <= kStacks; ++id) ASSERT_TRUE(table.insert(mix64(id), id));
  done.store(true, std::memory_order_release);
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(wrong.load(), 0u);
  for (uint32_t id = 1; id <= kStacks; ++id) ASSERT_EQ(table.find(mix64(id)), id);
}

TEST(FrameHasher, OrderAndContentMatter) {
  auto hash = [](std::initializer_list<uint64_t> words) {
    FrameHasher hasher(7);
    for (uint64_t word : words) hasher.add(word);
    return hasher.finish();
  };
  EXPECT_EQ(hash({1, 2, 3}), hash({1, 2, 3}));
  EXPECT_NE(hash({1, 2, 3}), hash({3, 2, 1}));
  EXPECT_NE(hash({1, 2, 3}), hash({1, 2}));
  EXPECT_NE(hash({}), 0u);
}

}  // namespace
}  // namespace proflaunch::stacks
