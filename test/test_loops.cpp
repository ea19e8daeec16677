// The loop passes of REDUCE kernels (lib/schedule/lower.c, docs/loops.md):
// interchange, upcast and the register tile change the loop nest, never an
// element's order of operations.  Random matmul-like programs whose shapes
// reach every pass (tile widths of 16, row blocks of 2, 4 and 8, odd sizes
// that fall back), in every dtype, with add/max/mul reductions, are run by
// rewriting (`run`) and through plans with the passes on and off: the three
// agree bit for bit, and the passes do fire (the loop nest differs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "jit/jit.h"
#include "support/ctx.h"
#include "support/progen.h"

namespace {

// A (rows, cols) literal of random values of dtype t.
uopc_node *Literal(uopc_ctx *c, std::mt19937_64 &rng, uopc_dtype t, int32_t rows, int32_t cols) {
  std::vector<uopc_node *> v;
  for (int32_t k = 0; k < rows * cols; k++) {
    uint64_t r = rng();
    if (t == UOPC_DT_I32)
      v.push_back(uopc_const_i(c, t, (int32_t)(uint32_t)r % 100000 - 50000));  // products and sums wrap
    else if (t == UOPC_DT_F16)
      v.push_back(uopc_const_f(c, t, ((int)(r % 2001) - 1000) / 256.0));
    else  // magnitudes from 1e-3 to 1e3 and both signs: the order of a sum shows in its bits
      v.push_back(uopc_const_f(c, t, ((int)(r % 2001) - 1000) / 1000.0 * std::pow(10.0, (int)(r >> 20) % 7 - 3)));
  }
  uopc_node *flat = uopc_stack(c, v.data(), (uint32_t)v.size());
  int32_t shape[2] = {rows, cols};
  return uopc_reshape(c, flat, shape, 2);
}

// A (M, K) and B, (K, N) or (N, K) as attention's Q K^T reads it, broadcast
// to (M, N, K) and multiplied: what a matmul-like REDUCE reduces over its
// last axis.
uopc_node *Products(uopc_ctx *c, uopc_node *A, uopc_node *B, int32_t M, int32_t N, int32_t K, bool qk) {
  int32_t a1[3] = {M, 1, K}, big[3] = {M, N, K}, b1[3] = {1, N, K}, perm[2] = {1, 0};
  uopc_node *a = uopc_expand(c, uopc_reshape(c, A, a1, 3), big, 3);
  uopc_node *b = uopc_expand(c, uopc_reshape(c, qk ? B : uopc_permute(c, B, perm, 2), b1, 3), big, 3);
  return uopc_mul(c, a, b);
}

// One random matmul-like program: C[m, n] = reduce_k op(A[m, k], B[k, n])
// (B given as (K, N), or as (N, K) the way attention's Q K^T reads it), the
// reduced axis split in two for some, with an elementwise step in the body.
uopc_node *Program(uopc_ctx *c, std::mt19937_64 &rng, std::string *what) {
  static const uopc_dtype dts[] = {UOPC_DT_F32, UOPC_DT_F32, UOPC_DT_I32, UOPC_DT_F16};
  static const int32_t Ms[] = {2, 3, 4, 6, 8, 16, 24};
  static const int32_t Ns[] = {16, 32, 48, 17, 64};
  static const int32_t Ks[] = {1, 2, 5, 17, 33};
  static const uopc_op rops[] = {UOPC_OP_ADD, UOPC_OP_ADD, UOPC_OP_MAX, UOPC_OP_MUL};
  uopc_dtype t = dts[rng() % 4];
  int32_t M = Ms[rng() % 7], N = Ns[rng() % 5], K = Ks[rng() % 5];
  uopc_op rop = rops[rng() % 4];
  bool qk = rng() % 3 == 0, split = K % 1 == 0 && K > 2 && rng() % 4 == 0, bias = rng() % 3 == 0;
  if (rop == UOPC_OP_MUL && t != UOPC_DT_I32) K = K > 5 ? 5 : K;  // keep float products finite
  uopc_node *A = Literal(c, rng, t, M, K), *B = qk ? Literal(c, rng, t, N, K) : Literal(c, rng, t, K, N);
  uopc_node *p = Products(c, A, B, M, N, K, qk);
  int32_t big[3] = {M, N, K};
  if (bias) {
    int32_t ones[3] = {1, 1, 1};
    p = uopc_add(c, p, uopc_expand(c, uopc_reshape(c, uopc_const_like(c, p, 3), ones, 3), big, 3));
  }
  int pop = 1;
  if (split) {
    int32_t k1 = K % 5 == 0 ? 5 : K, s4[4] = {M, N, k1, K / k1};
    if (K % k1 == 0 && k1 != K) p = uopc_reshape(c, p, s4, 4), pop = 2;
  }
  *what = std::string(uopc_dtype_name(t)) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
          " K=" + std::to_string(K) + " " + uopc_op_name(rop) + (qk ? " qk" : "") + (bias ? " +3" : "") +
          (pop == 2 ? " split" : "");
  return uopc_reduce(c, p, rop, pop);
}

std::string PlanWith(uopc_ctx *c, uopc_node *u, unsigned flags) {
  return plan_text_opts(c, u, {UOPC_TIER_FAST, flags, 1});
}

std::string Ir(uopc_ctx *c, uopc_node *u, unsigned flags) {
  uopc_compile_opts o = {UOPC_TIER_FAST, flags, 1};
  uopc_error e;
  char *s = uopc_plan_emit(c, u, &o, 0, &e);
  std::string r = s ? s : "";
  free(s);
  return r;
}

// How often `what` occurs in s.
size_t Count(const std::string &s, const char *what) {
  size_t k = 0, n = 0;
  while ((k = s.find(what, k)) != std::string::npos) n++, k++;
  return n;
}

// One random program of Program() in *u and its value by `run` in *want;
// a failure when it cannot be built or `run` fails on it.
::testing::AssertionResult Draw(uopc_ctx *c, std::mt19937_64 &rng, uopc_node **u, std::string *what,
                                std::string *want) {
  *u = Program(c, rng, what);
  if (!*u)
    return ::testing::AssertionFailure() << *what << ": " << (uopc_ctx_error(c) ? uopc_ctx_error(c)->msg : "");
  *want = run_text(c, *u);
  if (want->rfind("error:", 0) == 0) return ::testing::AssertionFailure() << *what << ": " << *want;
  return ::testing::AssertionSuccess();
}

}  // namespace

// Sets UOPC_TILE_MIN_WORK for a scope (the tile's threshold, docs/loops.md).
struct TileMinWork {
  explicit TileMinWork(const char *v) { setenv("UOPC_TILE_MIN_WORK", v, 1); }
  ~TileMinWork() { unsetenv("UOPC_TILE_MIN_WORK"); }
};

TEST(LoopPasses, TiledReductionsMatchRunBitForBit) {
  TileMinWork every("1");  // these shapes are small: tile them all
  std::mt19937_64 rng(12);
  int changed = 0, n = 0;
  const int rounds = getenv("UOPC_LONG_TESTS") ? 3000 : 60;  // the long run: UOPC_LONG_TESTS=1
  for (int round = 0; round < rounds; round++, n++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    uopc_node *u;
    std::string what, want;
    ASSERT_TRUE(Draw(c, rng, &u, &what, &want));
    EXPECT_EQ(PlanWith(c, u, 0), want) << what;
    EXPECT_EQ(PlanWith(c, u, UOPC_COMPILE_NO_UPCAST), want) << what;
    EXPECT_EQ(PlanWith(c, u, UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST), want) << what;
    changed += Ir(c, u, 0) != Ir(c, u, UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST);
  }
  EXPECT_GT(changed, n / 3);  // the passes fire on most of these shapes
  uopc_plan_cache_clear();
}

// Row reductions (softmax's row max and row sum): in strict mode a float
// add or max along the rows runs as 8, 4 or 2 interleaved chains, each row
// still accumulated in order; bit for bit `run` in every dtype and op, with
// the pass on and off, and it fires (8 adds in the f32 sum's loop).
TEST(LoopPasses, RowReductionsRunAsChainsBitForBit) {
  TileMinWork every("1");
  std::mt19937_64 rng(21);
  static const uopc_dtype dts[] = {UOPC_DT_F32, UOPC_DT_F16, UOPC_DT_I32};
  static const uopc_op rops[] = {UOPC_OP_ADD, UOPC_OP_MAX, UOPC_OP_MUL};
  for (int round = 0; round < 40; round++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    uopc_dtype t = dts[round % 3];
    uopc_op rop = rops[(round / 3) % 3];
    int32_t M = (int32_t)(rng() % 20) + 1, N = rop == UOPC_OP_MUL ? 5 : (int32_t)(rng() % 40) + 2;
    uopc_node *u = uopc_reduce(c, Literal(c, rng, t, M, N), rop, 1);
    std::string what = std::string(uopc_dtype_name(t)) + " " + uopc_op_name(rop) + " M=" + std::to_string(M) +
                       " N=" + std::to_string(N);
    std::string want = run_text(c, u);
    ASSERT_EQ(want.rfind("error:", 0), std::string::npos) << what << ": " << want;
    EXPECT_EQ(PlanWith(c, u, 0), want) << what;
    EXPECT_EQ(PlanWith(c, u, UOPC_COMPILE_NO_UPCAST), want) << what;
    if (t == UOPC_DT_I32) EXPECT_EQ(PlanWith(c, u, UOPC_COMPILE_FAST_MATH), want) << what;  // ints: exact in fast mode too
  }
  Ctx c;
  std::mt19937_64 r2(5);
  uopc_node *u = uopc_reduce(c, Literal(c, r2, UOPC_DT_F32, 16, 64), UOPC_OP_ADD, 1);
  EXPECT_EQ(Count(Ir(c, u, 0), "fadd float"), 8u);  // the step of 8 chains (the first element is a store)
  // one chain: the unrolled loop's add and its rest's (63 steps: 56 unrolled, 7 left)
  EXPECT_EQ(Count(Ir(c, u, UOPC_COMPILE_NO_UPCAST), "fadd float"), 2u);
  EXPECT_EQ(PlanWith(c, u, 0), run_text(c, u));
  uopc_plan_cache_clear();
}

// Loops default<O2> made slower are marked for TIER0's IR pipeline at the
// strong tier too (jit.h, "TIER0's IR at TIER2"): a row reduction's chains,
// which its SLP vectorizer packed, rows apart, into gathers (a 256 x 65536
// row sum 3-10x slower than the fast tier's), and a strict exp2, log2 or sin
// with its libm fallback, which it left scalar.  The module flag is on
// those kernels only (not one chain, not fast mode, not the matmul tile),
// and the strong tier's code has no gather, a vector fma, and `run`'s bits.
TEST(LoopPasses, StrongTierKeepsChainsAndInlineLibmVectorized) {
  TileMinWork every("1");
  Ctx c;
  std::mt19937_64 rng(5);
  const char *flag = "uopc.tier0-ir";
  uopc_compile_opts strong = {UOPC_TIER_STRONG, 0, 1};
  auto strong_asm = [&](uopc_node *u) {
    uopc_error e;
    char *as = uopc_plan_emit(c, u, &strong, 1, &e);
    EXPECT_NE(as, nullptr) << e.msg;
    std::string r = as ? as : "";
    free(as);
    return r;
  };
  for (uopc_op rop : {UOPC_OP_ADD, UOPC_OP_MAX}) {
    uopc_node *u = uopc_reduce(c, Literal(c, rng, UOPC_DT_F32, 16, 256), rop, 1);
    EXPECT_EQ(Count(Ir(c, u, 0), flag), 1u) << uopc_op_name(rop);
    EXPECT_EQ(Count(Ir(c, u, UOPC_COMPILE_NO_UPCAST), flag), 0u);  // one chain
    EXPECT_EQ(Count(Ir(c, u, UOPC_COMPILE_FAST_MATH), flag), 0u);  // the vectorizer reassociates
    std::string as = strong_asm(u);
    EXPECT_EQ(Count(as, "gather"), 0u) << uopc_op_name(rop) << ":\n" << as;
    EXPECT_EQ(plan_text_opts(c, u, strong), run_text(c, u));
  }
  for (uopc_op op : {UOPC_OP_EXP2, UOPC_OP_LOG2, UOPC_OP_SIN}) {
    uopc_node *u = uopc_alu1(c, op, Literal(c, rng, UOPC_DT_F32, 64, 64));
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(Count(Ir(c, u, 0), flag), 1u) << uopc_op_name(op);
    EXPECT_EQ(Count(Ir(c, u, UOPC_COMPILE_FAST_MATH), flag), 0u);  // fast mode's polynomials have no libm block
    std::string as = strong_asm(u);
    // the inline double's polynomial: packed fmas (vfmadd...pd), not one
    // lane at a time (vfmadd...sd)
    size_t packed = 0, k = 0;
    while ((k = as.find("vfmadd", k)) != std::string::npos) packed += as.compare(k + 9, 2, "pd") == 0, k++;
    EXPECT_GT(packed, 4u) << uopc_op_name(op) << ":\n" << as;
    EXPECT_EQ(plan_text_opts(c, u, strong), run_text(c, u));
  }
  uopc_node *A = Literal(c, rng, UOPC_DT_F32, 64, 64), *B = Literal(c, rng, UOPC_DT_F32, 64, 64);
  EXPECT_EQ(Count(Ir(c, uopc_reduce(c, Products(c, A, B, 64, 64, 64, false), UOPC_OP_ADD, 1), 0), flag), 0u);
  uopc_plan_cache_clear();
}

// The matmul of the benchmark, at 64 x 64 x 64: interchanged, 8-row blocks,
// the 16-wide tile promoted to registers (no store inside the t loop): its
// IR has the vector accumulators, and without the passes it has none.
TEST(LoopPasses, MatmulGetsARegisterTile) {
  TileMinWork every("1");
  Ctx c;
  std::mt19937_64 rng(3);
  uopc_node *A = Literal(c, rng, UOPC_DT_F32, 64, 64), *B = Literal(c, rng, UOPC_DT_F32, 64, 64);
  uopc_node *u = uopc_reduce(c, Products(c, A, B, 64, 64, 64, false), UOPC_OP_ADD, 1);
  std::string on = Ir(c, u, 0), off = Ir(c, u, UOPC_COMPILE_NO_REORDER | UOPC_COMPILE_NO_UPCAST);
  // as emitted (before LLVM's passes, which vectorize the tile): off, the
  // nest i, j, t and t's rest (a serial reduction of 63 steps: 56 unrolled,
  // 7 left; four loops); on, column blocks, row blocks of 8, the first
  // element's 16 columns, t, the step's 16 columns (five)
  auto loops = [](const std::string &ir) { return Count(ir, "phi i32"); };
  EXPECT_EQ(loops(off), 4u);
  EXPECT_EQ(loops(on), 5u);
  EXPECT_EQ(PlanWith(c, u, 0), run_text(c, u));
  uopc_plan_cache_clear();
}

// Row groups (lib/schedule/lower.c, GROUP_BLOCKS = 16 row blocks): with more
// than 16 row blocks in whole groups the nest is row groups, column blocks,
// row blocks (one loop more than the tile alone); the results stay `run`'s
// bits, at every thread count (threads split the row groups), in every
// dtype and with Q K^T's transposed read; with a part group the nest is the
// tile's alone.
TEST(LoopPasses, RowGroupsMatchRunBitForBit) {
  TileMinWork every("1");
  std::mt19937_64 rng(44);
  auto loops = [](const std::string &ir) { return Count(ir, "phi i32"); };
  const bool wide = uopi_jit_vector_bits() >= 512;
  for (int32_t blocks : {2 * 16, 3 * 16, 16 + 2}) {
    for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_I32, UOPC_DT_F16}) {
      for (bool qk : {false, true}) {
        // the row block: TILE_ACCS / 2 rows, or 16 for Q K^T's gather with AVX-512
        const int32_t U = wide ? (qk ? 16 : 8) : 4, M = blocks * U;
        Ctx c;
        uopc_ctx_set_check(c, 0);
        const int32_t N = 64, K = 9;
        uopc_node *A = Literal(c, rng, t, M, K), *B = qk ? Literal(c, rng, t, N, K) : Literal(c, rng, t, K, N);
        uopc_node *u = uopc_reduce(c, Products(c, A, B, M, N, K, qk), UOPC_OP_ADD, 1);
        std::string what = std::string(uopc_dtype_name(t)) + (qk ? " QK^T " : " AB ") + std::to_string(M);
        std::string want = run_text(c, u);
        ASSERT_EQ(want.rfind("error:", 0), std::string::npos) << what << ": " << want;
        std::string ir = Ir(c, u, 0);
        size_t k = ir.rfind("; kernel ");  // the REDUCE's kernel: the last one in the text
        size_t main_loops = loops(ir.substr(k == std::string::npos ? 0 : k));
        bool whole = blocks % 16 == 0;
        EXPECT_EQ(main_loops, whole ? 6u : 5u) << what;
        for (uint32_t threads : {1u, 2u, 3u}) EXPECT_EQ(plan_text_opts(c, u, {UOPC_TIER_FAST, 0, threads}), want) << what;
        uopc_plan_cache_clear();
      }
    }
  }
}

// The default thresholds: a small matmul is only interchanged (the tile's
// compile time would not pay back in one call), the benchmark's is tiled.
TEST(LoopPasses, TileOnlyWhereItPaysBack) {
  Ctx c;
  auto loops = [](const std::string &ir) { return Count(ir, "phi i32"); };
  for (int n : {64, 1024}) {
    std::string src = "%A = param : slot=0 dtype=f32 shape=(N, N)\n%B = param : slot=1 dtype=f32 shape=(N, N)\n"
                      "%a1 = reshape %A, (N, 1, N)\n%a2 = expand %a1, (N, N, N)\n%bt = permute %B, (1, 0)\n"
                      "%b1 = reshape %bt, (1, N, N)\n%b2 = expand %b1, (N, N, N)\n%p = mul %a2, %b2\n"
                      "%c = reduce %p : op=add pop=1\n";
    for (size_t k; (k = src.find('N')) != std::string::npos;) src.replace(k, 1, std::to_string(n));
    uopc_error e;
    uopc_node *u = uopc_uir_parse(c, src.c_str(), src.size(), "mm.uir", &e);
    ASSERT_NE(u, nullptr) << e.msg;
    // 64: i, j, t, j'; 1024: B's panels (r, q, w), then row groups, jo, row blocks, jr, t, jr'
    EXPECT_EQ(loops(Ir(c, u, 0)), n == 64 ? 4u : 9u) << n;
    // UOPC_COMPILE_HOT (many calls): the 64 x 64 x 64 matmul is tiled too
    if (n == 64) EXPECT_EQ(loops(Ir(c, u, UOPC_COMPILE_HOT)), 5u);
  }
}

// The JIT tier of a register-tiled kernel (plan.c kernel_tier, as plan emit
// says it): the slower pipelines only from 2^29 multiply-adds, where they
// pay back within a call, or in a hot plan (fast mode).  Attention's Q K^T
// (512 x 512 x 64, 2^24, tiled from 2^23) stays at tier 0; the benchmark's
// matmul (2^30) takes tier 1 strict and tier 2 fast.
TEST(LoopPasses, SlowerTiersOnlyWhereTheyPayBack) {
  Ctx c;
  auto tiers = [&](const std::string &src, unsigned flags) {
    uopc_error e;
    uopc_node *u = uopc_uir_parse(c, src.c_str(), src.size(), "t.uir", &e);
    EXPECT_NE(u, nullptr) << e.msg;
    uopc_compile_opts o = {UOPC_TIER_FAST, flags, 1};
    char *ir = u ? uopc_plan_emit(c, u, &o, 0, &e) : nullptr;
    EXPECT_NE(ir, nullptr) << e.msg;
    std::string got;  // the tier of each kernel, in order
    for (const char *p = ir; p && (p = std::strstr(p, ", JIT tier ")); p += 11) got += p[11];
    free(ir);
    return got;
  };
  const std::string qk = "%Q = param : slot=0 dtype=f32 shape=(512, 64)\n%K = param : slot=1 dtype=f32 shape=(512, 64)\n"
                         "%q1 = reshape %Q, (512, 1, 64)\n%q2 = expand %q1, (512, 512, 64)\n"
                         "%k1 = reshape %K, (1, 512, 64)\n%k2 = expand %k1, (512, 512, 64)\n%p = mul %q2, %k2\n"
                         "%s = reduce %p : op=add pop=1\n";
  std::string mm = "%A = param : slot=0 dtype=f32 shape=(1024, 1024)\n%B = param : slot=1 dtype=f32 shape=(1024, 1024)\n"
                   "%a1 = reshape %A, (1024, 1, 1024)\n%a2 = expand %a1, (1024, 1024, 1024)\n%bt = permute %B, (1, 0)\n"
                   "%b1 = reshape %bt, (1, 1024, 1024)\n%b2 = expand %b1, (1024, 1024, 1024)\n%p = mul %a2, %b2\n"
                   "%c = reduce %p : op=add pop=1\n";
  std::string t = tiers(qk, UOPC_COMPILE_FAST_MATH);
  EXPECT_EQ(t.find_first_not_of('0'), std::string::npos) << t;
  EXPECT_NE(tiers(qk, UOPC_COMPILE_FAST_MATH | UOPC_COMPILE_HOT).find('2'), std::string::npos);
  t = tiers(qk, 0);
  EXPECT_EQ(t.find_first_not_of('0'), std::string::npos) << t;
  EXPECT_NE(tiers(mm, UOPC_COMPILE_FAST_MATH).find('2'), std::string::npos);
  t = tiers(mm, 0);
  EXPECT_NE(t.find('1'), std::string::npos) << t;
  EXPECT_EQ(t.find('2'), std::string::npos) << t;
  uopc_plan_cache_clear();
}

// UOPC_COMPILE_HOT applies the loop passes at every size and changes no
// result: the random programs of TiledReductionsMatchRunBitForBit at the
// default thresholds, with and without it, strict and (integers) fast.
TEST(LoopPasses, HotPlansMatchRunBitForBit) {
  std::mt19937_64 rng(31);
  int changed = 0, n = 0;
  for (int round = 0; round < 40; round++, n++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    uopc_node *u;
    std::string what, want;
    ASSERT_TRUE(Draw(c, rng, &u, &what, &want));
    EXPECT_EQ(PlanWith(c, u, UOPC_COMPILE_HOT), want) << what;
    if (what.rfind("i32", 0) == 0) EXPECT_EQ(PlanWith(c, u, UOPC_COMPILE_HOT | UOPC_COMPILE_FAST_MATH), want) << what;
    changed += Ir(c, u, UOPC_COMPILE_HOT) != Ir(c, u, 0);
  }
  EXPECT_GT(changed, n / 3);  // small shapes: the passes fire only with the flag
  uopc_plan_cache_clear();
}

// Sets UOPC_PACK_MIN_BYTES for a scope (pack_panels' threshold, docs/loops.md).
struct PackMinBytes {
  explicit PackMinBytes(const char *v) { setenv("UOPC_PACK_MIN_BYTES", v, 1); }
  ~PackMinBytes() { unsetenv("UOPC_PACK_MIN_BYTES"); }
};

// B read a page apart per step of the reduce axis is read from a copy in
// panels (pack_panels): the random programs above with packing at every
// stride and reuse agree with `run` bit for bit, in every dtype and op,
// and the copy is made for most of them (a kernel more in the plan).
TEST(LoopPasses, PanelCopiesMatchRunBitForBit) {
  TileMinWork every("1");
  PackMinBytes any("1");
  std::mt19937_64 rng(77);
  int packed = 0, n = 0;
  const int rounds = getenv("UOPC_LONG_TESTS") ? 3000 : 60;
  for (int round = 0; round < rounds; round++, n++) {
    Ctx c;
    uopc_ctx_set_check(c, 0);
    uopc_node *u;
    std::string what, want;
    ASSERT_TRUE(Draw(c, rng, &u, &what, &want));
    EXPECT_EQ(PlanWith(c, u, 0), want) << what;
    size_t with = Count(Ir(c, u, 0), "; kernel ");
    unsetenv("UOPC_PACK_MIN_BYTES");
    packed += with > Count(Ir(c, u, 0), "; kernel ");
    setenv("UOPC_PACK_MIN_BYTES", "1", 1);
  }
  EXPECT_GE(packed, 5) << "of " << n;  // 13 of 60 with AVX2 (panels 16 wide)
  uopc_plan_cache_clear();
}

// A short output row accumulated across the reduce loop (attention's P V:
// 64 columns, 8 vectors of AVX2) is interleaved by its whole length, so
// LICM keeps the row in registers (lib/codegen/emit.c short_row); a loop
// whose stores move with the loop around it (a transpose) is not.  Both
// agree with `run` bit for bit.
TEST(LoopPasses, ShortRowsAreInterleavedWhole) {
  Ctx c;
  std::mt19937_64 rng(9);
  const int32_t M = 16, K = 32, N = 8 * (int32_t)(uopi_jit_vector_bits() / 32);  // 8 vectors
  uopc_node *P = Literal(c, rng, UOPC_DT_F32, M, K), *V = Literal(c, rng, UOPC_DT_F32, K, N);
  uopc_node *u = uopc_reduce(c, Products(c, P, V, M, N, K, false), UOPC_OP_ADD, 1);
  int32_t perm[2] = {1, 0};
  std::string ir = Ir(c, u, 0);
  EXPECT_NE(ir.find("!\"llvm.loop.interleave.count\", i32 8}"), std::string::npos) << ir;
  EXPECT_EQ(PlanWith(c, u, 0), run_text(c, u));
  uopc_node *tr = uopc_permute(c, Literal(c, rng, UOPC_DT_F32, N, N), perm, 2);
  uopc_node *t = uopc_mul(c, tr, tr);
  std::string tir = Ir(c, t, 0);
  EXPECT_EQ(tir.find("llvm.loop.interleave.count"), std::string::npos) << tir;
  EXPECT_EQ(PlanWith(c, t, 0), run_text(c, t));
  uopc_plan_cache_clear();
}

// A serial float reduction in strict mode (a sum along the innermost axis,
// one dependent add an iteration) is unrolled by 8 (llvm.loop.unroll.count on
// its latch, lib/codegen/emit.c serial_reduction): the same adds in the same
// order, so `run`'s bits, at lengths that leave every remainder of 8 (past
// 8 adds, those the unroll does not divide run in a loop of their own after
// it); not in fast mode (the vectorizer reassociates it) and not for i32 (it
// vectorizes).
TEST(LoopPasses, SerialReductionsAreUnrolledBitForBit) {
  Ctx c;
  std::mt19937_64 rng(33);
  static const int32_t lens[] = {3, 7, 8, 9, 10, 12, 14, 16, 17, 1003};
  for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_F16, UOPC_DT_I32}) {
    for (int32_t n : lens) {
      for (int32_t rows : {1, 3}) {
        uopc_node *u = uopc_reduce(c, Literal(c, rng, t, rows, n), UOPC_OP_ADD, 1);
        std::string what = std::string(uopc_dtype_name(t)) + " " + std::to_string(rows) + "x" + std::to_string(n);
        std::string ir = Ir(c, u, 0);
        bool unrolled = ir.find("!\"llvm.loop.unroll.count\", i32 8}") != std::string::npos;
        EXPECT_EQ(unrolled, t != UOPC_DT_I32) << what << "\n" << ir;
        // its counter runs from 1, so that the body reads the counter itself (emit.c open_loop)
        EXPECT_EQ(ir.find("phi i32 [ 1, ") != std::string::npos, unrolled && n > 2) << what << "\n" << ir;
        // n - 1 adds (the first element is a store): past 8, what the unroll does not divide runs in a rest loop
        EXPECT_EQ(Count(ir, "rest.loop:"), unrolled && n - 1 > 8 && (n - 1) % 8 ? 1u : 0u) << what << "\n" << ir;
        EXPECT_EQ(Ir(c, u, UOPC_COMPILE_FAST_MATH).find("llvm.loop.unroll.count"), std::string::npos) << what;
        EXPECT_EQ(PlanWith(c, u, 0), run_text(c, u)) << what;
      }
    }
  }
  uopc_plan_cache_clear();
}


// A loop with f16 values is vectorized two vectors of f32 lanes wide, the
// width LLVM picks by itself for f16 arithmetic (llvm.loop.vectorize.width
// on its latch, lib/codegen/emit.c f16_loop): for a loop that converts f32 to
// f16 or compares f16 values (compared, and sqrt taken, as f32: ops.c widen)
// LLVM 19's cost model alone picks 4 lanes, or one at a time.  Not with
// EXP2, LOG2 or SIN in the loop (compile time), nor in one that accumulates
// at a fixed address.  The values are f16's rounding edges (ties to even,
// the overflow threshold 65520, subnormals and their ties, NaN, infinities,
// signed zeros) and random floats, scaled by powers of two, and f16 edges
// for the f16 operands: `run`'s bits at both tiers, in strict and fast mode,
// at lengths that leave every kind of remainder.
TEST(LoopPasses, F16LoopsGetTwoVectorsOfF32Lanes) {
  Ctx c;
  std::mt19937_64 rng(16);
  static const double edges[] = {1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11, 1.0 + 0x1p-11 + 0x1p-20, 2047.5, 2048.5, 4095.0,
                                 65504.0, 65519.99609375, 65520.0, 65535.0, 1e9, 0x1p-24, 0x1p-25, 3 * 0x1p-25,
                                 0x1p-25 + 0x1p-40, 0x1p-14 - 0x1p-25, 0x1p-14, 0x1p-26, 0.0, -0.0, INFINITY,
                                 -INFINITY, NAN, 0.1, 1.0 / 3, 65503.0, -65520.0, -0x1p-25};
  static const double edges16[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 65504.0, -65504.0, 0x1p-24, -0x1p-24,
                                   0x1p-14, 0x1p-14 - 0x1p-24, 1.0, -1.0, 0.5, 1.0 + 0x1p-10, 2048.0, 2049.0};
  static const double scales[] = {1.0, -1.0, 0.5, 2.0};
  const size_t ne = sizeof edges / sizeof *edges, ne16 = sizeof edges16 / sizeof *edges16;
  const int width = (int)(uopi_jit_vector_bits() / 16);
  for (int32_t n : {1003, 4101}) {
    std::vector<uopc_node *> a, b, h, h2, fin;
    for (int32_t k = 0; k < n; k++) {
      uint64_t r = rng();
      double v = k < (int32_t)ne || r % 4 == 0 ? edges[r % ne] : ((int)(r % 2000001) - 1000000) / 7.0;
      a.push_back(uopc_const_f(c, UOPC_DT_F32, v));
      b.push_back(uopc_const_f(c, UOPC_DT_F32, scales[(r >> 32) % 4]));
      h.push_back(uopc_const_f(c, UOPC_DT_F16, (r >> 20) % 3 == 0 ? edges16[(r >> 24) % ne16]
                                                                   : ((int)((r >> 40) % 2001) - 1000) / 256.0));
      h2.push_back(uopc_const_f(c, UOPC_DT_F16, (r >> 50) % 3 == 0 ? edges16[(r >> 54) % ne16]
                                                                    : ((int)((r >> 8) % 2001) - 1000) / 256.0));
      fin.push_back(uopc_const_f(c, UOPC_DT_F16, ((int)((r >> 40) % 2001) - 1000) / 256.0));
    }
    uopc_node *A = uopc_stack(c, a.data(), n), *B = uopc_stack(c, b.data(), n);
    uopc_node *H = uopc_stack(c, h.data(), n), *H2 = uopc_stack(c, h2.data(), n);
    uopc_node *AB = uopc_mul(c, A, B), *A16 = uopc_cast(c, A, UOPC_DT_F16);
    struct {
      const char *what;
      uopc_node *u;
      bool wide;
    } cases[] = {
        {"cast(A*B)", uopc_cast(c, AB, UOPC_DT_F16), true},
        {"cast(max(sqrt(A*B)+recip(B), A))",
         uopc_cast(c, uopc_max(c, uopc_add(c, uopc_alu1(c, UOPC_OP_SQRT, AB), uopc_alu1(c, UOPC_OP_RECIP, B)), A),
                   UOPC_DT_F16),
         true},
        {"cast(exp2(A*B))", uopc_cast(c, uopc_alu1(c, UOPC_OP_EXP2, AB), UOPC_DT_F16), false},
        {"cast(A)*cast(B)", uopc_mul(c, A16, uopc_cast(c, B, UOPC_DT_F16)), true},
        {"(H+0.5)*H", uopc_mul(c, uopc_add_k(c, H, 0.5), H), true},
        {"H<H2", uopc_lt(c, H, H2), true},
        {"H!=cast(A)", uopc_ne(c, H, A16), true},
        {"max(H,H2)", uopc_max(c, H, H2), true},
        {"sqrt(H*H2)", uopc_alu1(c, UOPC_OP_SQRT, uopc_mul(c, H, H2)), true},
        {"cast(H,bool)", uopc_cast(c, H2, UOPC_DT_BOOL), true},
        {"cast(H,f32)*B", uopc_mul(c, uopc_cast(c, H, UOPC_DT_F32), B), true},
        {"where(H<H2,H2,H)", uopc_where(c, uopc_lt(c, H, H2), H2, H), true},
    };
    const std::string hint = "!\"llvm.loop.vectorize.width\", i32 " + std::to_string(width) + "}";
    for (auto &k : cases) {
      std::string what = std::string(k.what) + " n=" + std::to_string(n);
      ASSERT_TRUE(k.u) << what;
      std::string ir = Ir(c, k.u, 0);
      EXPECT_EQ(ir.find(hint) != std::string::npos, k.wide && width >= 16) << what << "\n" << ir;
      std::string want = run_text(c, k.u);
      ASSERT_EQ(want.rfind("error:", 0), std::string::npos) << what << ": " << want;
      for (uopc_tier tier : {UOPC_TIER_FAST, UOPC_TIER_STRONG})
        for (unsigned flags : {0u, (unsigned)UOPC_COMPILE_FAST_MATH})
          if (!flags || (std::string(k.what).find("exp2") == std::string::npos &&
                         std::string(k.what).find("sqrt") == std::string::npos &&
                         std::string(k.what).find("max") == std::string::npos))  // fast mode's exp2 and sqrt are
                                                                                  // within a tolerance, its max of
                                                                                  // a NaN unspecified (fast-math.md)
            EXPECT_EQ(plan_text_opts(c, k.u, {tier, flags, 1}), want) << what << " tier " << tier << " flags " << flags;
    }
    // an f16 converted to i32 is checked to fit by an accumulator in the same loop: no hint
    uopc_node *toi = uopc_cast(c, uopc_stack(c, fin.data(), n), UOPC_DT_I32);
    std::string tir = Ir(c, toi, 0);
    EXPECT_NE(tir.find("fptosi"), std::string::npos) << tir;
    EXPECT_EQ(tir.find("llvm.loop.vectorize.width"), std::string::npos) << tir;
    EXPECT_EQ(plan_text_opts(c, toi, {UOPC_TIER_FAST, 0, 1}), run_text(c, toi));
    // fast mode's max of f16 without NaN or signed zeros: run's bits
    uopc_node *F = uopc_stack(c, fin.data(), n), *fmax = uopc_max(c, F, uopc_mul_k(c, F, 0.5));
    EXPECT_EQ(Ir(c, fmax, UOPC_COMPILE_FAST_MATH).find(hint) != std::string::npos, width >= 16);
    for (uopc_tier tier : {UOPC_TIER_FAST, UOPC_TIER_STRONG})
      EXPECT_EQ(plan_text_opts(c, fmax, {tier, UOPC_COMPILE_FAST_MATH, 1}), run_text(c, fmax)) << "tier " << tier;
  }
  uopc_plan_cache_clear();
}
