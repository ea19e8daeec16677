// Kernels through the public API (uopc_compile, uopc_kernel_call,
// uopc_emit_llvm/asm): the copy kernel of docs/uir.md before and after index
// simplification, loop order, floor division on negative numbers, bounds
// guards, undefined data, the FP environment, threads, f16 and bool buffers,
// vectorization, and a bounded differential fuzz of every (op, dtype) triple
// against exec_alu.
#include <gtest/gtest.h>

#include <xmmintrin.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fuzz.h"
#include "uopc/uopc.h"
#include "support/ctx.h"
#include "support/env.h"
#include "support/valgrind.h"

namespace {

const uopc_tier kTiers[] = {UOPC_TIER_FAST, UOPC_TIER_STRONG};

struct KernelFree {
  void operator()(uopc_kernel *k) const { uopc_kernel_free(k); }
};
using Kernel = std::unique_ptr<uopc_kernel, KernelFree>;

uopc_node *Parse(uopc_ctx *c, const std::string &text) {
  uopc_error e{};
  uopc_node *r = uopc_uir_parse(c, text.data(), text.size(), "test.uir", &e);
  EXPECT_NE(r, nullptr) << e.line << ":" << e.col << ": " << e.msg << "\n" << text;
  return r;
}

Kernel Compile(uopc_ctx *c, uopc_node *root, uopc_tier t = UOPC_TIER_FAST) {
  uopc_compile_opts o{};
  o.tier = t;
  uopc_error e{};
  uopc_kernel *k = uopc_compile(c, root, &o, &e);
  EXPECT_NE(k, nullptr) << e.msg;
  return Kernel(k);
}

uopc_status Call(const Kernel &k, std::vector<void *> bufs, uopc_error *e = nullptr) {
  uopc_error tmp{};
  uopc_status st = uopc_kernel_call(k.get(), bufs.data(), (uint32_t)bufs.size(), e ? e : &tmp);
  return st;
}

std::string Text(char *s) {
  std::string r = s ? s : "";
  std::free(s);
  return r;
}

std::string Llvm(uopc_ctx *c, uopc_node *root) {
  uopc_error e{};
  char *s = uopc_emit_llvm(c, root, nullptr, &e);
  EXPECT_NE(s, nullptr) << e.msg;
  return Text(s);
}

std::string Asm(uopc_ctx *c, uopc_node *root, uopc_tier t) {
  uopc_compile_opts o{};
  o.tier = t;
  uopc_error e{};
  char *s = uopc_emit_asm(c, root, &o, &e);
  EXPECT_NE(s, nullptr) << e.msg;
  return Text(s);
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float F32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Python's // and % on integers.
int64_t PyDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
int64_t PyMod(int64_t a, int64_t b) { return a - b * PyDiv(a, b); }

// The kernel of docs/uir.md, read from the document itself.
std::string DocKernel() {
  std::ifstream f(std::string(UOPC_SOURCE_DIR) + "/docs/uir.md");
  std::string line, out;
  bool in = false;
  while (std::getline(f, line)) {
    if (line.rfind("    %A = buffer", 0) == 0) in = true;
    if (in) {
      if (line.rfind("    ", 0) != 0) break;
      out += line.substr(4) + "\n";
      if (line.find("= sink") != std::string::npos) break;
    }
  }
  return out;
}

// The same kernel with the source index made unsimplifiable by construction:
// a 0 loaded from BUFFER slot 2 is added to it (index expressions with a LOAD
// are left as written), so the floordiv/floormod are computed at run time.
std::string UnsimplifiedDocKernel() {
  std::string k = DocKernel();
  const std::string from = "%src = index %A, %idx";
  size_t at = k.find(from);
  EXPECT_NE(at, std::string::npos);
  k.replace(at, from.size(),
            "%Z = buffer : slot=2 dtype=i32 shape=(1,)\n%zi = index %Z, 0\n%z = load %zi\n%idx2 = add %idx, %z\n"
            "%src = index %A, %idx2");
  return k;
}

std::vector<float> CopySource() {
  std::vector<float> a(32);
  for (int i = 0; i < 32; i++) a[i] = (float)i * 1.5f - 7.0f;
  a[3] = -0.0f;
  a[5] = F32(0x7fc12345);  // a NaN payload must be copied as is
  a[6] = F32(0x00000001);  // a denormal
  return a;
}

// ---- the copy kernel ------------------------------------------------------------

TEST(KernelCopy, DocKernelParsesAndSimplifiesToFlat) {
  std::string text = DocKernel();
  ASSERT_NE(text.find("%k = sink %e"), std::string::npos) << text;
  Ctx c;
  uopc_node *k = Parse(c.c, text);
  ASSERT_NE(k, nullptr);
  uopc_node *s = uopc_simplify(c.c, k);
  ASSERT_NE(s, nullptr) << c.err();
}

TEST(KernelCopy, RunsAndCopiesAfterSimplify) {
  for (uopc_tier t : kTiers) {
    Ctx c;
    uopc_node *k = Parse(c.c, DocKernel());
    Kernel kern = Compile(c.c, k, t);
    ASSERT_TRUE(kern);
    EXPECT_EQ(uopc_kernel_nbufs(kern.get()), 2u);
    EXPECT_EQ(uopc_kernel_buf_dtype(kern.get(), 1), UOPC_DT_F32);
    EXPECT_EQ(uopc_kernel_buf_len(kern.get(), 1), 32);
    std::vector<float> a = CopySource(), o(32, 99.0f);
    uopc_error e{};
    ASSERT_EQ(Call(kern, {a.data(), o.data()}, &e), UOPC_OK) << e.msg;
    for (int i = 0; i < 32; i++) EXPECT_EQ(Bits(o[i]), Bits(a[i])) << "tier " << t << " i " << i;
  }
}

TEST(KernelCopy, RunsAndCopiesBeforeSimplify) {
  for (uopc_tier t : kTiers) {
    Ctx c;
    uopc_node *k = Parse(c.c, UnsimplifiedDocKernel());
    ASSERT_NE(k, nullptr);
    // the divisions are really there: computed at run time
    std::string ir = Llvm(c.c, k);
    EXPECT_TRUE(ir.find("sdiv") != std::string::npos || ir.find("srem") != std::string::npos) << ir;
    Kernel kern = Compile(c.c, k, t);
    ASSERT_TRUE(kern);
    std::vector<float> a = CopySource(), o(32, 99.0f);
    int32_t z = 0;
    uopc_error e{};
    ASSERT_EQ(Call(kern, {a.data(), o.data(), &z}, &e), UOPC_OK) << e.msg;
    for (int i = 0; i < 32; i++) EXPECT_EQ(Bits(o[i]), Bits(a[i])) << "tier " << t << " i " << i;
    // with 1 loaded instead, it reads A[flat + 1]: the last element is out
    // of bounds, found before the access, with the earlier stores done
    z = 1;
    std::fill(o.begin(), o.end(), 99.0f);
    EXPECT_EQ(Call(kern, {a.data(), o.data(), &z}, &e), UOPC_ERR_EVAL);
    EXPECT_NE(std::string(e.msg).find("out of bounds in BUFFER slot 0"), std::string::npos) << e.msg;
    for (int i = 0; i < 31; i++) EXPECT_EQ(Bits(o[i]), Bits(a[i + 1])) << i;
    EXPECT_EQ(o[31], 99.0f);
  }
}

// After simplification the copy kernel computes no division: none in the IR,
// none in the assembly of either tier.  (Before, the IR has them.)
TEST(KernelCopy, SimplifiedKernelHasNoDivision) {
  Ctx c;
  uopc_node *k = Parse(c.c, DocKernel());
  std::string ir = Llvm(c.c, k);
  for (const char *op : {"sdiv", "srem", "udiv", "urem"}) EXPECT_EQ(ir.find(op), std::string::npos) << op << "\n" << ir;
  std::regex div_insn(R"(\s(i?div[bwlq]?)\s)");
  for (uopc_tier t : kTiers) {
    std::string s = Asm(c.c, k, t);
    EXPECT_NE(s.find("ret"), std::string::npos) << s;
    EXPECT_FALSE(std::regex_search(s, div_insn)) << "tier " << t << "\n" << s;
  }
}

// ---- loops --------------------------------------------------------------------------

// O[0] = O[0] * 3 + A[i*8 + j] in i32 (wrapping): the result depends on the
// order the elements are visited in.  END's ranges nest outermost first.
TEST(KernelLoops, NestAsWritten) {
  const char *kText = R"(
%A = buffer : slot=0 dtype=i32 shape=(32,)
%O = buffer : slot=1 dtype=i32 shape=(1,)
%i = range 4 : idx=0
%j = range 8 : idx=1
%i8 = mul %i, 8
%flat = add %i8, %j
%pa = index %A, %flat
%a = load %pa
%po = index %O, 0
%o = load %po
%o3 = mul %o, 3
%v = add %o3, %a
%st = store %po, %v
)";
  for (int outer_i = 0; outer_i < 2; outer_i++)
    for (uopc_tier t : kTiers) {
      std::string text = kText;
      text += outer_i ? "%e = end %st, %i, %j\n%k = sink %e\n" : "%e = end %st, %j, %i\n%k = sink %e\n";
      Ctx c;
      uopc_node *k = Parse(c.c, text);
      Kernel kern = Compile(c.c, k, t);
      ASSERT_TRUE(kern);
      std::vector<int32_t> a(32), o(1, 7);
      for (int x = 0; x < 32; x++) a[x] = x * 7919 - 100000;
      ASSERT_EQ(Call(kern, {a.data(), o.data()}), UOPC_OK);
      uint32_t ref = 7;
      if (outer_i)
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 8; j++) ref = ref * 3u + (uint32_t)a[i * 8 + j];
      else
        for (int j = 0; j < 8; j++)
          for (int i = 0; i < 4; i++) ref = ref * 3u + (uint32_t)a[i * 8 + j];
      EXPECT_EQ((uint32_t)o[0], ref) << "outer " << (outer_i ? "i" : "j") << " tier " << t;
    }
}

// Read after write through a buffer: O[i+1] = O[i] + A[i] is a running sum;
// a vectorizer that ignored the dependence would get it wrong.
TEST(KernelLoops, ReadAfterWriteIsSequential) {
  const char *text = R"(
%A = buffer : slot=0 dtype=f32 shape=(1000,)
%O = buffer : slot=1 dtype=f32 shape=(1001,)
%i = range 1000 : idx=0
%pa = index %A, %i
%a = load %pa
%po = index %O, %i
%o = load %po
%s = add %o, %a
%i1 = add %i, 1
%pn = index %O, %i1
%st = store %pn, %s
%e = end %st, %i
%k = sink %e
)";
  for (uopc_tier t : kTiers) {
    Ctx c;
    Kernel kern = Compile(c.c, Parse(c.c, text), t);
    ASSERT_TRUE(kern);
    std::vector<float> a(1000), o(1001, 0.0f);
    for (int i = 0; i < 1000; i++) a[i] = 1.0f / (float)(i + 1);
    o[0] = 0.25f;
    ASSERT_EQ(Call(kern, {a.data(), o.data()}), UOPC_OK);
    float r = 0.25f;
    for (int i = 0; i < 1000; i++) {
      volatile float s = r + a[i];
      r = s;
      ASSERT_EQ(Bits(o[i + 1]), Bits(r)) << "tier " << t << " i " << i;
    }
  }
}

// One RANGE closed by two ENDs: two loops, in order; the second reads what
// the first wrote.
TEST(KernelLoops, RangeClosedTwiceRunsTwoLoopsInOrder) {
  // built with the constructors: the reverse index 63 - i of O in the second loop
  Ctx c;
  uopc_ctx *x = c.c;
  uopc_node *A = uopc_buffer(x, 0, UOPC_DT_I32, 64), *O = uopc_buffer(x, 1, UOPC_DT_I32, 64), *P = uopc_buffer(x, 2, UOPC_DT_I32, 64);
  uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 64), 0);
  uopc_node *a = uopc_load(x, uopc_index(x, A, &i, 1));
  uopc_node *s1 = uopc_store(x, uopc_index(x, O, &i, 1), uopc_mul_k(x, a, 2));
  uopc_node *e1 = uopc_end(x, s1, &i, 1);
  uopc_node *rev = uopc_add_k(x, uopc_mul_k(x, i, -1), 63);
  uopc_node *o = uopc_load(x, uopc_index(x, O, &rev, 1));
  uopc_node *s2 = uopc_store(x, uopc_index(x, P, &i, 1), uopc_add_k(x, o, 1));
  uopc_node *e2 = uopc_end(x, s2, &i, 1);
  uopc_node *effects[2] = {e1, e2};
  uopc_node *k = uopc_sink(x, effects, 2);
  ASSERT_NE(k, nullptr) << c.err();
  for (uopc_tier t : kTiers) {
    Kernel kern = Compile(x, k, t);
    ASSERT_TRUE(kern);
    std::vector<int32_t> va(64), vo(64, -1), vp(64, -1);
    for (int j = 0; j < 64; j++) va[j] = j * j - 50;
    ASSERT_EQ(Call(kern, {va.data(), vo.data(), vp.data()}), UOPC_OK);
    for (int j = 0; j < 64; j++) {
      EXPECT_EQ(vo[j], va[j] * 2);
      EXPECT_EQ(vp[j], va[63 - j] * 2 + 1);
    }
  }
}

// Read after write across iterations: A[0] is read before the loop (for
// O[0]) and again inside the loop that writes A[i].  Iteration i reads the
// A[0] that iteration 0 wrote, not the value read before the loop: A ends
// [a0+1, a0+2, a0+2, a0+2].  (The emitter before the linearize stage reused
// the value read before the loop and gave [a0+1, a0+1, a0+1, a0+1].)
TEST(KernelLoops, ReadAfterWriteAcrossIterations) {
  const char *text = R"(
%A = buffer : slot=0 dtype=i32 shape=(4,)
%O = buffer : slot=1 dtype=i32 shape=(4,)
%z = index %A, 0
%x = load %z
%o0 = index %O, 0
%s0 = store %o0, %x
%i = range 4 : idx=0
%ai = index %A, %i
%y = add %x, 1
%s1 = store %ai, %y
%e = end %s1, %i
%k = sink %s0, %e
)";
  for (uopc_tier t : kTiers) {
    Ctx c;
    Kernel kern = Compile(c.c, Parse(c.c, text), t);
    ASSERT_TRUE(kern);
    std::vector<int32_t> a = {10, 20, 30, 40}, o(4, 0);
    ASSERT_EQ(Call(kern, {a.data(), o.data()}), UOPC_OK);
    EXPECT_EQ(a, (std::vector<int32_t>{11, 12, 12, 12})) << "tier " << t;
    EXPECT_EQ(o[0], 10);
  }
}

// A value read before a loop that stores to its buffer, used after the
// loop, is read again: P[0] = A[0] after A[i] = i + 5 for all i, in a kernel
// that also read A[0] before the loop.
TEST(KernelLoops, ReadAfterALoopThatWrote) {
  Ctx c;
  uopc_ctx *x = c.c;
  uopc_node *A = uopc_buffer(x, 0, UOPC_DT_I32, 8), *P = uopc_buffer(x, 1, UOPC_DT_I32, 2);
  uopc_node *zero = uopc_const_i(x, UOPC_DT_I32, 0), *one = uopc_const_i(x, UOPC_DT_I32, 1);
  uopc_node *a0 = uopc_load(x, uopc_index(x, A, &zero, 1));
  uopc_node *s0 = uopc_store(x, uopc_index(x, P, &one, 1), a0);
  uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 8), 0);
  uopc_node *s1 = uopc_store(x, uopc_index(x, A, &i, 1), uopc_add_k(x, i, 5));
  uopc_node *e = uopc_end(x, s1, &i, 1);
  uopc_node *s2 = uopc_store(x, uopc_index(x, P, &zero, 1), a0);
  uopc_node *effects[3] = {s0, e, s2};
  uopc_node *k = uopc_sink(x, effects, 3);
  ASSERT_NE(k, nullptr) << c.err();
  for (uopc_tier t : kTiers) {
    Kernel kern = Compile(x, k, t);
    ASSERT_TRUE(kern);
    std::vector<int32_t> a(8, -7), p(2, 0);
    ASSERT_EQ(Call(kern, {a.data(), p.data()}), UOPC_OK);
    EXPECT_EQ(p[1], -7) << "tier " << t;
    EXPECT_EQ(p[0], 5) << "tier " << t;
  }
}

// ---- depth: nothing recurses, nothing is capped -----------------------------------------

// O[0] = O[0] + 1 inside 10,000 nested ENDs, each closing its own RANGE of 1.
TEST(KernelDepth, TenThousandNestedLoops) {
  constexpr int kDepth = 10000;
  Ctx c;
  uopc_ctx *x = c.c;
  uopc_node *O = uopc_buffer(x, 0, UOPC_DT_I32, 1), *zero = uopc_const_i(x, UOPC_DT_I32, 0);
  uopc_node *p = uopc_index(x, O, &zero, 1);
  uopc_node *e = uopc_store(x, p, uopc_add_k(x, uopc_load(x, p), 1));
  for (int d = kDepth - 1; d >= 0; d--) {
    uopc_node *r = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 1), d);
    e = uopc_end(x, e, &r, 1);
  }
  uopc_node *k = uopc_sink(x, &e, 1);
  ASSERT_NE(k, nullptr) << c.err();
  Kernel kern = Compile(x, k);
  ASSERT_TRUE(kern);
  int32_t o = 41;
  std::vector<void *> bufs = {&o};
  ASSERT_EQ(Call(kern, bufs), UOPC_OK);
  EXPECT_EQ(o, 42);
}

// One END closing 10,000 RANGEs (a loop nest 10,000 deep), and the same
// store under 10,000 levels of SINK(END(SINK(END(...)))).
TEST(KernelDepth, TenThousandRangesOfOneEndAndDeepSinkEndNesting) {
  constexpr int kDepth = 10000;
  Ctx c;
  uopc_ctx *x = c.c;
  uopc_node *O = uopc_buffer(x, 0, UOPC_DT_I32, 1), *zero = uopc_const_i(x, UOPC_DT_I32, 0);
  uopc_node *p = uopc_index(x, O, &zero, 1);
  uopc_node *st = uopc_store(x, p, uopc_add_k(x, uopc_load(x, p), 1));
  std::vector<uopc_node *> r(kDepth);
  for (int d = 0; d < kDepth; d++) r[d] = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 1), d);
  uopc_node *wide = uopc_sink(x, std::vector<uopc_node *>{uopc_end(x, st, r.data(), kDepth)}.data(), 1);
  uopc_node *deep = st;
  for (int d = 0; d < kDepth; d++) {
    uopc_node *s = uopc_sink(x, &deep, 1);
    deep = uopc_end(x, s, &r[d], 1);
  }
  deep = uopc_sink(x, &deep, 1);
  ASSERT_NE(wide, nullptr) << c.err();
  ASSERT_NE(deep, nullptr) << c.err();
  for (uopc_node *k : {wide, deep}) {
    Kernel kern = Compile(x, k);
    ASSERT_TRUE(kern);
    int32_t o = 1;
    std::vector<void *> bufs = {&o};
    ASSERT_EQ(Call(kern, bufs), UOPC_OK);
    EXPECT_EQ(o, 2);
  }
}

// ---- cost in proportion to the kernel ------------------------------------------------------

struct Counting {
  size_t bytes = 0;  // grown, summed over every allocation and reallocation
};

void *CountingRealloc(void *ud, void *p, size_t old_n, size_t new_n) {
  if (new_n == 0) {
    std::free(p);
    return nullptr;
  }
  if (new_n > old_n) static_cast<Counting *>(ud)->bytes += new_n - old_n;
  return std::realloc(p, new_n);
}

// A 10-node kernel in a context that also holds 1,000,000 unrelated nodes:
// compiling it allocates in proportion to the kernel (the emitter's tables
// were once sized by the whole context: 20 bytes a node, 20 MB here).
TEST(KernelCost, SmallKernelInAHugeContextAllocatesLittle) {
  Counting n;
  uopc_alloc a{CountingRealloc, &n};
  uopc_ctx *c = uopc_ctx_new(&a);
  ASSERT_NE(c, nullptr);
  uopc_node *k = Parse(c, R"(
%A = buffer : slot=0 dtype=f32 shape=(37,)
%O = buffer : slot=1 dtype=f32 shape=(37,)
%i = range 37 : idx=0
%pa = index %A, %i
%v = load %pa
%w = mul %v, 2.5
%po = index %O, %i
%st = store %po, %w
%e = end %st, %i
%k = sink %e
)");
  ASSERT_NE(k, nullptr);
  for (int32_t v = 0; v < 1000000; v++) ASSERT_NE(uopc_const_i(c, UOPC_DT_I32, 1000 + v), nullptr);
  ASSERT_GE(uopc_ctx_count(c), 1000000u);
  // the whole pipeline, not a cache hit
  const char *old = std::getenv("UOPC_CACHE");
  std::string saved = old ? old : "";
  setenv("UOPC_CACHE", "0", 1);
  uopc_cache_clear_memory();
  n.bytes = 0;
  uopc_error e{};
  uopc_kernel *kern = uopc_compile(c, k, nullptr, &e);
  size_t during = n.bytes;
  if (old) setenv("UOPC_CACHE", saved.c_str(), 1);
  else unsetenv("UOPC_CACHE");
  ASSERT_NE(kern, nullptr) << e.msg;
  std::printf("[ info     ] compiling a 10-node kernel in a context of %u nodes allocated %zu bytes\n",
              uopc_ctx_count(c), during);
  EXPECT_LT(during, (size_t)256 * 1024);
  std::vector<float> va(37), vo(37);
  for (int j = 0; j < 37; j++) va[j] = (float)j;
  void *bufs[2] = {va.data(), vo.data()};
  ASSERT_EQ(uopc_kernel_call(kern, bufs, 2, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(vo[36], 90.0f);
  uopc_kernel_free(kern);
  uopc_ctx_free(c);
}

// A failing allocator: the n-th allocation through the context fails.
// Compiling a kernel (prepare, key, linearize, verify, emit) with the n-th
// allocation failing, for every n: UOPC_ERR_NOMEM each time, no leak, and
// the context still compiles it afterwards.
TEST(KernelCost, OutOfMemoryEverywhereInCompile) {
  const char *text = R"(
%A = buffer : slot=0 dtype=f32 shape=(16,)
%B = buffer : slot=1 dtype=i32 shape=(16,)
%O = buffer : slot=2 dtype=f32 shape=(16,)
%i = range 16 : idx=0
%j = range 4 : idx=1
%pb = index %B, %i
%b = load %pb
%q = floordiv %b, 3
%pa = index %A, %q
%a = load %pa
%i4 = mul %i, 4
%po = index %O, %i
%o = load %po
%s = add %o, %a
%st = store %po, %s
%e = end %st, %i, %j
%k = sink %e
)";
  const char *old = std::getenv("UOPC_CACHE");
  std::string saved = old ? old : "";
  setenv("UOPC_CACHE", "0", 1);  // every attempt runs the whole pipeline
  long n = 0;
  bool done = false;
  for (; n < 100000 && !done; n++) {
    FailAlloc f;
    uopc_alloc al = f.alloc();
    uopc_ctx *c = uopc_ctx_new(&al);
    ASSERT_NE(c, nullptr);
    uopc_ctx_set_check(c, 1);  // the program verifier allocates too
    uopc_node *k = Parse(c, text);
    ASSERT_NE(k, nullptr);
    uopc_cache_clear_memory();
    f.left = n;
    uopc_error e{};
    uopc_kernel *kern = uopc_compile(c, k, nullptr, &e);
    f.left = -1;
    if (kern) {
      done = true;
    } else {
      EXPECT_EQ(e.code, UOPC_ERR_NOMEM) << "n=" << n << ": " << e.msg;
      uopc_ctx_clear_error(c);
      uopc_cache_clear_memory();
      kern = uopc_compile(c, k, nullptr, &e);
      EXPECT_NE(kern, nullptr) << "n=" << n << ": " << e.msg;
    }
    uopc_kernel_free(kern);
    uopc_ctx_free(c);
    EXPECT_EQ(f.live, 0) << "n=" << n;
  }
  if (old) setenv("UOPC_CACHE", saved.c_str(), 1);
  else unsetenv("UOPC_CACHE");
  EXPECT_TRUE(done);
  EXPECT_GT(n, 20) << "allocation points tried";
  std::printf("[ info     ] %ld allocation points of uopc_compile failed in turn\n", n - 1);
}

// C = A @ B by loops i, k, j, accumulating into the zeroed output, against
// exec_alu's f32 MUL and ADD in the same order (no FMA).
uopc_node *Matmul(uopc_ctx *x, int n) {
  uopc_node *C = uopc_buffer(x, 0, UOPC_DT_F32, n * n), *A = uopc_buffer(x, 1, UOPC_DT_F32, n * n),
            *B = uopc_buffer(x, 2, UOPC_DT_F32, n * n);
  uopc_node *N = uopc_const_i(x, UOPC_DT_I32, n);
  uopc_node *i = uopc_range(x, N, 0), *kk = uopc_range(x, N, 1), *j = uopc_range(x, N, 2);
  uopc_node *ij = uopc_add(x, uopc_mul_k(x, i, n), j), *ik = uopc_add(x, uopc_mul_k(x, i, n), kk),
            *kj = uopc_add(x, uopc_mul_k(x, kk, n), j);
  uopc_node *pc = uopc_index(x, C, &ij, 1);
  uopc_node *prod = uopc_mul(x, uopc_load(x, uopc_index(x, A, &ik, 1)), uopc_load(x, uopc_index(x, B, &kj, 1)));
  uopc_node *st = uopc_store(x, pc, uopc_add(x, uopc_load(x, pc), prod));
  uopc_node *r[3] = {i, kk, j};
  uopc_node *e = uopc_end(x, st, r, 3);
  return uopc_sink(x, &e, 1);
}

float RefF32(uopc_op op, float a, float b) {
  uopc_val in[2] = {{0, a}, {0, b}}, o{};
  EXPECT_EQ(uopc_exec_alu(op, UOPC_DT_F32, UOPC_DT_F32, in, &o), 1);
  return (float)o.f;
}

TEST(KernelLoops, MatmulAccumulatesIntoZeroedOutput) {
  for (int n : {7, 64}) {
    Ctx c;
    uopc_node *k = Matmul(c.c, n);
    ASSERT_NE(k, nullptr) << c.err();
    std::vector<float> a(n * n), b(n * n), ref(n * n, 0.0f);
    for (int i = 0; i < n * n; i++) {
      a[i] = (float)((i * 37) % 101) * 0.013f - 0.6f;
      b[i] = (float)((i * 53) % 97) * 0.021f - 1.1f;
    }
    for (int i = 0; i < n; i++)
      for (int kk = 0; kk < n; kk++)
        for (int j = 0; j < n; j++)
          ref[i * n + j] = RefF32(UOPC_OP_ADD, ref[i * n + j], RefF32(UOPC_OP_MUL, a[i * n + kk], b[kk * n + j]));
    for (uopc_tier t : kTiers) {
      Kernel kern = Compile(c.c, k, t);
      ASSERT_TRUE(kern);
      std::vector<float> out(n * n, 0.0f);
      ASSERT_EQ(Call(kern, {out.data(), a.data(), b.data()}), UOPC_OK);
      EXPECT_EQ(std::memcmp(out.data(), ref.data(), n * n * sizeof(float)), 0) << "n " << n << " tier " << t;
    }
  }
}

// ---- floor division on negative numbers ------------------------------------------------

// Indices and values with // and % of negative numerators (and a negative
// divisor), against Python's semantics: simplified (the indices) and as
// written (the stored values).
TEST(KernelFloorDiv, NegativeNumeratorsInIndicesAndValues) {
  constexpr int N = 10;
  struct Expr {
    const char *name;
    int64_t (*f)(int64_t i);
  };
  const Expr exprs[] = {
      {"(i - 5) // 3 + 2", [](int64_t i) { return PyDiv(i - 5, 3) + 2; }},
      {"(i - 7) % 4", [](int64_t i) { return PyMod(i - 7, 4); }},
      {"(-i) // 4 + 3", [](int64_t i) { return PyDiv(-i, 4) + 3; }},
      {"(i - 5) // -3 + 2", [](int64_t i) { return PyDiv(i - 5, -3) + 2; }},
      {"(i * 7 - 30) % 9", [](int64_t i) { return PyMod(i * 7 - 30, 9); }},
      {"((i - 9) // 2) % 3", [](int64_t i) { return PyMod(PyDiv(i - 9, 2), 3); }},
      {"(i - 4) % -3 + 2", [](int64_t i) { return PyMod(i - 4, -3) + 2; }},
  };
  auto build = [](uopc_ctx *x, int which, uopc_node *i) -> uopc_node * {
    switch (which) {
    case 0: return uopc_add_k(x, uopc_idiv_k(x, uopc_add_k(x, i, -5), 3), 2);
    case 1: return uopc_mod_k(x, uopc_add_k(x, i, -7), 4);
    case 2: return uopc_add_k(x, uopc_idiv_k(x, uopc_neg(x, i), 4), 3);
    case 3: return uopc_add_k(x, uopc_idiv_k(x, uopc_add_k(x, i, -5), -3), 2);
    case 4: return uopc_mod_k(x, uopc_add_k(x, uopc_mul_k(x, i, 7), -30), 9);
    case 5: return uopc_mod_k(x, uopc_idiv_k(x, uopc_add_k(x, i, -9), 2), 3);
    default: return uopc_add_k(x, uopc_mod_k(x, uopc_add_k(x, i, -4), -3), 2);
    }
  };
  for (int w = 0; w < (int)(sizeof exprs / sizeof exprs[0]); w++)
    for (uopc_tier t : kTiers) {
      Ctx c;
      uopc_ctx *x = c.c;
      uopc_node *A = uopc_buffer(x, 0, UOPC_DT_I32, 16), *O = uopc_buffer(x, 1, UOPC_DT_I32, N),
                *V = uopc_buffer(x, 2, UOPC_DT_I32, N);
      uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, N), 0);
      uopc_node *idx = build(x, w, i);
      uopc_node *val = build(x, w, i);  // the same expression, stored as data
      uopc_node *s1 = uopc_store(x, uopc_index(x, O, &i, 1), uopc_load(x, uopc_index(x, A, &idx, 1)));
      uopc_node *s2 = uopc_store(x, uopc_index(x, V, &i, 1), val);
      uopc_node *e1 = uopc_end(x, s1, &i, 1), *e2 = uopc_end(x, s2, &i, 1);
      uopc_node *ee[2] = {e1, e2};
      uopc_node *k = uopc_sink(x, ee, 2);
      ASSERT_NE(k, nullptr) << c.err();
      Kernel kern = Compile(x, k, t);
      ASSERT_TRUE(kern) << exprs[w].name;
      std::vector<int32_t> a(16), o(N, -1), v(N, -1);
      for (int j = 0; j < 16; j++) a[j] = 100 + j;
      uopc_error err{};
      ASSERT_EQ(Call(kern, {a.data(), o.data(), v.data()}, &err), UOPC_OK) << exprs[w].name << ": " << err.msg;
      for (int j = 0; j < N; j++) {
        int64_t want = exprs[w].f(j);
        ASSERT_GE(want, 0);
        ASSERT_LT(want, 16);
        EXPECT_EQ(o[j], 100 + want) << exprs[w].name << " at i=" << j << " tier " << t;
        EXPECT_EQ(v[j], want) << exprs[w].name << " at i=" << j << " tier " << t;
      }
    }
}

// The numerator from memory (so nothing is known about its sign), constant
// divisors of both signs.
TEST(KernelFloorDiv, RuntimeNumeratorsConstantDivisors) {
  for (int d : {1, 2, 3, 7, 8, -1, -2, -3, -8, 1 << 30}) {
    Ctx c;
    uopc_ctx *x = c.c;
    constexpr int N = 257;
    uopc_node *X = uopc_buffer(x, 0, UOPC_DT_I32, N), *Q = uopc_buffer(x, 1, UOPC_DT_I32, N), *R = uopc_buffer(x, 2, UOPC_DT_I32, N);
    uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, N), 0);
    uopc_node *v = uopc_load(x, uopc_index(x, X, &i, 1));
    uopc_node *s1 = uopc_store(x, uopc_index(x, Q, &i, 1), uopc_idiv_k(x, v, d));
    uopc_node *s2 = uopc_store(x, uopc_index(x, R, &i, 1), uopc_mod_k(x, v, d));
    uopc_node *e1 = uopc_end(x, s1, &i, 1), *e2 = uopc_end(x, s2, &i, 1);
    uopc_node *ee[2] = {e1, e2};
    uopc_node *k = uopc_sink(x, ee, 2);
    for (uopc_tier t : kTiers) {
      Kernel kern = Compile(x, k, t);
      ASSERT_TRUE(kern);
      std::vector<int32_t> xv(N), q(N), r(N);
      for (int j = 0; j < N; j++) xv[j] = (j - 128) * 3 + (j % 5);
      xv[0] = INT32_MIN + (d == -1 ? 1 : 0);
      xv[1] = INT32_MAX;
      ASSERT_EQ(Call(kern, {xv.data(), q.data(), r.data()}), UOPC_OK);
      for (int j = 0; j < N; j++) {
        EXPECT_EQ(q[j], PyDiv(xv[j], d)) << xv[j] << " // " << d;
        EXPECT_EQ(r[j], PyMod(xv[j], d)) << xv[j] << " % " << d;
      }
    }
  }
}

// A gather through x % m of an affine x: LLVM 19's loop vectorizer took
// B[(3 * r) % 16] for the strided load B[3 * r] (scalar evolution reads
// % 2^k as a truncation; the no-wrap predicate that made it strided was
// provably false and dropped instead of the vector loop): r = 6 and 7 read
// B[18] and B[21], past the buffer (found by scripts/oracle_kernel.py; the
// strong tier's O2 did the same with B[(5 * r) % 128] over 64 iterations).
// Such loops are no longer vectorized (lib/codegen/emit.c, unsafe_address).
// B is the head of a larger block whose tail holds a sentinel that no
// expected value has, so a read past it shows; every tier, fast math,
// streaming stores.
TEST(KernelFloorDiv, ModuloGatherIsNotAStridedLoad) {
  constexpr int32_t kSentinel = -777777;
  EnvScope stream("UOPC_STREAM_MIN_BYTES", "1");
  struct Case {
    int m, s, off, n;
  };
  std::vector<Case> cases;
  for (int m : {16, 8, 32, 128, 12})
    for (int s : {3, 5, 7, -3})
      for (int off : {0, 1})
        for (int n : {16, 40, 96}) cases.push_back({m, s, off, n});
  for (const Case &q : cases) {
    Ctx c;
    uopc_ctx *x = c.c;
    uopc_node *B = uopc_buffer(x, 0, UOPC_DT_I32, q.m), *O = uopc_buffer(x, 1, UOPC_DT_F32, q.n),
              *P = uopc_buffer(x, 2, UOPC_DT_I32, q.n);
    uopc_node *r = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, q.n), 0);
    uopc_node *idx = uopc_mod_k(x, uopc_add_k(x, uopc_mul_k(x, r, q.s), q.off), q.m);
    uopc_node *v = uopc_load(x, uopc_index(x, B, &idx, 1));
    uopc_node *s1 = uopc_store(x, uopc_index(x, O, &r, 1), uopc_cast(x, v, UOPC_DT_F32));
    uopc_node *s2 = uopc_store(x, uopc_index(x, P, &r, 1), v);
    uopc_node *ee[2] = {uopc_end(x, s1, &r, 1), uopc_end(x, s2, &r, 1)};
    uopc_node *k = uopc_sink(x, ee, 2);
    ASSERT_NE(k, nullptr) << c.err();
    std::vector<int32_t> b(q.m + 64, kSentinel);
    for (int j = 0; j < q.m; j++) b[j] = 1000 + 17 * j;
    for (uopc_tier t : kTiers)
      for (unsigned flags : {0u, (unsigned)UOPC_COMPILE_FAST_MATH, (unsigned)UOPC_COMPILE_STREAM}) {
        uopc_compile_opts o{};
        o.tier = t;
        o.flags = flags;
        uopc_error e{};
        Kernel kern(uopc_compile(x, k, &o, &e));
        ASSERT_TRUE(kern) << e.msg;
        std::vector<float> out(q.n, -1.0f);
        std::vector<int32_t> outi(q.n, -1);
        ASSERT_EQ(Call(kern, {b.data(), out.data(), outi.data()}, &e), UOPC_OK) << e.msg;
        for (int j = 0; j < q.n; j++) {
          int32_t want = b[PyMod((int64_t)q.s * j + q.off, q.m)];
          EXPECT_EQ(outi[j], want) << "B[(" << q.s << "*r + " << q.off << ") % " << q.m << "] at r=" << j << " of "
                                   << q.n << ", tier " << t << ", flags " << flags;
          EXPECT_EQ(out[j], (float)want) << "r=" << j << ", tier " << t << ", flags " << flags;
        }
      }
  }
}

// ---- safety ---------------------------------------------------------------------------------

// Buffers carved out of one block with guard zones around each: an index
// from memory that falls outside is an error, reported before the access,
// and nothing outside the buffers changes.
TEST(KernelSafety, OutOfBoundsIndexIsAnErrorNotAWrite) {
  const char *gather = R"(
%I = buffer : slot=0 dtype=i32 shape=(8,)
%A = buffer : slot=1 dtype=f32 shape=(16,)
%O = buffer : slot=2 dtype=f32 shape=(8,)
%i = range 8 : idx=0
%pi = index %I, %i
%ix = load %pi
%pa = index %A, %ix
%a = load %pa
%po = index %O, %i
%st = store %po, %a
%e = end %st, %i
%k = sink %e
)";
  const char *scatter = R"(
%I = buffer : slot=0 dtype=i32 shape=(8,)
%A = buffer : slot=1 dtype=f32 shape=(16,)
%O = buffer : slot=2 dtype=f32 shape=(8,)
%i = range 8 : idx=0
%pi = index %I, %i
%ix = load %pi
%pa = index %A, %i
%a = load %pa
%po = index %O, %ix
%st = store %po, %a
%e = end %st, %i
%k = sink %e
)";
  constexpr int G = 64;  // guard floats on each side
  for (int scat = 0; scat < 2; scat++)
    for (int32_t bad : {16, 17, -1, INT32_MIN, INT32_MAX, 1 << 20, 8})
      for (uopc_tier t : kTiers) {
        if (!scat && bad == 8) continue;  // inside A
        Ctx c;
        Kernel kern = Compile(c.c, Parse(c.c, scat ? scatter : gather), t);
        ASSERT_TRUE(kern);
        std::vector<float> block(G + 16 + G + 8 + G, 12345.0f);
        float *A = block.data() + G, *O = A + 16 + G;
        for (int j = 0; j < 16; j++) A[j] = (float)j;
        for (int j = 0; j < 8; j++) O[j] = -1.0f;
        std::vector<int32_t> I = {0, 3, 5, 7, bad, 1, 2, 3};
        uopc_error e{};
        ASSERT_EQ(Call(kern, {I.data(), A, O}, &e), UOPC_ERR_EVAL) << "bad " << bad;
        EXPECT_NE(std::string(e.msg).find(scat ? "BUFFER slot 2" : "BUFFER slot 1"), std::string::npos) << e.msg;
        for (int j = 0; j < G; j++) {
          ASSERT_EQ(block[j], 12345.0f);
          ASSERT_EQ(A[16 + j], 12345.0f);
          ASSERT_EQ(O[8 + j], 12345.0f);
        }
        if (!scat)
          for (int j = 0; j < 4; j++) EXPECT_EQ(O[j], (float)I[j]);  // done before the bad index
      }
}

// x // 0, INT_MIN // -1, the same with %, and casts of NaN, inf and huge
// floats to i32 have no value; compiled code must still run to the end
// (no SIGFPE), computing every defined element right.
TEST(KernelSafety, UndefinedDataDoesNotKillTheProcess) {
  for (uopc_op op : {UOPC_OP_FLOORDIV, UOPC_OP_FLOORMOD})
    for (uopc_tier t : kTiers) {
      Ctx c;
      uopc_fuzz_pair p{op, UOPC_DT_I32, UOPC_DT_I32};
      Kernel kern = Compile(c.c, uopc_fuzz_kernel(c.c, &p, 64), t);
      ASSERT_TRUE(kern);
      std::vector<int32_t> a(64), b(64), o(64, 7);
      for (int j = 0; j < 64; j++) {
        a[j] = j % 3 == 0 ? INT32_MIN : j * 1000 - 30000;
        b[j] = j % 4 == 0 ? 0 : j % 4 == 1 ? -1 : j - 32;
      }
      ASSERT_EQ(Call(kern, {a.data(), b.data(), o.data()}), UOPC_OK);
      for (int j = 0; j < 64; j++) {
        uopc_val in[2] = {{a[j], 0}, {b[j], 0}}, r{};
        if (uopc_exec_alu(op, UOPC_DT_I32, UOPC_DT_I32, in, &r)) {
          EXPECT_EQ(o[j], r.i) << a[j] << " " << uopc_op_name(op) << " " << b[j];
        }
      }
    }
  for (uopc_dtype from : {UOPC_DT_F32, UOPC_DT_F16}) {
    Ctx c;
    uopc_fuzz_pair p{UOPC_OP_CAST, from, UOPC_DT_I32};
    Kernel kern = Compile(c.c, uopc_fuzz_kernel(c.c, &p, 8), UOPC_TIER_FAST);
    ASSERT_TRUE(kern);
    std::vector<uint32_t> a32 = {0x7fc00000, 0x7f800000, 0xff800000, 0x4f000000, 0xcf000001, 0x7f7fffff, 0x3fc00000, 0xbfc00000};
    std::vector<uint16_t> a16 = {0x7e00, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x3e00, 0xbe00, 0x0001};
    std::vector<int32_t> o(8, 0);
    ASSERT_EQ(Call(kern, {from == UOPC_DT_F32 ? (void *)a32.data() : (void *)a16.data(), o.data()}), UOPC_OK);
    for (int j = 0; j < 8; j++) {
      uopc_val in{0, from == UOPC_DT_F32 ? (double)F32(a32[j]) : uopc_f16_to_double(a16[j])}, r{};
      if (uopc_exec_alu(UOPC_OP_CAST, UOPC_DT_I32, from, &in, &r)) EXPECT_EQ(o[j], r.i) << j;
    }
  }
}

// A divisor known only at run time is divided in double (lib/codegen/ops.c
// floordiv: exact for i32).  Every pair of a grid of edge values (the
// extremes, their neighbours, +-1, +-2, powers of two and their neighbours,
// 46341 = ceil(sqrt(2^31)), quotients just beside an integer) against
// exec_alu and against Python's rules written out in 64-bit integers, at
// both tiers, in loops long enough to vectorize.
TEST(KernelDivision, RuntimeDivisorsAreExactOnEdgeValues) {
  std::vector<int32_t> v = {INT32_MIN, INT32_MIN + 1, INT32_MIN + 2, INT32_MAX, INT32_MAX - 1, INT32_MAX - 2,
                            0, 1, -1, 2, -2, 3, -3, 7, -7, 46341, -46341, 46340, 65535, -65536, 1000000007,
                            -999999937, 2147483646 / 3, -(2147483646 / 7)};
  for (int k = 1; k <= 30; k++)
    for (int d : {-1, 0, 1}) v.push_back((int32_t)((1u << k) + (uint32_t)d)), v.push_back(-(int32_t)(1u << k) + d);
  const size_t n = v.size() * v.size();
  std::vector<int32_t> a(n), b(n);
  for (size_t i = 0; i < v.size(); i++)
    for (size_t j = 0; j < v.size(); j++) a[i * v.size() + j] = v[i], b[i * v.size() + j] = v[j];
  for (uopc_op op : {UOPC_OP_FLOORDIV, UOPC_OP_FLOORMOD})
    for (uopc_tier t : kTiers) {
      SCOPED_TRACE(uopc_op_name(op));
      Ctx c;
      uopc_fuzz_pair p{op, UOPC_DT_I32, UOPC_DT_I32};
      Kernel kern = Compile(c.c, uopc_fuzz_kernel(c.c, &p, (uint32_t)n), t);
      ASSERT_TRUE(kern);
      std::vector<int32_t> o(n, 7);
      ASSERT_EQ(Call(kern, {a.data(), b.data(), o.data()}), UOPC_OK);
      size_t checked = 0;
      for (size_t i = 0; i < n; i++) {
        int64_t x = a[i], y = b[i];
        if (y == 0 || (x == INT32_MIN && y == -1)) continue;  // no value (KernelSafety above)
        int64_t q = x / y, r = x % y;  // truncating, exact in 64 bits
        if (r != 0 && ((r < 0) != (y < 0))) q -= 1, r += y;
        uopc_val in[2] = {{x, 0}, {y, 0}}, e{};
        ASSERT_TRUE(uopc_exec_alu(op, UOPC_DT_I32, UOPC_DT_I32, in, &e));
        int64_t want = op == UOPC_OP_FLOORDIV ? q : r;
        ASSERT_EQ(e.i, want) << x << " " << y;
        ASSERT_EQ(o[i], want) << x << " " << uopc_op_name(op) << " " << y << " (tier " << t << ")";
        checked++;
      }
      EXPECT_GT(checked, n * 9 / 10);
    }
}

// Strict f16 exp2, log2 and sin (lib/codegen/exp2.c, log2.c, sin.c: inline
// away from an f16 midpoint, libm elsewhere), each rounded to f16 by
// ops.c's uopi_cg_f64_to_f16 (to odd in f32, then to f16): every one of the
// 65,536 inputs, at both tiers, against exec_alu (libm's double rounded to
// f16), bit for bit (a NaN for a NaN).  StrictExp2.F16InlinePathCoversTheRange
// checks exp2's inline path's share of the inputs.
TEST(KernelExp2, F16EveryInputSameBitsAsExecAlu) {
  const size_t n = 65536;
  std::vector<uint16_t> a(n);
  for (size_t i = 0; i < n; i++) a[i] = (uint16_t)i;
  for (uopc_op op : {UOPC_OP_EXP2, UOPC_OP_LOG2, UOPC_OP_SIN})
    for (uopc_tier t : kTiers) {
      SCOPED_TRACE(uopc_op_name(op));
      Ctx c;
      uopc_fuzz_pair p{op, UOPC_DT_F16, UOPC_DT_F16};
      Kernel kern = Compile(c.c, uopc_fuzz_kernel(c.c, &p, (uint32_t)n), t);
      ASSERT_TRUE(kern);
      std::vector<uint16_t> o(n, 0x1234);
      ASSERT_EQ(Call(kern, {a.data(), o.data()}), UOPC_OK);
      size_t wrong = 0;
      for (size_t i = 0; i < n; i++) {
        uopc_val in{0, uopc_f16_to_double(a[i])}, r{};
        ASSERT_TRUE(uopc_exec_alu(op, UOPC_DT_F16, UOPC_DT_F16, &in, &r));
        uint16_t want = uopc_f16_from_double(r.f);
        bool nan_both = std::isnan(r.f) && std::isnan(uopc_f16_to_double(o[i]));
        if (o[i] != want && !nan_both && wrong++ < 10)
          ADD_FAILURE() << uopc_op_name(op) << "(f16 0x" << std::hex << a[i] << ") = 0x" << o[i] << ", exec_alu 0x" << want
                        << std::dec << " (tier " << t << ")";
      }
      EXPECT_EQ(wrong, 0u);
    }
}

// A caller running with FTZ and DAZ set (as -ffast-math programs do) gets
// the same, IEEE results; its MXCSR is given back.
TEST(KernelFp, CallerFtzDazDoesNotChangeResults) {
  if (UnderValgrind())
    GTEST_SKIP() << "valgrind does not emulate MXCSR: FTZ and DAZ are ignored and reading MXCSR back gives the "
                    "default (its manual, \"Limitations\")";
  Ctx c;
  uopc_fuzz_pair p{UOPC_OP_MUL, UOPC_DT_F32, UOPC_DT_F32};
  Kernel kern = Compile(c.c, uopc_fuzz_kernel(c.c, &p, 64));
  ASSERT_TRUE(kern);
  std::vector<float> a(64), b(64), o(64);
  for (int j = 0; j < 64; j++) {
    a[j] = F32(0x00000100u + (uint32_t)j * 977u);  // denormals
    b[j] = j % 2 ? 0.75f : 3.0f;
  }
  unsigned saved = _mm_getcsr();
  unsigned ftz_daz = (saved & ~0x6000u) | 0x8040u;  // FTZ, DAZ, round to nearest
  _mm_setcsr(ftz_daz);
  uopc_status st = Call(kern, {a.data(), b.data(), o.data()});
  unsigned after = _mm_getcsr();
  _mm_setcsr(saved);
  ASSERT_EQ(st, UOPC_OK);
  EXPECT_EQ(after & 0xffc0u, ftz_daz & 0xffc0u);  // the caller's control bits are back
  for (int j = 0; j < 64; j++) {
    float r = RefF32(UOPC_OP_MUL, a[j], b[j]);
    EXPECT_EQ(Bits(o[j]), Bits(r)) << j;
    EXPECT_NE(o[j], 0.0f);
  }
}

// ---- threads -------------------------------------------------------------------------------

// 4 threads, each with its own context, parse, compile (distinct kernels,
// both tiers) and call at once; then all call all kernels.
TEST(KernelThreads, CompileAndCallConcurrently) {
  constexpr int kThreads = 4, kEach = 12;
  std::vector<Kernel> kernels(kThreads * kEach);
  std::atomic<int> bad{0};
  auto check = [](const Kernel &k, int id) {
    std::vector<float> a(300), o(300);
    for (int j = 0; j < 300; j++) a[j] = (float)j * 0.5f - 20.0f;
    if (Call(k, {a.data(), o.data()}) != UOPC_OK) return false;
    for (int j = 0; j < 300; j++)
      if (Bits(o[j]) != Bits(RefF32(UOPC_OP_ADD, RefF32(UOPC_OP_MUL, a[j], (float)id), 0.5f))) return false;
    return true;
  };
  auto work = [&](int tid) {
    for (int n = 0; n < kEach; n++) {
      int id = tid * kEach + n;
      Ctx c;
      std::ostringstream s;
      s << "%A = buffer : slot=0 dtype=f32 shape=(300,)\n%O = buffer : slot=1 dtype=f32 shape=(300,)\n"
        << "%i = range 300 : idx=0\n%pa = index %A, %i\n%a = load %pa\n%m = mul %a, " << id << ".0\n"
        << "%v = add %m, 0.5\n%po = index %O, %i\n%st = store %po, %v\n%e = end %st, %i\n%k = sink %e\n";
      std::string text = s.str();
      uopc_error e{};
      uopc_node *root = uopc_uir_parse(c.c, text.data(), text.size(), "t.uir", &e);
      uopc_compile_opts o{};
      o.tier = n % 4 == 0 ? UOPC_TIER_STRONG : UOPC_TIER_FAST;
      Kernel k(root ? uopc_compile(c.c, root, &o, &e) : nullptr);
      if (!k || !check(k, id)) bad++;
      kernels[(size_t)id] = std::move(k);
    }
  };
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; t++) th.emplace_back(work, t);
  for (auto &t : th) t.join();
  EXPECT_EQ(bad.load(), 0);
  th.clear();
  for (int t = 0; t < kThreads; t++)
    th.emplace_back([&, t] {
      for (int id = 0; id < kThreads * kEach; id++)
        if (!kernels[(size_t)((id + t) % (kThreads * kEach))] || !check(kernels[(size_t)((id + t) % (kThreads * kEach))], (id + t) % (kThreads * kEach)))
          bad++;
    });
  for (auto &t : th) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// ---- dtypes ----------------------------------------------------------------------------------

// f16 buffers: o = a*b + a in f16 (each op rounded to f16), against exec_alu.
TEST(KernelDtypes, F16Buffers) {
  const char *text = R"(
%A = buffer : slot=0 dtype=f16 shape=(512,)
%B = buffer : slot=1 dtype=f16 shape=(512,)
%O = buffer : slot=2 dtype=f16 shape=(512,)
%i = range 512 : idx=0
%pa = index %A, %i
%a = load %pa
%pb = index %B, %i
%b = load %pb
%m = mul %a, %b
%v = add %m, %a
%po = index %O, %i
%st = store %po, %v
%e = end %st, %i
%k = sink %e
)";
  for (uopc_tier t : kTiers) {
    Ctx c;
    Kernel kern = Compile(c.c, Parse(c.c, text), t);
    ASSERT_TRUE(kern);
    EXPECT_EQ(uopc_kernel_buf_dtype(kern.get(), 0), UOPC_DT_F16);
    std::vector<uint16_t> a(512), b(512), o(512);
    for (int j = 0; j < 512; j++) {
      a[j] = (uint16_t)(0x3c00 + j * 37 - 9000);
      b[j] = (uint16_t)(0x4000 ^ (j * 101));
    }
    a[0] = 0x7bff, b[0] = 0x4000;  // 65504 * 2: overflows to inf
    a[1] = 0x0001, b[1] = 0x3800;  // the smallest subnormal / 2: ties to 0
    ASSERT_EQ(Call(kern, {a.data(), b.data(), o.data()}), UOPC_OK);
    for (int j = 0; j < 512; j++) {
      uopc_val in[2] = {{0, uopc_f16_to_double(a[j])}, {0, uopc_f16_to_double(b[j])}}, m{}, r{};
      ASSERT_EQ(uopc_exec_alu(UOPC_OP_MUL, UOPC_DT_F16, UOPC_DT_F16, in, &m), 1);
      uopc_val in2[2] = {m, in[0]};
      ASSERT_EQ(uopc_exec_alu(UOPC_OP_ADD, UOPC_DT_F16, UOPC_DT_F16, in2, &r), 1);
      if (std::isnan(r.f)) EXPECT_TRUE((o[j] & 0x7c00) == 0x7c00 && (o[j] & 0x3ff)) << j;
      else EXPECT_EQ(o[j], uopc_f16_from_double(r.f)) << "tier " << t << " j " << j;
    }
    EXPECT_EQ(o[0], 0x7c00);
  }
}

// bool buffers: comparisons stored as bytes 0/1, WHERE on a loaded
// condition, and any non-zero byte reads as True.
TEST(KernelDtypes, BoolBuffers) {
  const char *text = R"(
%A = buffer : slot=0 dtype=f32 shape=(100,)
%C = buffer : slot=1 dtype=bool shape=(100,)
%L = buffer : slot=2 dtype=bool shape=(100,)
%W = buffer : slot=3 dtype=f32 shape=(100,)
%N = buffer : slot=4 dtype=bool shape=(100,)
%i = range 100 : idx=0
%pa = index %A, %i
%a = load %pa
%lt = cmplt %a, 0.0
%pl = index %L, %i
%s1 = store %pl, %lt
%pc = index %C, %i
%c = load %pc
%w = where %c, %a, -1.0
%pw = index %W, %i
%s2 = store %pw, %w
%nc = cmpne %c, True
%pn = index %N, %i
%s3 = store %pn, %nc
%e1 = end %s1, %i
%e2 = end %s2, %i
%e3 = end %s3, %i
%k = sink %e1, %e2, %e3
)";
  for (uopc_tier t : kTiers) {
    Ctx c;
    Kernel kern = Compile(c.c, Parse(c.c, text), t);
    ASSERT_TRUE(kern);
    std::vector<float> a(100), w(100);
    std::vector<uint8_t> cb(100), l(100, 9), n(100, 9);
    for (int j = 0; j < 100; j++) {
      a[j] = (float)(j - 50) * 0.5f;
      cb[j] = j % 3 == 0 ? 0 : j % 3 == 1 ? 1 : (uint8_t)(0x80 + j);  // any non-zero byte is True
    }
    a[7] = F32(0x7fc00000);
    a[8] = -0.0f;
    ASSERT_EQ(Call(kern, {a.data(), cb.data(), l.data(), w.data(), n.data()}), UOPC_OK);
    for (int j = 0; j < 100; j++) {
      EXPECT_EQ(l[j], a[j] < 0.0f ? 1 : 0) << j;
      EXPECT_EQ(Bits(w[j]), Bits(cb[j] ? a[j] : -1.0f)) << j;
      EXPECT_EQ(n[j], cb[j] ? 0 : 1) << j;
    }
  }
}

// ---- many buffers: the calling convention takes an array of pointers ------------------

// O[i] = B0[i] + B1[i] + ... + B62[i] over 63 i32 inputs: 64 buffers, the most
// a kernel takes, at both tiers (and still vectorized: noalias survives the
// entry's array of pointers).
TEST(KernelBuffers, SixtyFourBuffers) {
  constexpr int kIn = 63, kN = 1000;
  Ctx c;
  uopc_ctx *x = c.c;
  uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, kN), 0);
  uopc_node *sum = nullptr;
  for (int s = 0; s < kIn; s++) {
    uopc_node *v = uopc_load(x, uopc_index(x, uopc_buffer(x, s, UOPC_DT_I32, kN), &i, 1));
    sum = sum ? uopc_add(x, sum, v) : v;
  }
  uopc_node *st = uopc_store(x, uopc_index(x, uopc_buffer(x, kIn, UOPC_DT_I32, kN), &i, 1), sum);
  uopc_node *e = uopc_end(x, st, &i, 1);
  uopc_node *k = uopc_sink(x, &e, 1);
  ASSERT_NE(k, nullptr) << c.err();
  std::vector<std::vector<int32_t>> b(kIn + 1, std::vector<int32_t>(kN));
  for (int s = 0; s < kIn; s++)
    for (int j = 0; j < kN; j++) b[s][j] = (s + 1) * 1000003 + j * (s ^ 7);
  for (uopc_tier t : kTiers) {
    Kernel kern = Compile(x, k, t);
    ASSERT_TRUE(kern);
    EXPECT_EQ(uopc_kernel_nbufs(kern.get()), 64u);
    std::vector<void *> bufs;
    for (auto &v : b) bufs.push_back(v.data());
    std::fill(b[kIn].begin(), b[kIn].end(), -1);
    ASSERT_EQ(Call(kern, bufs), UOPC_OK);
    for (int j = 0; j < kN; j++) {
      uint32_t want = 0;
      for (int s = 0; s < kIn; s++) want += (uint32_t)b[s][j];
      ASSERT_EQ((uint32_t)b[kIn][j], want) << "tier " << t << " j " << j;
    }
    // the many-buffer checks: an overlap, a NULL, both named as for few buffers
    uopc_error e2{};
    std::vector<void *> bad = bufs;
    bad[40] = b[20].data() + 10;
    EXPECT_EQ(Call(kern, bad, &e2), UOPC_ERR_ARG);
    EXPECT_STREQ(e2.msg, "buffers 20 and 40 overlap (kernels need distinct memory per slot)");
    bad = bufs;
    bad[33] = nullptr;
    EXPECT_EQ(Call(kern, bad, &e2), UOPC_ERR_ARG);
    EXPECT_STREQ(e2.msg, "buffer 33 is NULL");
  }
  std::string s = Asm(x, k, UOPC_TIER_FAST);
  EXPECT_NE(s.find("vpaddd"), std::string::npos) << "the sum is vectorized";
  // 65 buffers: too many
  uopc_node *extra = uopc_store(x, uopc_index(x, uopc_buffer(x, 64, UOPC_DT_I32, kN), &i, 1), sum);
  uopc_node *effects[2] = {st, extra};
  uopc_node *e65 = uopc_end(x, uopc_sink(x, effects, 2), &i, 1);
  uopc_error err{};
  EXPECT_EQ(uopc_compile(x, uopc_sink(x, &e65, 1), nullptr, &err), nullptr);
  EXPECT_EQ(err.code, UOPC_ERR_TYPE);
  EXPECT_NE(std::string(err.msg).find("at most 64 buffers"), std::string::npos) << err.msg;
}

// 17 bool outputs: O_k[i] = A[i] < k for k = 0 .. 16.
TEST(KernelBuffers, SeventeenBoolOutputs) {
  constexpr int kOut = 17, kN = 333;
  Ctx c;
  uopc_ctx *x = c.c;
  uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, kN), 0);
  uopc_node *a = uopc_load(x, uopc_index(x, uopc_buffer(x, 0, UOPC_DT_F32, kN), &i, 1));
  std::vector<uopc_node *> stores;
  for (int k = 0; k < kOut; k++) {
    uopc_node *lt = uopc_alu2(x, UOPC_OP_CMPLT, a, uopc_const_f(x, UOPC_DT_F32, (double)k));
    stores.push_back(uopc_store(x, uopc_index(x, uopc_buffer(x, 1 + k, UOPC_DT_BOOL, kN), &i, 1), lt));
  }
  uopc_node *body = uopc_sink(x, stores.data(), kOut);
  uopc_node *e = uopc_end(x, body, &i, 1);
  uopc_node *root = uopc_sink(x, &e, 1);
  ASSERT_NE(root, nullptr) << c.err();
  for (uopc_tier t : kTiers) {
    Kernel kern = Compile(x, root, t);
    ASSERT_TRUE(kern);
    ASSERT_EQ(uopc_kernel_nbufs(kern.get()), 18u);
    std::vector<float> va(kN);
    for (int j = 0; j < kN; j++) va[j] = (float)(j % 40) * 0.5f - 2.0f;
    va[5] = F32(0x7fc00000);  // NaN < k is False
    std::vector<std::vector<uint8_t>> o(kOut, std::vector<uint8_t>(kN, 7));
    std::vector<void *> bufs = {va.data()};
    for (auto &v : o) bufs.push_back(v.data());
    ASSERT_EQ(Call(kern, bufs), UOPC_OK);
    for (int k = 0; k < kOut; k++)
      for (int j = 0; j < kN; j++) ASSERT_EQ(o[k][j], va[j] < (float)k ? 1 : 0) << "tier " << t << " k " << k << " j " << j;
  }
}

// ---- code -------------------------------------------------------------------------------------

// o = a*b + a over 4096 f32 from a uopc graph: packed multiplies on ymm/zmm
// at both tiers, and no FMA (two roundings).
TEST(KernelCode, ElementwiseKernelIsVectorized) {
  Ctx c;
  uopc_node *k = Parse(c.c, R"(
%O = buffer : slot=0 dtype=f32 shape=(4096,)
%A = buffer : slot=1 dtype=f32 shape=(4096,)
%B = buffer : slot=2 dtype=f32 shape=(4096,)
%i = range 4096 : idx=0
%pa = index %A, %i
%a = load %pa
%pb = index %B, %i
%b = load %pb
%m = mul %a, %b
%v = add %m, %a
%po = index %O, %i
%st = store %po, %v
%e = end %st, %i
%k = sink %e
)");
  bool avx = __builtin_cpu_supports("avx");
  for (uopc_tier t : kTiers) {
    std::string s = Asm(c.c, k, t);
    int packed = 0;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);)
      if (line.find("mulps") != std::string::npos &&
          (!avx || line.find("%ymm") != std::string::npos || line.find("%zmm") != std::string::npos))
        packed++;
    EXPECT_GT(packed, 0) << "tier " << t << "\n" << s;
    EXPECT_EQ(s.find("fmadd"), std::string::npos) << s;
  }
}

TEST(KernelApi, ErrorsAreReported) {
  Ctx c;
  uopc_error e{};
  uopc_node *v = Parse(c.c, "%a = add 1, 2\n");
  EXPECT_EQ(uopc_compile(c.c, v, nullptr, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_TYPE);
  EXPECT_NE(std::string(e.msg).find("SINK"), std::string::npos) << e.msg;
  EXPECT_EQ(uopc_emit_llvm(c.c, v, nullptr, &e), nullptr);
  EXPECT_EQ(uopc_emit_asm(c.c, v, nullptr, &e), nullptr);
  uopc_ctx_clear_error(c.c);
  Kernel k = Compile(c.c, Parse(c.c, DocKernel()));
  ASSERT_TRUE(k);
  std::vector<float> a(32), o(32);
  EXPECT_EQ(Call(k, {a.data()}, &e), UOPC_ERR_ARG);
  EXPECT_EQ(Call(k, {a.data(), nullptr}, &e), UOPC_ERR_ARG);
  EXPECT_EQ(Call(k, {a.data(), a.data() + 4}, &e), UOPC_ERR_ARG);  // overlapping
  EXPECT_NE(std::string(e.msg).find("overlap"), std::string::npos) << e.msg;
  EXPECT_EQ(uopc_kernel_call(nullptr, nullptr, 0, &e), UOPC_ERR_ARG);
  uopc_kernel_free(nullptr);
}

// ---- the differential fuzz -----------------------------------------------------------------------

// The triples are exactly those exec_alu computes (with operands 1, 1, 1).
TEST(KernelFuzz, PairsAreExecAluDomain) {
  size_t n;
  const uopc_fuzz_pair *p = uopc_fuzz_pairs(&n);
  ASSERT_EQ(n, 52u);
  int found = 0;
  for (int op = 0; op < UOPC_OP_COUNT; op++)
    for (int it = 0; it < UOPC_DT_COUNT; it++)
      for (int ot = 0; ot < UOPC_DT_COUNT; ot++) {
        uopc_val in[3] = {{1, 1.0}, {1, 1.0}, {1, 1.0}}, o{};
        int dom = uopc_exec_alu((uopc_op)op, (uopc_dtype)ot, (uopc_dtype)it, in, &o);
        bool listed = false;
        for (size_t j = 0; j < n; j++) listed |= p[j].op == op && p[j].in_t == it && p[j].out_t == ot;
        EXPECT_EQ(dom != 0, listed) << uopc_op_name((uopc_op)op) << " " << it << "->" << ot;
        found += listed;
      }
  EXPECT_EQ(found, 52);
}

// Operands and results in hex and as the project prints values (the
// shortest decimal at the dtype's precision: f16 65504 is 65500.0).
TEST(KernelFuzz, DescribeIsOneLine) {
  uopc_fuzz_case m{};
  m.pair = {UOPC_OP_ADD, UOPC_DT_F32, UOPC_DT_F32};
  m.nin = 2;
  m.in[0] = 0x3f800000;
  m.in[1] = 0x80000000;
  m.jit = 0x3f800000;
  m.ref = 0x7fc00000;
  char buf[256];
  std::string s = uopc_fuzz_describe(&m, buf, sizeof buf);
  EXPECT_EQ(s, "mismatch: add f32 a=0x3f800000 (1.0) b=0x80000000 (-0.0) jit=0x3f800000 (1.0) exec_alu=0x7fc00000 (nan)");
  m.pair = {UOPC_OP_CAST, UOPC_DT_F16, UOPC_DT_I32};
  m.nin = 1;
  m.in[0] = 0x7bff;
  m.jit = 65504;
  m.ref = 0xffffffff;
  s = uopc_fuzz_describe(&m, buf, sizeof buf);
  EXPECT_EQ(s, "mismatch: cast f16:i32 a=0x7bff (65500.0) jit=0x0000ffe0 (65504) exec_alu=0xffffffff (-1)");
  char small[16];
  uopc_fuzz_describe(&m, small, sizeof small);
  EXPECT_EQ(std::strlen(small), 15u);
}

// About 10^5 cases for every triple, the two tiers alternating batch by
// batch: no mismatch.
TEST(KernelFuzz, BoundedFuzzHasNoMismatch) {
  size_t n;
  const uopc_fuzz_pair *p = uopc_fuzz_pairs(&n);
  std::vector<std::string> lines;
  uopc_fuzz_opts o{};
  o.seed = 20240601;
  o.count = 100000;
  o.both_tiers = 1;
  o.on_mismatch = [](void *ud, const uopc_fuzz_case *m) {
    char buf[512];
    static_cast<std::vector<std::string> *>(ud)->push_back(uopc_fuzz_describe(m, buf, sizeof buf));
  };
  o.ud = &lines;
  uint64_t total = 0;
  for (size_t j = 0; j < n; j++) {
    uopc_fuzz_stats s{};
    uopc_error e{};
    char dt[16];
    ASSERT_EQ(uopc_fuzz_run(&p[j], &o, &s, &e), UOPC_OK) << e.msg;
    EXPECT_EQ(s.cases, o.count) << uopc_op_name(p[j].op) << " " << uopc_fuzz_dtype_str(&p[j], dt);
    EXPECT_EQ(s.mismatches, 0u) << uopc_op_name(p[j].op) << " " << uopc_fuzz_dtype_str(&p[j], dt);
    total += s.cases;
    // only the undefined cases are refused
    bool may_refuse = p[j].op == UOPC_OP_FLOORDIV || p[j].op == UOPC_OP_FLOORMOD ||
                      (p[j].op == UOPC_OP_CAST && p[j].out_t == UOPC_DT_I32 && uopc_dtype_is_float(p[j].in_t));
    if (may_refuse) EXPECT_GT(s.refused, 0u) << uopc_fuzz_dtype_str(&p[j], dt);
    else EXPECT_EQ(s.refused, 0u) << uopc_fuzz_dtype_str(&p[j], dt);
  }
  EXPECT_EQ(total, 52u * 100000u);
  for (auto &l : lines) ADD_FAILURE() << l;
}

// Batches of 7 elements: mostly the scalar code (remainder loops, or no
// vector loop at all), which LLVM lowers apart from the vector code.
TEST(KernelFuzz, SmallBatchesHaveNoMismatch) {
  size_t n;
  const uopc_fuzz_pair *p = uopc_fuzz_pairs(&n);
  uopc_fuzz_opts o{};
  o.seed = 77;
  o.count = 20000;
  o.batch = 7;
  for (size_t j = 0; j < n; j++) {
    uopc_fuzz_stats s{};
    uopc_error e{};
    char dt[16];
    ASSERT_EQ(uopc_fuzz_run(&p[j], &o, &s, &e), UOPC_OK) << e.msg;
    EXPECT_EQ(s.cases, o.count);
    EXPECT_EQ(s.mismatches, 0u) << uopc_op_name(p[j].op) << " " << uopc_fuzz_dtype_str(&p[j], dt);
  }
}

// The comparison can fail: with self_test, one output per batch is
// corrupted (its lowest bit flipped) and every corruption must come back as
// a mismatch, reported with the JIT's bits one off the reference's, for
// every triple, in full batches and in small ones.
TEST(KernelFuzz, SelfTestEveryCorruptionIsAMismatch) {
  size_t n;
  const uopc_fuzz_pair *p = uopc_fuzz_pairs(&n);
  for (uint32_t batch : {4095u, 7u}) {
    uopc_fuzz_opts o{};
    o.seed = 5;
    o.count = 20000;
    o.batch = batch;
    o.self_test = 1;
    o.max_reports = 1000000;
    struct Seen {
      uint64_t reports = 0, off_by_one = 0;
    } seen;
    o.ud = &seen;
    o.on_mismatch = [](void *ud, const uopc_fuzz_case *m) {
      auto *sn = static_cast<Seen *>(ud);
      sn->reports++;
      sn->off_by_one += (m->jit ^ m->ref) == 1u;
    };
    for (size_t j = 0; j < n; j++) {
      uopc_fuzz_stats s{};
      uopc_error e{};
      char dt[16];
      seen = Seen{};
      ASSERT_EQ(uopc_fuzz_run(&p[j], &o, &s, &e), UOPC_OK) << e.msg;
      SCOPED_TRACE(std::string(uopc_op_name(p[j].op)) + " " + uopc_fuzz_dtype_str(&p[j], dt) + " batch " +
                   std::to_string(batch));
      EXPECT_GE(s.injected, o.count / batch * 9 / 10);  // one per batch with a non-NaN reference
      EXPECT_EQ(s.mismatches, s.injected);
      EXPECT_EQ(seen.reports, s.mismatches);
      EXPECT_EQ(seen.off_by_one, seen.reports);
    }
  }
}

TEST(KernelFuzz, RejectsWhatIsNotATriple) {
  uopc_fuzz_pair bad{UOPC_OP_FLOORDIV, UOPC_DT_F32, UOPC_DT_F32};
  uopc_error e{};
  EXPECT_EQ(uopc_fuzz_run(&bad, nullptr, nullptr, &e), UOPC_ERR_ARG);
  Ctx c;
  EXPECT_EQ(uopc_fuzz_kernel(c.c, &bad, 16), nullptr);
  uopc_fuzz_pair ok{UOPC_OP_WHERE, UOPC_DT_F16, UOPC_DT_F16};
  uopc_node *k = uopc_fuzz_kernel(c.c, &ok, 16);
  ASSERT_NE(k, nullptr);
  // same seed, same operands: a one-triple run is reproducible
  uopc_fuzz_opts o{};
  o.seed = 5;
  o.count = 5000;
  uopc_fuzz_stats s1{}, s2{};
  uopc_fuzz_pair cast{UOPC_OP_CAST, UOPC_DT_F32, UOPC_DT_I32};
  ASSERT_EQ(uopc_fuzz_run(&cast, &o, &s1, &e), UOPC_OK);
  ASSERT_EQ(uopc_fuzz_run(&cast, &o, &s2, &e), UOPC_OK);
  EXPECT_EQ(s1.refused, s2.refused);
}

}  // namespace
