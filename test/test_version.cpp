// The version: macros, uopc_version(), uopc_llvm_version().
#include <gtest/gtest.h>

#include <llvm/Config/llvm-config.h>

#include <string>

#include "uopc/uopc.h"

TEST(Version, MacrosAndFunctionAgree) {
  EXPECT_EQ(UOPC_VERSION_MAJOR, 0);
  EXPECT_EQ(UOPC_VERSION_MINOR, 3);
  EXPECT_EQ(UOPC_VERSION_PATCH, 0);
  EXPECT_STREQ(UOPC_VERSION_STRING, "0.3.0");
  EXPECT_EQ(UOPC_VERSION_NUMBER, 300);
  EXPECT_STREQ(uopc_version(), UOPC_VERSION_STRING);
  EXPECT_EQ(uopc_version(), uopc_version());  // a static string
}

TEST(Version, LlvmVersionIsTheLinkedLlvm) {
  ASSERT_NE(uopc_llvm_version(), nullptr);
  EXPECT_EQ(std::string(uopc_llvm_version()), LLVM_VERSION_STRING);
  EXPECT_EQ(uopc_llvm_version(), uopc_llvm_version());
}
