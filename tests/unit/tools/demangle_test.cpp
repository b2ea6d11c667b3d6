#include <gtest/gtest.h>

#include "tools/proftrace/demangle.h"

namespace proflaunch::tools {
namespace {

TEST(Demangle, ItaniumNamesBecomeReadable) {
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("_Z5scaleIfEvPT_S0_"), "void scale<float>(float*, float)");
  EXPECT_EQ(demangle("_ZN2at6native8kernel_7IfEEvPT_i"), "void at::native::kernel_7<float>(float*, int)");
}

TEST(Demangle, OtherNamesAreLeftAlone) {
  EXPECT_EQ(demangle("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(demangle("f"), "f");  // a valid type encoding, but not a symbol
  EXPECT_EQ(demangle("_Zgarbage!!"), "_Zgarbage!!");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle("void kernel(float*)"), "void kernel(float*)");
}

}  // namespace
}  // namespace proflaunch::tools
