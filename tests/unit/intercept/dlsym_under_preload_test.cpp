// Runs with LD_PRELOAD=libintercept_test_shim.so:libintercept_second.so (set by
// meson). Checks that the shim's dlsym hands out wrappers for handle lookups
// and is otherwise invisible: RTLD_NEXT and RTLD_DEFAULT keep the caller's view.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using IntFn = int (*)(int);

std::string target_path() { return std::string(INTERCEPT_TARGET_DIR) + "/libintercept_target.so"; }

template <typename T>
T lookup(void* handle, const char* name) {
  return reinterpret_cast<T>(dlsym(handle, name));
}

TEST(DlsymUnderPreload, ShimIsLoaded) {
  ASSERT_NE(dlsym(RTLD_DEFAULT, "intercept_test_wrapped_count"), nullptr)
      << "run this test through meson: it needs LD_PRELOAD";
}

TEST(DlsymUnderPreload, DefaultLookupOfWrappedNameFailsWhileNoRealDefinitionIsLoaded) {
  // Nothing defines target_fn yet except the shim: a program probing for the
  // library must see it missing, with a dlerror message, as without the shim.
  dlerror();
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "target_fn"), nullptr);
  EXPECT_NE(dlerror(), nullptr);
}

TEST(DlsymUnderPreload, HandleLookupReturnsWrapperOfRtldLocalLibrary) {
  void* h = dlopen(target_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = lookup<IntFn>(h, "target_fn");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(1), 200) << "the wrapper (x100) must run around the real target_fn (x+1)";
  // A name the policy wants but has no wrapper for comes back unwrapped.
  auto other = lookup<IntFn>(h, "target_other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other(1), 3);
  // A missing name on a handle fails normally.
  dlerror();
  EXPECT_EQ(dlsym(h, "target_missing"), nullptr);
  EXPECT_NE(dlerror(), nullptr);
  auto wrapped = reinterpret_cast<unsigned long (*)()>(dlsym(RTLD_DEFAULT, "intercept_test_wrapped_count"));
  EXPECT_GE(wrapped(), 1u);
}

TEST(DlsymUnderPreload, VersionedLookupIsWrappedToo) {
  void* h = dlopen(target_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  auto fn = reinterpret_cast<IntFn>(dlvsym(h, "target_fn", "TARGET_1.0"));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(2), 300);
  EXPECT_EQ(dlvsym(h, "target_fn", "NO_SUCH_VERSION"), nullptr);
}

TEST(DlsymUnderPreload, DefaultLookupFindsShimExportOnceTheLibraryIsLoaded) {
  void* h = dlopen(target_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  auto fn = lookup<IntFn>(RTLD_DEFAULT, "target_fn");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(4), 500);
}

TEST(DlsymUnderPreload, MainProgramHandleFindsShimExportWithoutRecursing) {
  void* h = dlopen(target_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  void* self = dlopen(nullptr, RTLD_NOW);
  auto fn = lookup<IntFn>(self, "target_fn");
  ASSERT_NE(fn, nullptr);
  // The scope of the main program includes the preload: the lookup returns
  // the shim's own function, which must not mistake itself for the real one.
  EXPECT_EQ(fn(5), 600);
}

TEST(DlsymUnderPreload, SecondInterposerRtldNextResolvesRelativeToItself) {
  auto next_atoi = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "second_interposer_next_atoi"));
  ASSERT_NE(next_atoi, nullptr) << "libintercept_second.so must be preloaded";
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(next_atoi(), dlsym(libc, "atoi"));
  // Called through the global scope (a direct call may be inlined to strtol).
  if (dlsym(RTLD_DEFAULT, "__asan_init") != nullptr)
    GTEST_SKIP() << "an ASan build: ASan's own atoi comes first in the global scope";
  auto global_atoi = reinterpret_cast<int (*)(const char*)>(dlsym(RTLD_DEFAULT, "atoi"));
  EXPECT_EQ(global_atoi("41"), 1041) << "the second interposer's atoi must reach libc's";
}

TEST(DlsymUnderPreload, RtldNextFromProgramSkipsOnlyTheProgram) {
  // From the executable, the next atoi is the second interposer's (it is
  // preloaded), exactly as glibc would answer without the shim.
  void* second = dlopen(nullptr, RTLD_NOW);
  ASSERT_NE(dlsym(RTLD_DEFAULT, "second_interposer_next_atoi"), nullptr);
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  EXPECT_EQ(dlsym(RTLD_NEXT, "atoi"), dlsym(RTLD_DEFAULT, "atoi"));
  EXPECT_NE(dlsym(RTLD_NEXT, "atoi"), dlsym(libc, "atoi"));
  (void)second;
}

}  // namespace
