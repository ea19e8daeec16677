// UOPC_JIT_CPU / UOPC_JIT_FEATURES (lib/jit/engine.c): the CPU the JIT
// targets instead of the host's.  scripts/valgrind.sh sets
// UOPC_JIT_CPU=x86-64-v3 (valgrind 3.19 decodes no AVX-512).
#include <gtest/gtest.h>

#include <string>

#include "support/cli.h"

namespace {

bool Has(const std::string &s, const char *what) { return s.find(what) != std::string::npos; }

// The baseline x86-64 CPU has SSE2 only: no ymm or zmm in the code.
TEST(JitCpu, NamedCpuDecidesTheVectorRegisters) {
  std::string kernel = Q(ExamplePath("copy_kernel.uir"));
  CliRun r = UopcEnv("UOPC_CACHE=0 UOPC_JIT_CPU=x86-64", "compile --emit=asm " + kernel);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(Has(r.out, "%xmm")) << r.out;
  EXPECT_FALSE(Has(r.out, "%ymm") || Has(r.out, "%zmm")) << r.out;
  // AVX2 (what valgrind runs): ymm, never zmm
  r = UopcEnv("UOPC_CACHE=0 UOPC_JIT_CPU=x86-64-v3", "compile --emit=asm " + kernel);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "%ymm")) << r.out;
  EXPECT_FALSE(Has(r.out, "%zmm")) << r.out;
  // features on top of the named CPU: AVX2 taken away again
  r = UopcEnv("UOPC_CACHE=0 UOPC_JIT_CPU=x86-64-v3 UOPC_JIT_FEATURES=-avx,-avx2", "compile --emit=asm " + kernel);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Has(r.out, "%ymm") || Has(r.out, "%zmm")) << r.out;
}

// Junk gets the CLI's one-line warning; the library uses the host CPU.
TEST(JitCpu, JunkIsWarnedAboutAndIgnored) {
  std::string kernel = Q(ExamplePath("copy_kernel.uir"));
  CliRun r = UopcEnv("UOPC_CACHE=0 UOPC_JIT_CPU='x86 64' UOPC_JIT_FEATURES=avx2", "compile " + kernel);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "uopc: warning: UOPC_JIT_CPU='x86 64' is not a CPU name")) << r.err;
  EXPECT_TRUE(Has(r.err, "uopc: warning: UOPC_JIT_FEATURES='avx2' is not a feature list")) << r.err;
  EXPECT_TRUE(Has(r.out, "define")) << r.out;
  r = UopcEnv("UOPC_CACHE=0 UOPC_JIT_CPU= UOPC_JIT_FEATURES=+avx2,-avx512f", "compile " + kernel);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

}  // namespace
