// The JIT engine (lib/jit/jit.h) on hand-built IR: bit-exact results at both
// tiers, vectorized loops, threads, memory release, loading objects, the
// launcher's floating-point environment, and errors.
#if __has_include(<llvm-c/Core.h>)

#include <gtest/gtest.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <atomic>
#include <set>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compile.h"
#include "jit/jit.h"
#include "jit/jit_impl.h"  // UOPI_JIT_BLOCK_MAX
#include "jit/link.h"      // uopi_jit_memory
#include "support/samples.h"
#include "support/valgrind.h"
#include "uopc/plan.h"

namespace {

// Disposes the engine at exit, as a program must (never from a static
// destructor): the ordered shutdown (cached kernels first, then the engine).
// It also checks that no test left a kernel alive.  Cached plans hold
// kernels: the plan cache (above the compile layer) is emptied first.
class JitEnv : public ::testing::Environment {
 public:
  void TearDown() override {
    uopc_plan_cache_clear();
    uopc_error e{};
    EXPECT_EQ(uopi_compile_shutdown(&e), UOPC_OK) << e.msg;
  }
};
::testing::Environment *const jit_env = ::testing::AddGlobalTestEnvironment(new JitEnv);

const uopi_jit_tier kTiers[] = {UOPI_JIT_TIER0, UOPI_JIT_TIER1, UOPI_JIT_TIER2};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;  // its quarantine keeps freed memory resident
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

struct Code {  // owns a uopi_jit_code
  uopi_jit_code *k = nullptr;
  Code() = default;
  explicit Code(uopi_jit_code *p) : k(p) {}
  Code(Code &&o) noexcept : k(o.k) { o.k = nullptr; }
  Code &operator=(Code &&o) noexcept {
    std::swap(k, o.k);
    return *this;
  }
  ~Code() { uopi_jit_free(k); }
};

std::string Name(const char *prefix = "t") {
  char buf[64];
  uopi_jit_unique_name(buf, sizeof buf, prefix);
  return buf;
}

Code CompileSample(sample_kind s, int64_t n, uopi_jit_tier t, std::string *name_out = nullptr) {
  std::string name = Name(s == SAMPLE_EW ? "ew" : "mm");
  uopc_error e{};
  LLVMModuleRef m;
  EXPECT_EQ(sample_module(s, n, name.c_str(), &m, &e), UOPC_OK) << e.msg;
  uopi_jit_code *k = nullptr;
  EXPECT_EQ(uopi_jit_compile(m, name.c_str(), 3, t, &k, &e), UOPC_OK) << e.msg;
  if (name_out) *name_out = name;
  return Code(k);
}

// Deterministic floats in [-4, 4) with all mantissa bits in play, so that a
// fused multiply-add would round differently from fmul+fadd in most lanes.
std::vector<float> Data(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto &x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = (float)((double)(s >> 40) / (double)(1ull << 24) * 8.0 - 4.0);
  }
  return v;
}

// The references: every product rounded to float before the add (volatile
// keeps any compiler from contracting the pair into an FMA).
void RefEw(float *o, const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    volatile float p = a[i] * b[i];
    o[i] = p + a[i];
  }
}

void RefMm(float *c, const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < n; j++) c[i * n + j] = 0.0f;
    for (size_t k = 0; k < n; k++)
      for (size_t j = 0; j < n; j++) {
        volatile float p = a[i * n + k] * b[k * n + j];
        c[i * n + j] = c[i * n + j] + p;
      }
  }
}

void Call(const Code &c, std::vector<void *> bufs) {
  uopc_error e{};
  ASSERT_EQ(uopi_jit_call(c.k, bufs.data(), (unsigned)bufs.size(), &e), UOPC_OK) << e.msg;
}

// Runs an ew kernel of n elements on fresh data; true when bit-exact.
bool EwIsExact(const Code &c, size_t n, uint32_t seed) {
  std::vector<float> a = Data(n, seed), b = Data(n, seed + 1), o(n, -1.0f), r(n);
  Call(c, {o.data(), a.data(), b.data()});
  RefEw(r.data(), a.data(), b.data(), n);
  return std::memcmp(o.data(), r.data(), n * sizeof(float)) == 0;
}

long RssKiB() {
  long pages = 0, rss = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = -1;
  std::fclose(f);
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST(JitEngine, ElementwiseBitExactAtBothTiers) {
  for (uopi_jit_tier t : kTiers)
    for (size_t n : {1, 15, 16, 1003, 4096}) {
      Code c = CompileSample(SAMPLE_EW, (int64_t)n, t);
      ASSERT_NE(c.k, nullptr);
      EXPECT_EQ(c.k->nbufs, 3u);
      EXPECT_TRUE(EwIsExact(c, n, (uint32_t)n)) << "tier " << t << " n " << n;
    }
}

TEST(JitEngine, MatmulBitExactAtBothTiers) {
  for (uopi_jit_tier t : kTiers)
    for (size_t n : {1, 37, 64}) {
      Code k = CompileSample(SAMPLE_MM, (int64_t)n, t);
      ASSERT_NE(k.k, nullptr);
      std::vector<float> a = Data(n * n, 7), b = Data(n * n, 8), c(n * n, 123.0f), r(n * n);
      Call(k, {c.data(), a.data(), b.data()});
      RefMm(r.data(), a.data(), b.data(), n);
      EXPECT_EQ(std::memcmp(c.data(), r.data(), n * n * sizeof(float)), 0) << "tier " << t << " n " << n;
    }
}

// The hot loop of the elementwise kernel must use packed single-precision
// multiplies (on an AVX host, on ymm or zmm registers).
TEST(JitEngine, ElementwiseLoopIsVectorized) {
  std::string name = Name("asm");
  uopc_error e{};
  LLVMModuleRef m;
  ASSERT_EQ(sample_module(SAMPLE_EW, 4096, name.c_str(), &m, &e), UOPC_OK) << e.msg;
  bool avx = __builtin_cpu_supports("avx");
  for (uopi_jit_tier t : kTiers) {
    char *text = nullptr;
    ASSERT_EQ(uopi_jit_asm_text(m, t, &text, &e), UOPC_OK) << e.msg;
    std::string s(text);
    std::free(text);
    bool packed = false;
    for (size_t at = s.find("mulps"); at != std::string::npos; at = s.find("mulps", at + 1)) {
      std::string line = s.substr(at, s.find('\n', at) - at);
      if (!avx || line.find("%ymm") != std::string::npos || line.find("%zmm") != std::string::npos) packed = true;
    }
    EXPECT_TRUE(packed) << "tier " << t << ":\n" << s;
    EXPECT_EQ(s.find("mulss"), std::string::npos) << "a scalar remainder loop for n=4096?\n" << s;
  }
  // asm_text left m alone: the IR still has the scalar loop.
  char *ir = uopi_jit_ir_text(m);
  ASSERT_NE(ir, nullptr);
  EXPECT_NE(std::strstr(ir, "fmul float"), nullptr);
  EXPECT_NE(std::strstr(ir, "noalias"), nullptr);
  EXPECT_NE(std::strstr(ir, "nounwind"), nullptr);
  std::free(ir);
  uopi_jit_module_free(m);
}

// 4 threads each compile 20 distinct kernels (both tiers) and call them,
// and the kernels of the other threads, while the others compile.
TEST(JitEngine, ThreadsCompileAndCallConcurrently) {
  constexpr int kThreads = 4, kKernels = 20;
  std::vector<Code> codes(kThreads * kKernels);
  std::atomic<int> bad{0}, done{0};
  auto work = [&](int tid) {
    for (int i = 0; i < kKernels; i++) {
      size_t n = 100 + 17 * (size_t)(tid * kKernels + i);
      uopi_jit_tier t = i % 5 == 0 ? UOPI_JIT_TIER2 : UOPI_JIT_TIER0;
      Code c = CompileSample(SAMPLE_EW, (int64_t)n, t);
      if (!c.k || !EwIsExact(c, n, (uint32_t)(tid * 1000 + i))) bad++;
      codes[(size_t)(tid * kKernels + i)] = std::move(c);
      done++;
    }
  };
  std::vector<std::thread> th;
  for (int tid = 0; tid < kThreads; tid++) th.emplace_back(work, tid);
  for (auto &x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(done.load(), kThreads * kKernels);
  // Every kernel again, from all threads at once.
  th.clear();
  for (int tid = 0; tid < kThreads; tid++)
    th.emplace_back([&, tid] {
      for (int i = tid; i < kThreads * kKernels; i += kThreads)
        if (!EwIsExact(codes[(size_t)i], 100 + 17 * (size_t)i, (uint32_t)i)) bad++;
    });
  for (auto &x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
}

// Compiling and freeing 500 kernels leaves RSS about flat (measured: 64 KiB;
// without the removal, 2170 KiB: code is page-granular), and a freed
// kernel's symbol can be defined again.  Under ASan the quarantine holds
// every freed block (~150 KiB a compile), so only the second part is checked.
TEST(JitEngine, FreeReleasesTheCode) {
  for (int i = 0; i < 50; i++) CompileSample(SAMPLE_EW, 64, UOPI_JIT_TIER0);  // warm up
  const int rounds = kAsan ? 100 : 500;
  long before = RssKiB();
  std::string name;
  std::vector<uint8_t> obj;
  for (int i = 0; i < rounds; i++) {
    Code c = CompileSample(SAMPLE_EW, 64, UOPI_JIT_TIER0, &name);
    ASSERT_NE(c.k, nullptr);
    if (i == rounds - 1) obj.assign(c.k->obj, c.k->obj + c.k->obj_size);
  }
  long grown = RssKiB() - before;
  std::printf("[ info     ] RSS growth over %d compile+free: %ld KiB\n", rounds, grown);
  if (!kAsan) EXPECT_LT(grown, 1024) << "500 kernels kept would hold >= 2000 KiB of code pages";
  uopc_error e{};
  uopi_jit_code *k = nullptr;
  EXPECT_EQ(uopi_jit_load(obj.data(), obj.size(), name.c_str(), 3, &k, &e), UOPC_OK) << e.msg;
  uopi_jit_free(k);
}

// Code memory comes from a pool (lib/jit/pool_mm.cpp): a freed kernel's
// pages go to the next kernel, no mapping of the process is ever writable
// and executable at once, and a link that fails after allocating (an
// undefined symbol) leaves the pool usable (LLVM 19 unmapped the whole
// slab there).
bool AnyWritableExecutableMapping(std::string *which) {
  FILE *f = std::fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[512];
  bool found = false;
  while (std::fgets(line, sizeof line, f)) {
    char perms[8] = {};
    if (std::sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x') {
      found = true;
      *which = line;
    }
  }
  std::fclose(f);
  return found;
}

// The permissions ("r-xp", ...) of the mapping that holds address a, or "".
std::string PermsAt(uintptr_t a) {
  FILE *f = std::fopen("/proc/self/maps", "r");
  if (!f) return "";
  char line[512];
  std::string perms;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0;
    char p[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 && a >= lo && a < hi) perms = p;
  }
  std::fclose(f);
  return perms;
}

Code UndefinedSymbolFails() {
  std::string name = Name("undef");
  uopc_error e{};
  LLVMModuleRef m;
  EXPECT_EQ(uopi_jit_module_new(name.c_str(), &m, &e), UOPC_OK);
  LLVMContextRef cx = LLVMGetModuleContext(m);
  LLVMTypeRef vt = LLVMFunctionType(LLVMVoidTypeInContext(cx), nullptr, 0, 0);
  LLVMTypeRef pt = LLVMPointerTypeInContext(cx, 0);
  LLVMValueRef fn = LLVMAddFunction(m, name.c_str(), LLVMFunctionType(LLVMVoidTypeInContext(cx), &pt, 1, 0));
  LLVMValueRef ext = LLVMAddFunction(m, "uopc_test_missing_symbol", vt);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(cx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cx, fn, "entry"));
  LLVMBuildCall2(b, vt, ext, nullptr, 0, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  uopi_jit_code *k = nullptr;
  EXPECT_EQ(uopi_jit_compile(m, name.c_str(), 0, UOPI_JIT_TIER0, &k, &e), UOPC_ERR_JIT);
  return Code(k);
}

// The pool in use: live kernels run from pages mapped code_perms, freed
// ranges are reused (also after failed links, which abandon theirs), and no
// mapping of the process is ever writable and executable.
void CheckPooledMemory(const char *code_perms) {
  std::string which;
  std::vector<Code> live;
  for (int i = 0; i < 8; i++) live.push_back(CompileSample(i & 1 ? SAMPLE_MM : SAMPLE_EW, 16, UOPI_JIT_TIER0));
  // valgrind's own translation cache is mapped rwx in the process: there only
  // the kernels' own pages are checked.
  const bool scan = !UnderValgrind();
  if (scan) EXPECT_FALSE(AnyWritableExecutableMapping(&which)) << which;
  for (const Code &c : live) {
    ASSERT_NE(c.k, nullptr);
    EXPECT_EQ(PermsAt((uintptr_t)c.k->fn), code_perms);
  }

  // Free one, compile the same kind again: its range is the first the pool has free.
  std::set<uintptr_t> freed, reused;
  for (int round = 0; round < 20; round++) {
    UndefinedSymbolFails();  // abandoned allocations in between
    Code c = CompileSample(SAMPLE_EW, 64, UOPI_JIT_TIER0);
    ASSERT_NE(c.k, nullptr);
    EXPECT_TRUE(EwIsExact(c, 64, (uint32_t)round));
    uintptr_t at = (uintptr_t)c.k->fn & ~(uintptr_t)4095;
    if (freed.count(at)) reused.insert(at);
    freed.insert(at);
  }
  EXPECT_FALSE(reused.empty()) << "20 compile+free rounds never reused a freed code page";
  if (scan) EXPECT_FALSE(AnyWritableExecutableMapping(&which)) << which;
  for (const Code &c : live) EXPECT_EQ(PermsAt((uintptr_t)c.k->fn), code_perms);
  EXPECT_TRUE(EwIsExact(live[0], 16, 3));  // the live kernels still run
}

// Shuts the engine down (nothing may be live: cached plans and kernels are
// dropped first) so that the next compile makes a new one.
void RestartEngine() {
  uopc_plan_cache_clear();
  uopc_cache_clear_memory();
  uopc_error e{};
  ASSERT_EQ(uopi_jit_shutdown(&e), UOPC_OK) << e.msg;
}

// UOPC_JIT_DUALMAP for the life of the object (unset when v is NULL).
class DualmapVar {
 public:
  explicit DualmapVar(const char *v) {
    const char *old = std::getenv("UOPC_JIT_DUALMAP");
    had_ = old != nullptr;
    if (old) old_ = old;
    if (v) setenv("UOPC_JIT_DUALMAP", v, 1);
    else unsetenv("UOPC_JIT_DUALMAP");
  }
  ~DualmapVar() {
    if (had_) setenv("UOPC_JIT_DUALMAP", old_.c_str(), 1);
    else unsetenv("UOPC_JIT_DUALMAP");
  }

 private:
  bool had_ = false;
  std::string old_;
};

// A new engine with UOPC_JIT_DUALMAP = dualmap (NULL: unset) has the pool
// kind, whose kernels run from pages mapped perms (CheckPooledMemory).
void ExpectPool(const char *dualmap, const char *kind, const char *perms) {
  RestartEngine();
  DualmapVar d(dualmap);
  Code first = CompileSample(SAMPLE_EW, 8, UOPI_JIT_TIER0);
  ASSERT_NE(first.k, nullptr);
  EXPECT_STREQ(uopi_jit_memory(), kind);
  first = Code();
  CheckPooledMemory(perms);
  RestartEngine();
}

TEST(JitEngine, PooledCodeMemoryIsReusedAndNeverWritableAndExecutable) {
  // The default: double-mapped code (shared pages, "s") where the system
  // allows executable memfd mappings, as on every machine this project runs on.
  ExpectPool(nullptr, "dual-mapped", "r-xs");
  // UOPC_JIT_DUALMAP=0: the mprotect pool, private pages.
  ExpectPool("0", "mprotect", "r-xp");
  Code again = CompileSample(SAMPLE_EW, 8, UOPI_JIT_TIER0);
  EXPECT_STREQ(uopi_jit_memory(), "dual-mapped");
}

// A freed kernel's code is overwritten with int3: a call through a stale
// pointer traps instead of running what comes next.
TEST(JitEngine, FreedDualMappedCodeTraps) {
  Code c = CompileSample(SAMPLE_EW, 16, UOPI_JIT_TIER0);
  ASSERT_NE(c.k, nullptr);
  if (std::strcmp(uopi_jit_memory(), "dual-mapped") != 0) GTEST_SKIP() << uopi_jit_memory();
  const volatile uint8_t *fn = (const volatile uint8_t *)(uintptr_t)c.k->fn;
  EXPECT_NE(fn[0], 0xCC);
  c = Code();
  for (int i = 0; i < 16; i++) EXPECT_EQ(fn[i], 0xCC) << i;
}

// Reads exactly n bytes from fd (false on EOF or error).
bool ReadAll(int fd, void *p, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = read(fd, (char *)p + got, n - got);
    if (r <= 0) return false;
    got += (size_t)r;
  }
  return true;
}

// Dual-mapped pages are shared with a forked child.  Neither process may
// write where the other may still run: a kernel live at the fork keeps its
// range when the parent frees it (no reuse), and the child links into
// regions of its own.  The child runs the inherited kernel, links and runs
// new ones while the parent frees and relinks, and runs the inherited one
// again; both check every result bit for bit.
TEST(JitEngine, ForkedChildAndParentDoNotShareNewCode) {
  if (UnderValgrind()) GTEST_SKIP() << "fork under valgrind";
  Code a = CompileSample(SAMPLE_EW, 64, UOPI_JIT_TIER0);
  ASSERT_NE(a.k, nullptr);
  const uintptr_t a_fn = (uintptr_t)a.k->fn;
  int to_child[2], to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  fflush(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // the child: no gtest assertions (they would report from this process)
    close(to_child[1]);
    close(to_parent[0]);
    char go;
    int bad = !EwIsExact(a, 64, 1);
    std::vector<Code> mine;
    for (int i = 0; i < 4; i++) {
      mine.push_back(CompileSample(SAMPLE_EW, 64, UOPI_JIT_TIER0));
      bad |= !mine.back().k || !EwIsExact(mine.back(), 64, 2 + i);
      bad |= mine.back().k && PermsAt((uintptr_t)mine.back().k->fn) != "r-xs";
    }
    bad |= write(to_parent[1], "r", 1) != 1;  // the parent may free and relink now
    bad |= !ReadAll(to_child[0], &go, 1);      // it has
    bad |= !EwIsExact(a, 64, 9);               // the inherited kernel is intact
    for (size_t i = 0; i < mine.size(); i++) bad |= !EwIsExact(mine[i], 64, 10 + (uint32_t)i);
    _exit(bad);  // no destructors: the engine belongs to the parent
  }
  close(to_child[0]);
  close(to_parent[1]);
  char ready;
  ASSERT_TRUE(ReadAll(to_parent[0], &ready, 1));
  a = Code();  // freed in the parent, still live in the child
  std::vector<Code> relinked;
  for (int i = 0; i < 8; i++) {
    relinked.push_back(CompileSample(SAMPLE_EW, 64, UOPI_JIT_TIER0));
    ASSERT_NE(relinked.back().k, nullptr);
    EXPECT_NE((uintptr_t)relinked.back().k->fn, a_fn) << "a range live at the fork was reused";
    EXPECT_TRUE(EwIsExact(relinked.back(), 64, 20 + (uint32_t)i));
  }
  ASSERT_EQ(write(to_child[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  close(to_child[1]);
  close(to_parent[0]);
}

// The object bytes of a kernel load (link only, no codegen) and run the same.
// Each object is linked on its own: loading it while the kernel is live gives
// a second kernel (the same symbol in two places), and freeing either leaves
// the other running.  A name the object does not define is an error naming it.
TEST(JitEngine, LoadFromObjectBytes) {
  for (uopi_jit_tier t : kTiers) {
    std::string name;
    Code c = CompileSample(SAMPLE_EW, 1003, t, &name);
    ASSERT_NE(c.k, nullptr);
    std::vector<uint8_t> obj(c.k->obj, c.k->obj + c.k->obj_size);
    ASSERT_GT(obj.size(), 4u);
    EXPECT_EQ(std::memcmp(obj.data(), "\x7f" "ELF", 4), 0);

    uopc_error e{};
    uopi_jit_code *k2 = nullptr;
    ASSERT_EQ(uopi_jit_load(obj.data(), obj.size(), name.c_str(), 3, &k2, &e), UOPC_OK) << e.msg;
    Code twin(k2);
    EXPECT_NE((void *)twin.k->fn, (void *)c.k->fn);
    EXPECT_TRUE(EwIsExact(twin, 1003, 98));
    EXPECT_TRUE(EwIsExact(c, 1003, 97));

    c = Code();  // free the compiled kernel: the twin still runs
    EXPECT_TRUE(EwIsExact(twin, 1003, 96));
    uopi_jit_code *k = nullptr;
    ASSERT_EQ(uopi_jit_load(obj.data(), obj.size(), name.c_str(), 3, &k, &e), UOPC_OK) << e.msg;
    Code loaded(k);
    EXPECT_EQ(k->obj_size, obj.size());
    EXPECT_TRUE(EwIsExact(loaded, 1003, 99));

    uopi_jit_code *none = nullptr;
    EXPECT_EQ(uopi_jit_load(obj.data(), obj.size(), "uopc_no_such_kernel", 3, &none, &e), UOPC_ERR_JIT);
    EXPECT_EQ(none, nullptr);
    EXPECT_NE(std::strstr(e.msg, "defines no symbol uopc_no_such_kernel"), nullptr) << e.msg;
  }
}

// The caller's FTZ/DAZ and rounding mode must not change results, the
// caller gets its control bits back, and the kernel's exception flags
// (denormal operand and inexact here) add to the caller's.
TEST(JitEngine, LauncherRunsWithIeeeEnvironment) {
  if (UnderValgrind())
    GTEST_SKIP() << "valgrind does not emulate MXCSR: FTZ, DAZ and the rounding mode are ignored and no exception "
                    "flag is kept (its manual, \"Limitations\")";
  Code c = CompileSample(SAMPLE_EW, 4, UOPI_JIT_TIER0);
  ASSERT_NE(c.k, nullptr);
  const float tiny = std::ldexp(1.0f, -140), r1 = 1.0f + std::ldexp(3.0f, -23);
  float a[4] = {tiny, tiny, r1, -r1}, b[4] = {1.0f, 0.5f, r1, r1}, want[4], got[4];
  RefEw(want, a, b, 4);  // under the test's own (default) MXCSR
  ASSERT_EQ(_mm_getcsr() & 0xE040u, 0u) << "the test expects a default MXCSR";
  ASSERT_NE(want[0], 0.0f);

  const unsigned saved = _mm_getcsr();
  const unsigned caller = 0x8000u /*FTZ*/ | 0x0040u /*DAZ*/ | 0x4000u /*round up*/ | 0x1F80u;
  _mm_setcsr(caller);
  uopc_error e{};
  void *bufs[3] = {got, a, b};
  uopc_status st = uopi_jit_call(c.k, bufs, 3, &e);
  const unsigned after = _mm_getcsr();
  volatile float x = a[0], y = b[0];
  volatile float flushed = x * y;  // what code under the caller's MXCSR computes
  _mm_setcsr(saved);

  ASSERT_EQ(st, UOPC_OK) << e.msg;
  EXPECT_EQ(after & 0xFFC0u, caller) << "MXCSR control bits not restored";
  EXPECT_EQ(after & 0x0022u, 0x0022u) << "the kernel's DE and PE flags were dropped";
  EXPECT_EQ(flushed, 0.0f) << "FTZ/DAZ had no effect: the test proves nothing";
  EXPECT_EQ(std::memcmp(got, want, sizeof got), 0)
      << got[0] << " vs " << want[0] << ", " << got[2] << " vs " << want[2];
}

TEST(JitEngine, ErrorsAreReportedNotFatal) {
  uopc_error e{};
  uopi_jit_code *k = nullptr;

  // A block without a terminator fails verification.
  LLVMModuleRef m;
  ASSERT_EQ(uopi_jit_module_new("bad", &m, &e), UOPC_OK) << e.msg;
  LLVMContextRef cx = LLVMGetModuleContext(m);
  LLVMValueRef fn = LLVMAddFunction(m, "bad", LLVMFunctionType(LLVMVoidTypeInContext(cx), nullptr, 0, 0));
  LLVMAppendBasicBlockInContext(cx, fn, "entry");
  EXPECT_EQ(uopi_jit_compile(m, "bad", 0, UOPI_JIT_TIER0, &k, &e), UOPC_ERR_JIT);
  EXPECT_EQ(k, nullptr);
  EXPECT_NE(std::strstr(e.msg, "invalid LLVM module"), nullptr) << e.msg;
  EXPECT_NE(std::strstr(e.msg, "terminator"), nullptr) << e.msg;

  // No function of that name.
  std::string name = Name("err");
  ASSERT_EQ(sample_module(SAMPLE_EW, 8, name.c_str(), &m, &e), UOPC_OK);
  EXPECT_EQ(uopi_jit_compile(m, "no_such_kernel", 3, UOPI_JIT_TIER0, &k, &e), UOPC_ERR_ARG);
  EXPECT_NE(std::strstr(e.msg, "no_such_kernel"), nullptr) << e.msg;

  // A call to an undefined function fails to link, with the symbol named.
  name = Name("undef");
  ASSERT_EQ(uopi_jit_module_new(name.c_str(), &m, &e), UOPC_OK);
  cx = LLVMGetModuleContext(m);
  LLVMTypeRef vt = LLVMFunctionType(LLVMVoidTypeInContext(cx), nullptr, 0, 0);
  LLVMTypeRef pt = LLVMPointerTypeInContext(cx, 0);
  fn = LLVMAddFunction(m, name.c_str(), LLVMFunctionType(LLVMVoidTypeInContext(cx), &pt, 1, 0));  // an entry
  LLVMValueRef ext = LLVMAddFunction(m, "uopc_test_missing_symbol", vt);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(cx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cx, fn, "entry"));
  LLVMBuildCall2(b, vt, ext, nullptr, 0, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  EXPECT_EQ(uopi_jit_compile(m, name.c_str(), 0, UOPI_JIT_TIER0, &k, &e), UOPC_ERR_JIT);
  EXPECT_NE(std::strstr(e.msg, "uopc_test_missing_symbol"), nullptr) << e.msg;

  // Bytes that are not an object.
  const char junk[] = "certainly not an ELF object";
  EXPECT_EQ(uopi_jit_load(junk, sizeof junk, "junk", 0, &k, &e), UOPC_ERR_JIT);
  EXPECT_NE(e.msg[0], 0);

  // A bad tier, a wrong buffer count.
  ASSERT_EQ(sample_module(SAMPLE_EW, 8, name.c_str(), &m, &e), UOPC_OK);
  EXPECT_EQ(uopi_jit_compile(m, name.c_str(), 3, (uopi_jit_tier)3, &k, &e), UOPC_ERR_ARG);
  Code c = CompileSample(SAMPLE_EW, 8, UOPI_JIT_TIER0);  // the engine still works
  ASSERT_NE(c.k, nullptr);
  void *bufs[2] = {nullptr, nullptr};
  EXPECT_EQ(uopi_jit_call(c.k, bufs, 2, &e), UOPC_ERR_ARG);
  EXPECT_TRUE(EwIsExact(c, 8, 5));
}

// An error LLVM reports as a diagnostic (here instruction selection refusing
// an inline asm constraint) fails the compile with LLVM's message; LLVM's own behaviour
// without a handler is to print it and exit the process.  The object path
// and the assembly text path alike, and the engine keeps working after.
TEST(JitEngine, LlvmErrorDiagnosticsFailTheCompileNotTheProcess) {
  auto bad_asm_module = [](const std::string &name) {
    uopc_error e{};
    LLVMModuleRef m = nullptr;
    EXPECT_EQ(uopi_jit_module_new(name.c_str(), &m, &e), UOPC_OK) << e.msg;
    LLVMContextRef cx = LLVMGetModuleContext(m);
    LLVMTypeRef pt = LLVMPointerTypeInContext(cx, 0);
    LLVMValueRef fn = LLVMAddFunction(m, name.c_str(), LLVMFunctionType(LLVMVoidTypeInContext(cx), &pt, 1, 0));
    // an output constraint naming no register: instruction selection reports
    // "couldn't allocate output register for constraint '{uopc_no_such_reg}'"
    LLVMTypeRef vt = LLVMFunctionType(LLVMInt32TypeInContext(cx), nullptr, 0, 0);
    const char text[] = "", cons[] = "={uopc_no_such_reg}";
    LLVMValueRef ia = LLVMGetInlineAsm(vt, text, 0, cons, sizeof cons - 1, 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(cx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cx, fn, "entry"));
    LLVMValueRef v = LLVMBuildCall2(b, vt, ia, nullptr, 0, "v");
    LLVMBuildStore(b, v, LLVMGetParam(fn, 0));
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return m;
  };
  for (uopi_jit_tier t : {UOPI_JIT_TIER0, UOPI_JIT_TIER2}) {
    SCOPED_TRACE((int)t);
    std::string name = Name("diag");
    uopc_error e{};
    uopi_jit_code *k = nullptr;
    EXPECT_EQ(uopi_jit_compile(bad_asm_module(name), name.c_str(), 1, t, &k, &e), UOPC_ERR_JIT);
    EXPECT_EQ(k, nullptr);
    EXPECT_NE(std::strstr(e.msg, "LLVM error: "), nullptr) << e.msg;
    EXPECT_NE(std::strstr(e.msg, "uopc_no_such_reg"), nullptr) << e.msg;
    LLVMModuleRef m = bad_asm_module(name);
    char *text = nullptr;
    e = uopc_error{};
    EXPECT_EQ(uopi_jit_asm_text(m, t, &text, &e), UOPC_ERR_JIT);
    EXPECT_EQ(text, nullptr);
    EXPECT_NE(std::strstr(e.msg, "LLVM error: "), nullptr) << e.msg;
    uopi_jit_module_free(m);
  }
  // the engine still compiles and runs kernels
  std::string name = Name("after");
  uopc_error e{};
  LLVMModuleRef m;
  ASSERT_EQ(sample_module(SAMPLE_EW, 8, name.c_str(), &m, &e), UOPC_OK) << e.msg;
  uopi_jit_code *k = nullptr;
  ASSERT_EQ(uopi_jit_compile(m, name.c_str(), 3, UOPI_JIT_TIER0, &k, &e), UOPC_OK) << e.msg;
  uopi_jit_free(k);
}

TEST(JitEngine, ShutdownWaitsForKernelsThenRestarts) {
  uopc_error e{};
  uopc_cache_clear_memory();  // code other tests left in the kernel cache (one process) is live too
  Code c = CompileSample(SAMPLE_EW, 8, UOPI_JIT_TIER0);
  ASSERT_NE(c.k, nullptr);
  EXPECT_EQ(uopi_jit_shutdown(&e), UOPC_ERR_ARG);
  EXPECT_TRUE(EwIsExact(c, 8, 1));  // refused: the kernel still runs
  c = Code();
  EXPECT_EQ(uopi_jit_shutdown(&e), UOPC_OK) << e.msg;
  EXPECT_EQ(uopi_jit_target_id(), nullptr);
  c = CompileSample(SAMPLE_MM, 8, UOPI_JIT_TIER2);  // a new engine
  ASSERT_NE(c.k, nullptr);
  ASSERT_NE(uopi_jit_target_id(), nullptr);
  EXPECT_NE(std::strstr(uopi_jit_target_id(), "llvm 19."), nullptr) << uopi_jit_target_id();
}

// A loop whose body is one block of 5,000 instructions comes out of the
// passes split into blocks of at most UOPI_JIT_BLOCK_MAX (for the machine
// scheduler, lib/jit/blocks.c), still valid IR (the loop's phi names the new
// latch), and computes what C computes.
TEST(JitEngine, LongBlocksAreSplitBeforeCodegen) {
  constexpr int kChain = 5000, kN = 100;
  for (uopi_jit_tier t : kTiers) {
    std::string name = Name("long");
    uopc_error e{};
    LLVMModuleRef m;
    ASSERT_EQ(uopi_jit_module_new(name.c_str(), &m, &e), UOPC_OK) << e.msg;
    uopi_jit_kernel *kern;
    ASSERT_EQ(uopi_jit_kernel_new(m, name.c_str(), 2, &kern, &e), UOPC_OK) << e.msg;
    LLVMValueRef fn = uopi_jit_kernel_fn(kern);
    LLVMContextRef cx = LLVMGetModuleContext(m);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cx), f32 = LLVMFloatTypeInContext(cx);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(cx);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);  // after the loads of the pointers
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(cx, fn, "loop");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cx, fn, "done");
    LLVMPositionBuilderAtEnd(b, entry);
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef i = LLVMBuildPhi(b, i64, "i"), zero = LLVMConstInt(i64, 0, 0);
    LLVMAddIncoming(i, &zero, &entry, 1);
    LLVMValueRef v = LLVMBuildLoad2(b, f32, LLVMBuildInBoundsGEP2(b, f32, uopi_jit_kernel_arg(kern, 1), &i, 1, ""), "");
    for (int k = 0; k < kChain; k++)
      v = k % 2 ? LLVMBuildFMul(b, v, LLVMConstReal(f32, 0.999), "") : LLVMBuildFAdd(b, v, LLVMConstReal(f32, 0.5), "");
    LLVMBuildStore(b, v, LLVMBuildInBoundsGEP2(b, f32, uopi_jit_kernel_arg(kern, 0), &i, 1, ""));
    LLVMValueRef next = LLVMBuildNUWAdd(b, i, LLVMConstInt(i64, 1, 0), "");
    LLVMAddIncoming(i, &next, &loop, 1);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, next, LLVMConstInt(i64, kN, 0), ""), loop, done);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    uopi_jit_kernel_free(kern);

    LLVMModuleRef copy = LLVMCloneModule(m);
    ASSERT_EQ(uopi_jit_prepare(copy, t, &e), UOPC_OK) << e.msg;
    char *msg = nullptr;
    EXPECT_FALSE(LLVMVerifyModule(copy, LLVMReturnStatusAction, &msg)) << msg;
    LLVMDisposeMessage(msg);
    unsigned blocks = 0, longest = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(copy); f; f = LLVMGetNextFunction(f))
      for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb), blocks++) {
        unsigned n = 0;
        for (LLVMValueRef x = LLVMGetFirstInstruction(bb); x; x = LLVMGetNextInstruction(x)) n++;
        longest = n > longest ? n : longest;
      }
    LLVMDisposeModule(copy);
    EXPECT_GE(blocks, (unsigned)(kChain / UOPI_JIT_BLOCK_MAX)) << "tier " << t;
    EXPECT_LE(longest, (unsigned)UOPI_JIT_BLOCK_MAX) << "tier " << t;

    uopi_jit_code *k = nullptr;
    ASSERT_EQ(uopi_jit_compile(m, name.c_str(), 2, t, &k, &e), UOPC_OK) << e.msg;
    Code code(k);
    std::vector<float> a = Data(kN, 3), o(kN, -1.0f);
    Call(code, {o.data(), a.data()});
    for (int j = 0; j < kN; j++) {
      volatile float r = a[j];
      for (int q = 0; q < kChain; q++) r = q % 2 ? r * 0.999f : r + 0.5f;
      ASSERT_EQ(std::memcmp(&o[j], (const void *)&r, 4), 0) << "tier " << t << " j " << j;
    }
  }
}

TEST(JitEngine, UniqueNames) {
  std::string a = Name("k"), b = Name("k");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("k_", 0), 0u);
  char small[8];
  uopi_jit_unique_name(small, sizeof small, "kernel");  // truncates, never overflows
  EXPECT_EQ(std::strlen(small), 7u);
}

}  // namespace

#else  // the build gave this test no LLVM include directory

#include <gtest/gtest.h>

TEST(JitEngine, NeedsLlvmIncludeDirs) {
  FAIL() << "test_jit_engine.cpp needs the LLVM headers: test/CMakeLists.txt should call "
            "uopc_use_deps(uopc_tests)";
}

#endif
