// Issue 10, hardening: one 1,000,000-node graph builds, prints, parses,
// simplifies and lowers (uopi_kernel_prepare and the linearize stage) on a
// thread with a 256 KiB stack: nothing on the way recurses over the graph.
// The graph is a kernel, O[i] = f(A[i]) over 1024 f32, f a chain of 1M
// alternating `add 0.5` and `mul 0.999` (scripts/gen_chain.py's kernel; f32
// arithmetic is not reassociated, so simplify keeps every node).
// MillionNodes.CompilesAndRuns then compiles the whole kernel through LLVM
// (about 14 s of CPU and 2 GB: plain builds only; LLVM's own code is not
// ours to keep off the stack, so it runs on the main thread).
#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>
#include <cstdlib>

extern "C" {
#include "lower/linearize.h"
#include "uopc/uopc.h"
}

namespace {

constexpr int kChain = 1000000;

struct Million {
  std::string err;
  uint32_t size = 0, simplified_size = 0, prog_n = 0;
  bool built = false, printed = false, parsed = false, simplified = false, lowered = false;
  double secs[5] = {0, 0, 0, 0, 0};  // build, print, parse, simplify, lower
};

double Since(std::chrono::steady_clock::time_point &t) {
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

// O[i] = f(A[i]) for i < 1024, f: kChain alternating add 0.5, mul 0.999
uopc_node *ChainKernel(uopc_ctx *c) {
  uopc_node *a = uopc_buffer(c, 0, UOPC_DT_F32, 1024), *o = uopc_buffer(c, 1, UOPC_DT_F32, 1024);
  uopc_node *i = uopc_range_k(c, 1024, 0);
  uopc_node *half = uopc_const_f(c, UOPC_DT_F32, 0.5), *k = uopc_const_f(c, UOPC_DT_F32, 0.999);
  uopc_node *v = uopc_load1(c, a, i);
  for (int n = 1; n <= kChain && v; n++) v = n % 2 ? uopc_add(c, v, half) : uopc_mul(c, v, k);
  return uopc_sink1(c, uopc_end(c, uopc_store1(c, o, i, v), &i, 1));
}

void *million(void *arg) {
  Million *m = static_cast<Million *>(arg);
  uopc_ctx *c = uopc_ctx_new(nullptr);
  auto t = std::chrono::steady_clock::now();
  uopc_node *root = ChainKernel(c);
  m->secs[0] = Since(t);
  m->built = root != nullptr;
  if (root) m->size = uopc_graph_size(c, root);
  char *s = root ? uopc_uir_print(c, root) : nullptr;
  m->secs[1] = Since(t);
  m->printed = s != nullptr;
  if (s) {
    uopc_error e{};
    uopc_node *back = uopc_uir_parse(c, s, strlen(s), "million.uir", &e);
    m->secs[2] = Since(t);
    m->parsed = back == root;
    if (!back) m->err = e.msg;
    uopc_mem_free(c, s, strlen(s) + 1);
  }
  if (m->parsed) {
    uopc_node *r = uopc_simplify(c, root);
    m->secs[3] = Since(t);
    m->simplified = r != nullptr;
    if (r) m->simplified_size = uopc_graph_size(c, r);
    uopi_kernel_ir kir;
    uopi_prog p{};
    if (r && uopi_kernel_prepare(c, r, &kir) == UOPC_OK && uopi_linearize(c, &kir, &p) == UOPC_OK) {
      m->prog_n = p.n;
      const char *why = nullptr;
      uint32_t at = 0;
      m->lowered = uopi_prog_verify(&p, &why, &at) == 0;
      if (!m->lowered) m->err = why ? why : "verify: out of memory";
    }
    m->secs[4] = Since(t);
    uopi_prog_free(&p);
  }
  if (m->err.empty() && uopc_ctx_error(c)) m->err = uopc_ctx_error(c)->msg;
  uopc_ctx_free(c);
  return nullptr;
}

TEST(MillionNodes, BuildPrintParseSimplifyLowerOnA256KiBStack) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t th;
  Million m;
  ASSERT_EQ(pthread_create(&th, &attr, million, &m), 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_TRUE(m.built) << m.err;
  // the chain, the load, index, range, two buffers, two constants, store, end, sink, 1024
  EXPECT_GE(m.size, (uint32_t)kChain);
  EXPECT_TRUE(m.printed) << m.err;
  EXPECT_TRUE(m.parsed) << m.err;
  EXPECT_TRUE(m.simplified) << m.err;
  EXPECT_GE(m.simplified_size, (uint32_t)kChain);
  EXPECT_TRUE(m.lowered) << m.err;
  EXPECT_GE(m.prog_n, (uint32_t)kChain);
  std::printf("[ info     ] %u nodes: build %.2f s, print %.2f s, parse %.2f s, simplify %.2f s, "
              "prepare+linearize %.2f s (%u instructions)\n",
              m.size, m.secs[0], m.secs[1], m.secs[2], m.secs[3], m.secs[4], m.prog_n);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(MillionNodes, CompilesAndRuns) {
  if (kSanitized) GTEST_SKIP() << "compiling 1M nodes through LLVM: 14 s and 2 GB in a plain build, several times that sanitized";
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_node *root = ChainKernel(c);
  ASSERT_NE(root, nullptr);
  auto t = std::chrono::steady_clock::now();
  uopc_error e{};
  uopc_compile_opts o{};
  setenv("UOPC_CACHE", "0", 1);  // a 1M-node entry has no place in the suite's cache directory
  uopc_kernel *k = uopc_compile(c, root, &o, &e);
  unsetenv("UOPC_CACHE");
  double compile_s = Since(t);
  uopc_ctx_free(c);
  ASSERT_NE(k, nullptr) << e.msg;
  std::vector<float> a(1024), out(1024, -1.0f);
  for (int j = 0; j < 1024; j++) a[j] = (float)j * 0.25f - 100.0f;
  void *bufs[] = {a.data(), out.data()};
  ASSERT_EQ(uopc_kernel_call(k, bufs, 2, &e), UOPC_OK) << e.msg;
  double call_s = Since(t);
  uopc_kernel_free(k);
  for (int j : {0, 1, 511, 1023}) {  // f in plain C, each op rounded to f32
    volatile float v = a[j];
    for (int n = 1; n <= kChain; n++) v = n % 2 ? v + 0.5f : v * 0.999f;
    EXPECT_EQ(out[j], v) << "element " << j;
  }
  std::printf("[ info     ] compiling the 1M-node kernel: %.2f s, calling it: %.2f s\n", compile_s, call_s);
}

}  // namespace
