// Streaming stores (UOPC_COMPILE_STREAM; lib/codegen/stream.c,
// lib/jit/nontemporal.c): asked for, a kernel that stores at least
// UOPC_STREAM_MIN_BYTES gets a copy of its loops with non-temporal vector
// stores, entered when its output buffers are 64-byte aligned; results are
// the same bits either way, aligned or not, and an accumulation (a kernel
// that reads what it writes) never streams.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "uopc/uopc.h"
#include "jit/jit.h"
#include "support/cli.h"
#include "support/ctx.h"
#include "support/kernels.h"
#include "support/plan_io.h"
#include "support/env.h"

namespace {

// o[i] = a[i] * b[i] + a[i] over n f32 (slots a 0, b 1, o 2).
uopc_node *MulAdd(uopc_ctx *c, int n) {
  uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, n), *B = uopc_buffer(c, 1, UOPC_DT_F32, n),
            *O = uopc_buffer(c, 2, UOPC_DT_F32, n);
  uopc_node *i = uopc_range_k(c, n, 0);
  uopc_node *a = uopc_load1(c, A, i);
  return uopc_sink1(c, uopc_end1(c, uopc_store1(c, O, i, uopc_add(c, uopc_mul(c, a, uopc_load1(c, B, i)), a)), i));
}


std::string Asm(uopc_ctx *c, uopc_node *root, uopc_tier tier, unsigned flags = UOPC_COMPILE_STREAM) {
  uopc_compile_opts o{tier, flags, 0};
  uopc_error e{};
  char *s = uopc_emit_asm(c, root, &o, &e);
  EXPECT_NE(s, nullptr) << e.msg;
  std::string r = s ? s : "";
  free(s);
  return r;
}

bool Streams(const std::string &s) { return s.find("movntp") != std::string::npos && s.find("sfence") != std::string::npos; }

#if defined(__x86_64__)
// (On a host with narrower vectors no kernel streams: the test checks that.)
TEST(Stream, ChosenByStoredBytesAndOnlyWithoutAccumulation) {
  Ctx x;
  if (uopi_jit_vector_bits() < 512) {
    EnvScope at("UOPC_STREAM_MIN_BYTES", "1");
    uopc_node *k = MulAdd(x.c, 1024);
    EXPECT_EQ(Asm(x.c, k, UOPC_TIER_FAST).find("movnt"), std::string::npos);
    return;
  }
  uopc_node *k = MulAdd(x.c, 1024);  // stores 4096 bytes
  ASSERT_NE(k, nullptr) << x.err();
  for (uopc_tier t : {UOPC_TIER_FAST, UOPC_TIER_STRONG}) {
    {
      EnvScope at("UOPC_STREAM_MIN_BYTES", "4096");
      EXPECT_TRUE(Streams(Asm(x.c, k, t))) << "tier " << t;
    }
    {
      EnvScope over("UOPC_STREAM_MIN_BYTES", "4097");
      EXPECT_FALSE(Streams(Asm(x.c, k, t))) << "tier " << t;
    }
    EnvScope at("UOPC_STREAM_MIN_BYTES", "1");
    EXPECT_EQ(Asm(x.c, k, t, 0).find("movnt"), std::string::npos) << "not asked for, tier " << t;
    {
      EnvScope on("UOPC_STREAM", "on");  // only "off" means something
      EXPECT_EQ(Asm(x.c, k, t, 0).find("movnt"), std::string::npos) << "tier " << t;
    }
    {
      EnvScope off("UOPC_STREAM", "off");  // wins over the flag
      EXPECT_EQ(Asm(x.c, k, t).find("movnt"), std::string::npos) << "tier " << t;
    }
    uopc_node *mm = MatmulKernel(x.c, 32);
    ASSERT_NE(mm, nullptr) << x.err();
    EXPECT_EQ(Asm(x.c, mm, t).find("movnt"), std::string::npos) << "an accumulation streamed, tier " << t;
  }
  // the default: half the last level cache, so a 4 KiB kernel does not stream
  EXPECT_FALSE(Streams(Asm(x.c, k, UOPC_TIER_FAST)));
}
#endif

// The CLI: a plan streams its result by default, --no-stream turns it off;
// a kernel file's kernel streams with --stream only.
TEST(Stream, CliOptions) {
  if (uopi_jit_vector_bits() < 512) GTEST_SKIP() << "no 512-bit vectors: nothing streams";
  std::string plan = UirFile("stream_plan.uir",
                             "%A = param : slot=0 dtype=f32 shape=(4096,)\n%B = param : slot=1 dtype=f32 shape=(4096,)\n"
                             "%m = mul %A, %B\n%o = add %m, %A\n");
  const std::string env = "UOPC_STREAM_MIN_BYTES=1 UOPC_CACHE=off";
  CliRun a = UopcEnv(env, "compile --emit=asm " + Q(plan));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_TRUE(Streams(a.out));
  CliRun b = UopcEnv(env, "compile --emit=asm --no-stream " + Q(plan));
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(b.out.find("movnt"), std::string::npos);
  CliRun c = UopcEnv("UOPC_STREAM=off " + env, "compile --emit=asm " + Q(plan));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out.find("movnt"), std::string::npos);
  std::string kern = ExamplePath("copy_kernel.uir");
  CliRun d = UopcEnv(env, "compile --emit=asm " + Q(kern)), e = UopcEnv(env, "compile --emit=asm --stream " + Q(kern));
  ASSERT_EQ(d.status, 0) << d.err;
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(d.out.find("movnt"), std::string::npos);
  EXPECT_NE(e.out.find("sfence"), std::string::npos);  // the copy's 32 floats: two copies of the loops, fenced
  CliRun r = UopcEnv(env, "jit-run " + Q(ExamplePath("mul_add.uir")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "[11, 42, 93]\n");
}

// The same bits as plain C, with the output aligned to 64 bytes (the
// streaming copy) and one float off (the other copy), at both tiers, for
// sizes with and without a remainder after the vector loop.
TEST(Stream, AlignedAndUnalignedOutputsMatchPlainC) {
  EnvScope force("UOPC_STREAM_MIN_BYTES", "1");
  for (int n : {1024, 1031, 5}) {
    for (uopc_tier t : {UOPC_TIER_FAST, UOPC_TIER_STRONG}) {
      Ctx x;
      uopc_node *root = MulAdd(x.c, n);
      ASSERT_NE(root, nullptr) << x.err();
      uopc_compile_opts o{t, UOPC_COMPILE_STREAM, 0};
      uopc_error e{};
      uopc_kernel *k = uopc_compile(x.c, root, &o, &e);
      ASSERT_NE(k, nullptr) << e.msg;
      std::vector<float> a(n), b(n), want(n);
      uint32_t s = 777u + (uint32_t)n;
      for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        a[i] = (float)((int32_t)s >> 8) * 0x1p-20f;
        s = s * 1664525u + 1013904223u;
        b[i] = (float)((int32_t)s >> 8) * 0x1p-21f;
        volatile float m = a[i] * b[i];  // no contraction into an FMA
        want[i] = m + a[i];
      }
      size_t bytes = ((size_t)n * 4 + 4 + 63) / 64 * 64;
      float *mem = (float *)aligned_alloc(64, bytes);
      ASSERT_NE(mem, nullptr);
      for (int off : {0, 1}) {
        float *out = mem + off;
        memset(mem, 0xff, bytes);
        void *bufs[3] = {a.data(), b.data(), out};
        ASSERT_EQ(uopc_kernel_call(k, bufs, 3, &e), UOPC_OK) << e.msg;
        EXPECT_EQ(memcmp(out, want.data(), (size_t)n * 4), 0) << "n " << n << " tier " << t << " offset " << off;
      }
      free(mem);
      uopc_kernel_free(k);
    }
  }
}

// Whole plans, whose result kernels stream at any size
// (UOPC_STREAM_MIN_BYTES=1): a*b+a, and softmax over rows (a broadcast, two
// reductions, exp2; only the last kernel writes the result), at 1 and 2
// threads (split kernels: each chunk its own aligned copy), strict and
// fast: the same bits as the plan compiled with UOPC_COMPILE_NO_STREAM.
TEST(Stream, PlansGiveTheBitsOfPlansWithout) {
  EnvScope force("UOPC_STREAM_MIN_BYTES", "1"), split("UOPC_SPLIT_MIN_WORK", "1");
  const char *progs[] = {
      "%A = param : slot=0 dtype=f32 shape=(4099,)\n%B = param : slot=1 dtype=f32 shape=(4099,)\n"
      "%m = mul %A, %B\n%o = add %m, %A\n",
      "%X = param : slot=0 dtype=f32 shape=(48, 320)\n%m = reduce %X : op=max pop=1\n%m1 = reshape %m, (48, 1)\n"
      "%m2 = expand %m1, (48, 320)\n%nm = mul %m2, -1.0\n%d = add %X, %nm\n%l = mul %d, 1.4426950408889634\n"
      "%e = exp2 %l\n%s = reduce %e : op=add pop=1\n%s1 = reshape %s, (48, 1)\n%s2 = expand %s1, (48, 320)\n"
      "%r = recip %s2\n%y = mul %e, %r\n"};
  for (const char *text : progs) {
    for (uint32_t threads : {1u, 2u}) {
      for (unsigned fast : {0u, (unsigned)UOPC_COMPILE_FAST_MATH}) {
        std::vector<std::string> outs;
        for (unsigned nostream : {0u, (unsigned)UOPC_COMPILE_NO_STREAM}) {
          uopc_cache_clear_memory();
          Ctx x;
          uopc_error e{};
          uopc_node *root = uopc_uir_parse(x.c, text, strlen(text), "t.uir", &e);
          ASSERT_NE(root, nullptr) << e.msg;
          uopc_compile_opts o{UOPC_TIER_FAST, fast | nostream, threads};
          uopc_plan *p = uopc_plan_compile(x.c, root, &o, &e);
          ASSERT_NE(p, nullptr) << e.msg;
          Inputs in;
          MakeInputs(p, 7, &in);
          outs.push_back(Call(p, &in, true));  // a 64-byte aligned result: the streaming copy runs
          uopc_plan_free(p);
          ASSERT_NE(outs.back().rfind("error:", 0), 0u) << outs.back();
        }
        EXPECT_EQ(outs[0], outs[1]) << text << " threads " << threads << " fast " << fast;
      }
    }
  }
  uopc_cache_clear_memory();
}

}  // namespace
