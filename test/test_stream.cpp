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
#include <initializer_list>
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
uopc_node *MulAdd(uopc_ctx *c, int n, uopc_dtype t = UOPC_DT_F32) {
  uopc_node *A = uopc_buffer(c, 0, t, n), *B = uopc_buffer(c, 1, t, n), *O = uopc_buffer(c, 2, t, n);
  uopc_node *i = uopc_range_k(c, n, 0);
  uopc_node *a = uopc_load1(c, A, i);
  return uopc_sink1(c, uopc_end1(c, uopc_store1(c, O, i, uopc_add(c, uopc_mul(c, a, uopc_load1(c, B, i)), a)), i));
}


// The plan of the .uir text (its root in *root), compiled with o; NULL with
// the parse or compile error in *e.
uopc_plan *PlanOf(uopc_ctx *c, const char *text, uopc_compile_opts o, uopc_node **root, uopc_error *e) {
  *root = uopc_uir_parse(c, text, strlen(text), "t.uir", e);
  return *root ? uopc_plan_compile(c, *root, &o, e) : nullptr;
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

// Calls kernel k (buffers a, b, out) with its output at each byte offset
// from a 64-byte boundary: the n bytes written are want's, and the bytes
// just before and after the output are untouched.
void ExpectAtOffsets(uopc_kernel *k, const void *a, const void *b, const void *want, size_t n,
                     std::initializer_list<int> offsets, const std::string &what) {
  size_t bytes = (n + 64 + 63) / 64 * 64;
  char *mem = (char *)aligned_alloc(64, bytes);
  ASSERT_NE(mem, nullptr);
  for (int off : offsets) {
    char *out = mem + off;
    memset(mem, 0xff, bytes);
    void *bufs[3] = {const_cast<void *>(a), const_cast<void *>(b), out};
    uopc_error e{};
    EXPECT_EQ(uopc_kernel_call(k, bufs, 3, &e), UOPC_OK) << e.msg;
    EXPECT_EQ(memcmp(out, want, n), 0) << what << " byte offset " << off;
    EXPECT_EQ((unsigned char)out[n], 0xff) << what << " byte offset " << off;
    if (off) EXPECT_EQ((unsigned char)out[-1], 0xff) << what << " byte offset " << off;
  }
  free(mem);
}

// The same bits as plain C, with the output aligned to 64 bytes, whole
// floats off (the peel's split, at 1024 and 1031 elements; at 5 the aligned
// copy or the ordinary one) and bytes off that no peel aligns, at both
// tiers, for sizes with and without a remainder after the vector loop;
// nothing written before or after the output.
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
      // byte offsets: aligned, whole floats off (the peel, at n >= 512), and not a multiple of 4 (x86 allows it;
      // the peel cannot align it: every iteration runs in the peel's scalar loop)
      ExpectAtOffsets(k, a.data(), b.data(), want.data(), (size_t)n * 4, {0, 4, 16, 60, 1, 2, 3, 61},
                      "n " + std::to_string(n) + " tier " + std::to_string(t));
      uopc_kernel_free(k);
    }
  }
}

// The same for an f16 kernel (a loop of f16 alone: two vectors of f32 lanes
// and the peel, emit.c f16_loop and find_peel): outputs at every even byte
// offset the peel aligns and at odd ones it cannot (every iteration in the
// peel), against the same kernel compiled without streaming stores, at both
// tiers; nothing written before or after the output.
TEST(Stream, F16OutputsAtAnyOffsetMatchTheKernelWithout) {
  EnvScope force("UOPC_STREAM_MIN_BYTES", "1");
  const bool wide = uopi_jit_vector_bits() >= 512;
  for (int n : {2048, 2063, 5}) {
    for (uopc_tier t : {UOPC_TIER_FAST, UOPC_TIER_STRONG}) {
      Ctx x;
      uopc_node *root = MulAdd(x.c, n, UOPC_DT_F16);
      ASSERT_NE(root, nullptr) << x.err();
      uopc_compile_opts o{t, UOPC_COMPILE_STREAM, 0}, plain{t, 0, 0};
      uopc_error e{};
      uopc_kernel *k = uopc_compile(x.c, root, &o, &e), *ref = uopc_compile(x.c, root, &plain, &e);
      ASSERT_TRUE(k && ref) << e.msg;
      if (wide && n >= 1024) EXPECT_NE(Asm(x.c, root, t).find("vmovntdq"), std::string::npos) << "n " << n;
      std::vector<uint16_t> a(n), b(n), want(n);
      uint32_t s = 4242u + (uint32_t)n;
      for (int i = 0; i < n; i++) {  // finite halves of both signs, exponents -8 .. 7
        s = s * 1664525u + 1013904223u;
        a[i] = (uint16_t)(((s >> 16) & 0x8000u) | ((7u + (s >> 20) % 16u) << 10) | (s & 0x3ffu));
        s = s * 1664525u + 1013904223u;
        b[i] = (uint16_t)(((s >> 16) & 0x8000u) | ((7u + (s >> 20) % 16u) << 10) | (s & 0x3ffu));
      }
      void *rbufs[3] = {a.data(), b.data(), want.data()};
      ASSERT_EQ(uopc_kernel_call(ref, rbufs, 3, &e), UOPC_OK) << e.msg;
      ExpectAtOffsets(k, a.data(), b.data(), want.data(), (size_t)n * 2, {0, 2, 16, 34, 62, 1, 3, 63},
                      "n " + std::to_string(n) + " tier " + std::to_string(t));
      uopc_kernel_free(k);
      uopc_kernel_free(ref);
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
          uopc_node *root;
          uopc_plan *p = PlanOf(x.c, text, uopc_compile_opts{UOPC_TIER_FAST, fast | nostream, threads}, &root, &e);
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

// Streaming whatever the result's alignment (lib/codegen/emit.c, find_peel
// and emit_peeled): a kernel whose stores share one index in one innermost
// loop splits each run of that loop where its stores reach a 64-byte
// boundary.  The result at every offset from a 64-byte boundary that is a
// multiple of its element size: 1-D, rows that are not a multiple of the
// vector (1000), rows too short to be worth a peel (10), f32, i32 and f16
// results (f16 in loops given two vectors of f32 lanes, emit.c f16_loop,
// that load nothing wider; an f32 result cast to f16 streams only when
// aligned, and a loop with EXP2 does not stream), and bool ones (one byte: every
// offset), which are not peeled (their stores are never a whole line), at 1 and 2 threads (split
// kernels, whose index is the counter plus the chunk's start), strict and
// fast: the bits of the plan without streaming stores.  The peeled kernels
// have the peel (its loop in the IR) and non-temporal stores.
TEST(Stream, ResultsAtAnyOffsetGiveTheBitsOfPlansWithout) {
  EnvScope force("UOPC_STREAM_MIN_BYTES", "1"), split("UOPC_SPLIT_MIN_WORK", "1");
  struct Prog {
    const char *text;
    size_t elem;
    bool peeled;   // 4-byte (or f16_loop's f16 of f16) elements in rows of at least PEEL_MIN_BYTES (emit.c): the peel expected
    bool vectors;  // and non-temporal stores
  };
  const Prog progs[] = {
      {"%A = param : slot=0 dtype=f32 shape=(4099,)\n%B = param : slot=1 dtype=f32 shape=(4099,)\n"
       "%m = mul %A, %B\n%o = add %m, %A\n", 4, true, true},
      {"%A = param : slot=0 dtype=f32 shape=(37, 1000)\n%B = param : slot=1 dtype=f32 shape=(37, 1000)\n"
       "%m = mul %A, %B\n%o = add %m, %A\n", 4, true, true},
      {"%A = param : slot=0 dtype=f32 shape=(300, 10)\n%B = param : slot=1 dtype=f32 shape=(300, 10)\n"
       "%m = mul %A, %B\n%o = add %m, %A\n", 4, false, false},
      {"%A = param : slot=0 dtype=f32 shape=(3001,)\n%B = param : slot=1 dtype=f32 shape=(3001,)\n"
       "%m = mul %A, %B\n%h = cast %m : dtype=f16\n", 2, false, true},
      {"%A = param : slot=0 dtype=f16 shape=(37, 1100)\n%B = param : slot=1 dtype=f16 shape=(37, 1100)\n"
       "%m = mul %A, %B\n%o = add %m, %A\n", 2, true, true},
      {"%A = param : slot=0 dtype=f32 shape=(3001,)\n%e = exp2 %A\n%h = cast %e : dtype=f16\n", 2, false, false},
      {"%A = param : slot=0 dtype=f32 shape=(5003,)\n%B = param : slot=1 dtype=f32 shape=(5003,)\n"
       "%c = cmplt %A, %B\n", 1, false, false},
      {"%A = param : slot=0 dtype=i32 shape=(4099,)\n%B = param : slot=1 dtype=i32 shape=(4099,)\n"
       "%m = mul %A, %B\n%o = add %m, %A\n", 4, true, true}};
  const bool wide = uopi_jit_vector_bits() >= 512;
  for (const Prog &g : progs) {
    for (uint32_t threads : {1u, 2u}) {
      for (unsigned fast : {0u, (unsigned)UOPC_COMPILE_FAST_MATH}) {
        std::string want;
        for (unsigned nostream : {(unsigned)UOPC_COMPILE_NO_STREAM, 0u}) {
          uopc_cache_clear_memory();
          Ctx x;
          uopc_error e{};
          uopc_node *root;
          uopc_compile_opts o{UOPC_TIER_FAST, fast | nostream, threads};
          uopc_plan *p = PlanOf(x.c, g.text, o, &root, &e);
          ASSERT_NE(p, nullptr) << e.msg;
          Inputs in;
          MakeInputs(p, 11, &in);
          if (nostream) {
            want = CallAt(p, &in, 0);
            ASSERT_NE(want.rfind("error:", 0), 0u) << want;
          } else {
            for (size_t off = 0; off < 64; off += g.elem)
              ASSERT_EQ(CallAt(p, &in, off), want) << g.text << "threads " << threads << " fast " << fast
                                                   << " result at 64k + " << off;
            if (wide) {
              char *ir = uopc_plan_emit(x.c, root, &o, 0, &e), *as = uopc_plan_emit(x.c, root, &o, 1, &e);
              ASSERT_TRUE(ir && as) << e.msg;
              EXPECT_EQ(strstr(ir, "peel.loop") != nullptr, g.peeled) << g.text << "threads " << threads;
              if (g.vectors) EXPECT_NE(strstr(as, "vmovnt"), nullptr) << g.text << "threads " << threads;
              free(ir), free(as);
            }
          }
          uopc_plan_free(p);
        }
      }
    }
  }
  uopc_cache_clear_memory();
}

// Two results, each written in a loop of its own (two ENDs): the stores are
// not all in one loop, so the kernel keeps the aligned-only streaming copy
// (no peel); the values are right with the results at equal and unequal
// offsets, and nothing is written before or past either.
TEST(Stream, TwoResultsInTwoLoopsAtEqualAndUnequalOffsets) {
  EnvScope force("UOPC_STREAM_MIN_BYTES", "1");
  const int n = 3000;
  {
    Ctx x;
    uopc_node *A = uopc_buffer(x.c, 0, UOPC_DT_F32, n), *B = uopc_buffer(x.c, 1, UOPC_DT_F32, n);
    uopc_node *O1 = uopc_buffer(x.c, 2, UOPC_DT_F32, n), *O2 = uopc_buffer(x.c, 3, UOPC_DT_F32, n);
    uopc_node *i = uopc_range_k(x.c, n, 0), *j = uopc_range_k(x.c, n, 1);
    uopc_node *ai = uopc_load1(x.c, A, i), *bi = uopc_load1(x.c, B, i);
    uopc_node *aj = uopc_load1(x.c, A, j), *bj = uopc_load1(x.c, B, j);
    uopc_node *ends[2] = {uopc_end1(x.c, uopc_store1(x.c, O1, i, uopc_mul(x.c, ai, bi)), i),
                          uopc_end1(x.c, uopc_store1(x.c, O2, j, uopc_add(x.c, aj, bj)), j)};
    uopc_node *root = uopc_sink(x.c, ends, 2);
    ASSERT_NE(root, nullptr) << x.err();
    uopc_compile_opts o{UOPC_TIER_FAST, UOPC_COMPILE_STREAM, 0};
    uopc_error e{};
    if (uopi_jit_vector_bits() >= 512) {
      char *ir = uopc_emit_llvm(x.c, root, &o, &e);
      ASSERT_NE(ir, nullptr) << e.msg;
      EXPECT_EQ(strstr(ir, "peel.loop"), nullptr);
      EXPECT_NE(strstr(ir, "streaming"), nullptr);
      free(ir);
    }
    uopc_kernel *k = uopc_compile(x.c, root, &o, &e);
    ASSERT_NE(k, nullptr) << e.msg;
    std::vector<float> a(n), b(n), w1(n), w2(n);
    for (int q = 0; q < n; q++) {
      a[q] = (float)(q % 97) * 0.37f - 11.0f, b[q] = (float)(q % 89) * -0.53f + 7.0f;
      volatile float m = a[q] * b[q], s = a[q] + b[q];
      w1[q] = m, w2[q] = s;
    }
    size_t bytes = ((size_t)n * 4 + 128 + 63) / 64 * 64;  // aligned_alloc: a multiple of the alignment
    char *m1 = (char *)aligned_alloc(64, bytes), *m2 = (char *)aligned_alloc(64, bytes);
    ASSERT_TRUE(m1 && m2);
    for (size_t o1 : {0, 4, 16, 60})
      for (size_t o2 : {0, 4, 16, 60}) {
        memset(m1, 0xff, bytes), memset(m2, 0xff, bytes);
        void *bufs[4] = {a.data(), b.data(), m1 + o1, m2 + o2};
        ASSERT_EQ(uopc_kernel_call(k, bufs, 4, &e), UOPC_OK) << e.msg;
        EXPECT_EQ(memcmp(m1 + o1, w1.data(), (size_t)n * 4), 0) << "at " << o1 << ", " << o2;
        EXPECT_EQ(memcmp(m2 + o2, w2.data(), (size_t)n * 4), 0) << "at " << o1 << ", " << o2;
        EXPECT_EQ((unsigned char)m1[o1 + (size_t)n * 4], 0xff);  // nothing past the end
        EXPECT_EQ((unsigned char)m2[o2 + (size_t)n * 4], 0xff);
        if (o1) EXPECT_EQ((unsigned char)m1[o1 - 1], 0xff);       // nor before the start
        if (o2) EXPECT_EQ((unsigned char)m2[o2 - 1], 0xff);
      }
    free(m1), free(m2);
    uopc_kernel_free(k);
  }
}

}  // namespace
