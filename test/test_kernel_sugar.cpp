// The kernel sugar of uop.h (uopc_range_k, uopc_mad_k, uopc_index1,
// uopc_load1, uopc_store1, uopc_end1, uopc_sink1): the copy kernel of
// docs/uir.md built in C is the parsed one (the same nodes), a matmul and an
// elementwise kernel compile and match plain C bit for bit, NULL operands
// give NULL without a new error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "uopc/uopc.h"
#include "support/ctx.h"
#include "support/kernels.h"

namespace {

TEST(KernelSugar, CopyKernelIsTheParsedOne) {
  Ctx x;
  uopc_ctx *c = x.c;
  uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, 32), *O = uopc_buffer(c, 1, UOPC_DT_F32, 32);
  uopc_node *i = uopc_range_k(c, 4, 0), *j = uopc_range_k(c, 8, 1);
  uopc_node *flat = uopc_mad_k(c, i, 8, j);
  uopc_node *idx = uopc_mad_k(c, uopc_mod_k(c, uopc_idiv_k(c, flat, 8), 4), 8, uopc_mod_k(c, flat, 8));
  uopc_node *loops[] = {i, j};
  uopc_node *k = uopc_sink1(c, uopc_end(c, uopc_store1(c, O, flat, uopc_load1(c, A, idx)), loops, 2));
  ASSERT_NE(k, nullptr) << x.err();
  uopc_error e{};
  uopc_node *parsed = uopc_uir_parse_file(c, UOPC_SOURCE_DIR "/examples/copy_kernel.uir", &e);
  ASSERT_NE(parsed, nullptr) << e.msg;
  EXPECT_EQ(k, parsed);  // hash consing: the same graph is the same node
}

TEST(KernelSugar, HelpersAreTheLongForms) {
  Ctx x;
  uopc_ctx *c = x.c;
  uopc_node *B = uopc_buffer(c, 0, UOPC_DT_I32, 16);
  uopc_node *r = uopc_range_k(c, 16, 3);
  EXPECT_EQ(r, uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 16), 3));
  EXPECT_EQ(r->op, UOPC_OP_RANGE);
  EXPECT_EQ(r->arg.i, 3);
  uopc_node *ix = uopc_index1(c, B, r);
  EXPECT_EQ(ix, uopc_index(c, B, &r, 1));
  uopc_node *ld = uopc_load1(c, B, r);
  EXPECT_EQ(ld, uopc_load(c, ix));
  EXPECT_EQ(ld->dtype, UOPC_DT_I32);
  uopc_node *st = uopc_store1(c, B, r, uopc_add_k(c, ld, 1));
  EXPECT_EQ(st, uopc_store(c, ix, uopc_add_k(c, ld, 1)));
  uopc_node *en = uopc_end1(c, st, r);
  EXPECT_EQ(en, uopc_end(c, st, &r, 1));
  uopc_node *sk = uopc_sink1(c, en);
  EXPECT_EQ(sk, uopc_sink(c, &en, 1));
  uopc_node *m = uopc_mad_k(c, r, 4, r);
  EXPECT_EQ(m, uopc_add(c, uopc_mul(c, r, uopc_const_i(c, UOPC_DT_I32, 4)), r));
  EXPECT_EQ(x.err(), "");
}


TEST(KernelSugar, MatmulMatchesPlainCBitForBit) {
  const int n = 24;
  Ctx x;
  uopc_node *root = MatmulKernel(x.c, n);
  ASSERT_NE(root, nullptr) << x.err();
  uopc_error e{};
  uopc_kernel *k = uopc_compile(x.c, root, nullptr, &e);
  ASSERT_NE(k, nullptr) << e.msg;
  std::vector<float> a(n * n), b(n * n), got(n * n, 0.0f), want(n * n, 0.0f);
  uint32_t s = 12345;
  for (int t = 0; t < n * n; t++) {
    s = s * 1664525u + 1013904223u;
    a[t] = (float)((int)(s >> 8) % 2001 - 1000) / 37.0f;
    s = s * 1664525u + 1013904223u;
    b[t] = (float)((int)(s >> 8) % 2001 - 1000) / 53.0f;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int kk = 0; kk < n; kk++) {
        volatile float p = a[i * n + kk] * b[kk * n + j];  // no contraction into an FMA
        want[i * n + j] = want[i * n + j] + p;
      }
  void *bufs[] = {a.data(), b.data(), got.data()};
  ASSERT_EQ(uopc_kernel_call(k, bufs, 3, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * n * n), 0);
  uopc_kernel_free(k);
}

TEST(KernelSugar, ElementwiseMulAdd) {
  const int n = 1000;
  Ctx x;
  uopc_ctx *c = x.c;
  uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, n), *B = uopc_buffer(c, 1, UOPC_DT_F32, n),
            *O = uopc_buffer(c, 2, UOPC_DT_F32, n);
  uopc_node *i = uopc_range_k(c, n, 0);
  uopc_node *a = uopc_load1(c, A, i), *b = uopc_load1(c, B, i);
  uopc_node *root = uopc_sink1(c, uopc_end1(c, uopc_store1(c, O, i, uopc_add(c, uopc_mul(c, a, b), a)), i));
  ASSERT_NE(root, nullptr) << x.err();
  uopc_error e{};
  uopc_kernel *k = uopc_compile(c, root, nullptr, &e);
  ASSERT_NE(k, nullptr) << e.msg;
  std::vector<float> va(n), vb(n), got(n), want(n);
  for (int t = 0; t < n; t++) {
    va[t] = (float)t * 0.37f - 100.0f;
    vb[t] = 3.0f - (float)t / 7.0f;
    volatile float p = va[t] * vb[t];
    want[t] = p + va[t];
  }
  void *bufs[] = {va.data(), vb.data(), got.data()};
  ASSERT_EQ(uopc_kernel_call(k, bufs, 3, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * n), 0);
  uopc_kernel_free(k);
}

TEST(KernelSugar, NullOperandsKeepTheFirstError) {
  Ctx x;
  uopc_ctx *c = x.c;
  uopc_node *B = uopc_buffer(c, 0, UOPC_DT_F32, 8);
  uopc_node *r = uopc_range_k(c, 8, 0);
  ASSERT_NE(r, nullptr);
  // a first error, then NULL through every helper: NULL out, the error stays
  EXPECT_EQ(uopc_const_i(c, UOPC_DT_I32, 1LL << 40), nullptr);
  std::string first = x.err();
  ASSERT_NE(first, "");
  EXPECT_EQ(uopc_mad_k(c, nullptr, 2, r), nullptr);
  EXPECT_EQ(uopc_mad_k(c, r, 2, nullptr), nullptr);
  EXPECT_EQ(uopc_index1(c, nullptr, r), nullptr);
  EXPECT_EQ(uopc_index1(c, B, nullptr), nullptr);
  EXPECT_EQ(uopc_load1(c, nullptr, r), nullptr);
  EXPECT_EQ(uopc_load1(c, B, nullptr), nullptr);
  EXPECT_EQ(uopc_store1(c, nullptr, r, uopc_load1(c, B, r)), nullptr);
  EXPECT_EQ(uopc_store1(c, B, nullptr, uopc_load1(c, B, r)), nullptr);
  EXPECT_EQ(uopc_store1(c, B, r, nullptr), nullptr);
  EXPECT_EQ(uopc_end1(c, nullptr, r), nullptr);
  EXPECT_EQ(uopc_end1(c, uopc_store1(c, B, r, uopc_load1(c, B, r)), nullptr), nullptr);
  EXPECT_EQ(uopc_sink1(c, nullptr), nullptr);
  EXPECT_EQ(x.err(), first);
  // a NULL context
  EXPECT_EQ(uopc_range_k(nullptr, 4, 0), nullptr);
  EXPECT_EQ(uopc_mad_k(nullptr, r, 2, r), nullptr);
  EXPECT_EQ(uopc_index1(nullptr, B, r), nullptr);
  EXPECT_EQ(uopc_load1(nullptr, B, r), nullptr);
  EXPECT_EQ(uopc_store1(nullptr, B, r, r), nullptr);
  EXPECT_EQ(uopc_end1(nullptr, r, r), nullptr);
  EXPECT_EQ(uopc_sink1(nullptr, r), nullptr);
}

TEST(KernelSugar, BadOperandsAreTheConstructorsErrors) {
  {
    Ctx x;  // a value of another dtype than the buffer's
    uopc_node *B = uopc_buffer(x.c, 0, UOPC_DT_F32, 8);
    uopc_node *r = uopc_range_k(x.c, 8, 0);
    EXPECT_EQ(uopc_store1(x.c, B, r, r), nullptr);
    EXPECT_NE(x.err().find("STORE"), std::string::npos) << x.err();
  }
  {
    Ctx x;  // END over something that is not a RANGE
    uopc_node *B = uopc_buffer(x.c, 0, UOPC_DT_F32, 8);
    uopc_node *r = uopc_range_k(x.c, 8, 0);
    uopc_node *st = uopc_store1(x.c, B, r, uopc_load1(x.c, B, r));
    EXPECT_EQ(uopc_end1(x.c, st, uopc_const_i(x.c, UOPC_DT_I32, 3)), nullptr);
    EXPECT_NE(x.err().find("END"), std::string::npos) << x.err();
  }
  {
    Ctx x;  // a RANGE that runs no iteration
    uopc_node *B = uopc_buffer(x.c, 0, UOPC_DT_F32, 8);
    uopc_node *r = uopc_range_k(x.c, 0, 0);
    uopc_node *root = uopc_sink1(x.c, uopc_end1(x.c, uopc_store1(x.c, B, r, uopc_const_f(x.c, UOPC_DT_F32, 1)), r));
    ASSERT_NE(root, nullptr) << x.err();
    uopc_error e{};
    uopc_kernel *k = uopc_compile(x.c, root, nullptr, &e);
    ASSERT_NE(k, nullptr) << e.msg;
    float buf[8] = {0};
    void *bufs[] = {buf};
    EXPECT_EQ(uopc_kernel_call(k, bufs, 1, &e), UOPC_OK) << e.msg;
    EXPECT_EQ(buf[0], 0.0f);  // no iteration, no store
    uopc_kernel_free(k);
  }
}

}  // namespace
