// Definitions: interned once, written once per section, the whole catalog
// again in a new section (fork child), thread names only where they belong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/records.h"
#include "preload/record/definitions.h"

namespace proflaunch {
namespace {

using namespace format;

struct Decoded {
  std::vector<std::string> strings;
  std::vector<ApiDefRecord> apis;
  std::vector<FunctionDefRecord> functions;
  std::vector<ThreadInfoRecord> threads;
};

Decoded take() {
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(take_pending_definitions(bytes));
  Decoded decoded;
  size_t offset = 0;
  while (offset < bytes.size()) {
    RecordHeader header;
    std::memcpy(&header, bytes.data() + offset, sizeof header);
    const uint8_t* data = bytes.data() + offset;
    switch (static_cast<RecordKind>(header.kind)) {
      case RecordKind::kStringDef:
        decoded.strings.emplace_back(reinterpret_cast<const char*>(data) + sizeof(StringDefRecord),
                                     header.bytes - sizeof(StringDefRecord));
        break;
      case RecordKind::kApiDef: {
        ApiDefRecord api;
        std::memcpy(&api, data, sizeof api);
        decoded.apis.push_back(api);
        break;
      }
      case RecordKind::kFunctionDef: {
        FunctionDefRecord function;
        std::memcpy(&function, data, sizeof function);
        decoded.functions.push_back(function);
        break;
      }
      case RecordKind::kThreadInfo: {
        ThreadInfoRecord thread;
        std::memcpy(&thread, data, sizeof thread);
        decoded.threads.push_back(thread);
        break;
      }
      default:
        ADD_FAILURE() << "unexpected kind " << header.kind;
    }
    offset += header.bytes;
  }
  EXPECT_EQ(offset, bytes.size());
  return decoded;
}

// One test: the store is process-wide, so the steps build on each other.
TEST(Definitions, CatalogAndSectionRecordsLifeCycle) {
  definitions_begin_section();
  take();  // whatever earlier code defined

  const uint32_t kernel = intern_string("my_kernel");
  EXPECT_NE(kernel, 0u);
  EXPECT_EQ(intern_string("my_kernel"), kernel);  // interned once
  EXPECT_NE(intern_string("other"), kernel);

  EXPECT_TRUE(define_api(7, "cuLaunchKernel", ApiDomain::kDriver, Vendor::kNvidia));
  EXPECT_TRUE(define_api(7, "cuLaunchKernel", ApiDomain::kDriver, Vendor::kNvidia));  // same: ok
  EXPECT_FALSE(define_api(7, "cuMemcpy", ApiDomain::kDriver, Vendor::kNvidia));       // clash
  EXPECT_TRUE(define_function(0x1000, "my_kernel"));
  EXPECT_TRUE(define_function(0x1000, "my_kernel"));  // unchanged: not written again
  define_thread(99, "worker", 123);

  Decoded first = take();
  EXPECT_EQ(first.strings, (std::vector<std::string>{"my_kernel", "other", "cuLaunchKernel",
                                                     "worker"}));
  ASSERT_EQ(first.apis.size(), 1u);
  EXPECT_EQ(first.apis[0].api, 7);
  ASSERT_EQ(first.functions.size(), 1u);
  EXPECT_EQ(first.functions[0].handle, 0x1000u);
  EXPECT_EQ(first.functions[0].name_string, kernel);
  ASSERT_EQ(first.threads.size(), 1u);
  EXPECT_EQ(first.threads[0].tid, 99u);

  // Nothing new: nothing pending.
  Decoded second = take();
  EXPECT_TRUE(second.strings.empty() && second.apis.empty() && second.threads.empty());

  // A reused handle gets its new name from now on.
  EXPECT_TRUE(define_function(0x1000, "new_kernel"));
  Decoded renamed = take();
  ASSERT_EQ(renamed.functions.size(), 1u);
  EXPECT_EQ(renamed.strings, (std::vector<std::string>{"new_kernel"}));

  // A new section (fork child) gets the whole catalog again, ids unchanged,
  // but not the other section's threads.
  definitions_begin_section();
  Decoded child = take();
  EXPECT_GE(child.strings.size(), 5u);
  EXPECT_EQ(child.apis.size(), 1u);
  EXPECT_EQ(child.functions.size(), 2u);
  EXPECT_TRUE(child.threads.empty());
}

}  // namespace
}  // namespace proflaunch
