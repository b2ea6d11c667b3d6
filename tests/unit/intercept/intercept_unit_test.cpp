// Parts of the mechanism that need no preload: libc symbol lookup and the
// variant selection rules of the hook table.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "preload/intercept/hook_table.h"
#include "preload/intercept/libc_symbols.h"

namespace {

using namespace proflaunch::intercept;

TEST(LibcSymbols, FindsDlsymAndDlvsymAsTheLoaderDoes) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(find_libc_symbol("dlsym"), dlsym(libc, "dlsym"));
  EXPECT_EQ(find_libc_symbol("dlvsym"), dlsym(libc, "dlvsym"));
  EXPECT_EQ(find_libc_symbol("malloc"), dlsym(libc, "malloc"));
}

TEST(LibcSymbols, UnknownNameIsNull) {
  EXPECT_EQ(find_libc_symbol("proflaunch_no_such_symbol"), nullptr);
  EXPECT_EQ(find_libc_symbol(""), nullptr);
}

void* slots[6];
int fake_a, fake_b, fake_c, fake_d, fake_e, fake_f;

// The cuMemcpyHtoDAsync family as cudaTypedefs.h describes it: v2000 legacy
// 32-bit, v3020 _v2, v7000 _v2_ptsz.
const HookEntry kEntries[] = {
    {"cuLaunchKernel", "cuLaunchKernel", 4000, false, "libcuda.so", &fake_d, &slots[3]},
    {"cuLaunchKernel_ptsz", "cuLaunchKernel", 7000, true, "libcuda.so", &fake_e, &slots[4]},
    {"cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync", 2000, false, "libcuda.so", &fake_a, &slots[0]},
    {"cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync", 3020, false, "libcuda.so", &fake_b, &slots[1]},
    {"cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync", 7000, true, "libcuda.so", &fake_c, &slots[2]},
    {"cudaLaunchKernel", nullptr, 0, false, "libcudart.so", &fake_f, &slots[5]},
};

HookTable table() {
  HookTable t;
  EXPECT_TRUE(t.set(kEntries, std::size(kEntries)));
  return t;
}

auto no_exports = [](const char*) -> void* { return nullptr; };

TEST(HookTable, RejectsUnsortedOrDuplicateTables) {
  const HookEntry unsorted[] = {kEntries[1], kEntries[0]};
  HookTable t;
  EXPECT_FALSE(t.set(unsorted, 2));
  const HookEntry dup[] = {kEntries[0], kEntries[0]};
  EXPECT_FALSE(t.set(dup, 2));
}

TEST(HookTable, FindsBySymbol) {
  const HookTable t = table();
  ASSERT_NE(t.find_symbol("cuMemcpyHtoDAsync_v2"), nullptr);
  EXPECT_EQ(t.find_symbol("cuMemcpyHtoDAsync_v2")->wrapper, &fake_b);
  EXPECT_EQ(t.find_symbol("cuMemcpyHtoDAsync_v3"), nullptr);
  EXPECT_TRUE(t.contains("cudaLaunchKernel"));
  EXPECT_FALSE(t.contains("cuda"));
}

TEST(HookTable, SelectsVariantByVersionAndStreamMode) {
  const HookTable t = table();
  EXPECT_EQ(t.select_variant("cuMemcpyHtoDAsync", 2000, false, nullptr, no_exports)->symbol,
            std::string("cuMemcpyHtoDAsync"));
  EXPECT_EQ(t.select_variant("cuMemcpyHtoDAsync", 3020, false, nullptr, no_exports)->symbol,
            std::string("cuMemcpyHtoDAsync_v2"));
  EXPECT_EQ(t.select_variant("cuMemcpyHtoDAsync", 13000, false, nullptr, no_exports)->symbol,
            std::string("cuMemcpyHtoDAsync_v2"));
  EXPECT_EQ(t.select_variant("cuMemcpyHtoDAsync", 13000, true, nullptr, no_exports)->symbol,
            std::string("cuMemcpyHtoDAsync_v2_ptsz"));
  // Per-thread asked for, but the version predates per-thread variants.
  EXPECT_EQ(t.select_variant("cuMemcpyHtoDAsync", 6050, true, nullptr, no_exports)->symbol,
            std::string("cuMemcpyHtoDAsync_v2"));
  EXPECT_EQ(t.select_variant("cuLaunchKernel", 3020, false, nullptr, no_exports), nullptr);
  EXPECT_EQ(t.select_variant("cuNoSuchFunction", 13000, false, nullptr, no_exports), nullptr);
}

TEST(HookTable, ExportedAddressOverridesTheRules) {
  const HookTable t = table();
  int real_v2;
  // The driver answered with the address of its exported _v2 although the
  // rules would pick _ptsz: trust the address, it names the ABI exactly.
  auto exports = [&](const char* symbol) -> void* {
    return std::string(symbol) == "cuMemcpyHtoDAsync_v2" ? &real_v2 : nullptr;
  };
  EXPECT_EQ(t.select_variant("cuMemcpyHtoDAsync", 13000, true, &real_v2, exports)->symbol,
            std::string("cuMemcpyHtoDAsync_v2"));
}

TEST(HookTable, RealSlotIsSetOnce) {
  int first, second;
  offer_real_function(kEntries[3], &first);
  offer_real_function(kEntries[3], &second);
  EXPECT_EQ(slots[1], &first);
  EXPECT_EQ(real_function(kEntries[3]), &first);
}

}  // namespace
