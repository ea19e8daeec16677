// The kernel cache (lib/kcache/, docs/cache.md): keys, memory hits and
// handles, disk entries across processes, every kind of damaged entry,
// concurrent writers, unusable directories, UOPC_CACHE and UOPC_CACHE_MAX_MB.
// Every test points UOPC_CACHE_DIR at its own temporary folder.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "../bench/cache_kernels.h"
extern "C" {
#include "lower/kernel.h"  // has no extern "C" of its own
}
#include "kcache/kcache.h"
#include "support/cli.h"

namespace {

using uopc_kernels::Ew;
using uopc_kernels::Mm;



bool exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// The names in dir (not . and ..), sorted.
std::vector<std::string> list_dir(const std::string &dir) {
  std::vector<std::string> v;
  DIR *d = opendir(dir.c_str());
  if (!d) return v;
  while (struct dirent *e = readdir(d))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) v.push_back(e->d_name);
  closedir(d);
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> v;
  for (auto &n : list_dir(dir))
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".ukc") == 0) v.push_back(n);
  return v;
}

// The names in dir that are neither entries nor the size file: temporary
// files left behind.
std::vector<std::string> leftovers(const std::string &dir) {
  std::vector<std::string> v;
  for (auto &n : list_dir(dir))
    if (!(n.size() > 4 && n.compare(n.size() - 4, 4, ".ukc") == 0) && n != ".budget") v.push_back(n);
  return v;
}

void rm_rf(const std::string &p) {
  std::string cmd = "rm -rf '" + p + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
}

// An environment variable set for the scope of a test, restored after.
class EnvVar {
 public:
  EnvVar(const char *name, const char *value) : name_(name) {
    const char *old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvVar() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_;
};

uopc_cache_stats Stats() {
  uopc_cache_stats s;
  uopc_cache_get_stats(&s);
  return s;
}

// Compiles root (a fresh context's kernel) and checks its answer.
struct Kernel {
  uopc_ctx *c = uopc_ctx_new(nullptr);
  uopc_kernel *k = nullptr;
  ~Kernel() {
    uopc_kernel_free(k);
    uopc_ctx_free(c);
  }
};

float MulAdd(float a, float b) {
  volatile float p = a * b;  // two roundings, as the kernel (no FMA)
  return p + a;
}

// Runs an ew kernel of n elements and compares with C, bit for bit.
void CheckEw(const uopc_kernel *k, int n) {
  ASSERT_NE(k, nullptr);
  std::vector<float> o(n, -1.0f), a(n), b(n);
  for (int i = 0; i < n; i++) a[i] = 0.25f * (float)i - 3.0f, b[i] = 1.0f / (float)(i + 1);
  void *bufs[3] = {o.data(), a.data(), b.data()};
  uopc_error e{};
  ASSERT_EQ(uopc_kernel_call(k, bufs, 3, &e), UOPC_OK) << e.msg;
  for (int i = 0; i < n; i++) {
    float want = MulAdd(a[i], b[i]);
    ASSERT_EQ(memcmp(&o[i], &want, 4), 0) << "element " << i;
  }
}

void CheckMm(const uopc_kernel *k, int n) {
  ASSERT_NE(k, nullptr);
  std::vector<float> c(n * n, 7.0f), a(n * n), b(n * n), want(n * n, 0.0f);
  for (int i = 0; i < n * n; i++) a[i] = (float)(i % 7) - 2.5f, b[i] = (float)(i % 5) * 0.5f;
  for (int i = 0; i < n; i++)
    for (int kk = 0; kk < n; kk++)
      for (int j = 0; j < n; j++) {
        volatile float p = a[i * n + kk] * b[kk * n + j];
        want[i * n + j] = want[i * n + j] + p;
      }
  void *bufs[3] = {c.data(), a.data(), b.data()};
  uopc_error e{};
  ASSERT_EQ(uopc_kernel_call(k, bufs, 3, &e), UOPC_OK) << e.msg;
  ASSERT_EQ(memcmp(c.data(), want.data(), sizeof(float) * n * n), 0);
}

uopc_kernel *CompileEw(Kernel &K, int n, uopc_tier tier = UOPC_TIER_FAST) {
  uopc_compile_opts o{tier};
  uopc_error e{};
  K.k = uopc_compile(K.c, Ew(K.c, n), &o, &e);
  EXPECT_NE(K.k, nullptr) << e.msg;
  return K.k;
}

// The key of a graph, as uopc_compile would make it.
struct Key {
  uopi_kkey k{};
  ~Key() { uopi_kkey_free(&k); }
};

void MakeKey(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, Key &out) {
  uopi_kernel_ir ir;
  ASSERT_EQ(uopi_kernel_prepare(c, root, &ir), UOPC_OK) << uopc_ctx_error(c)->msg;
  ASSERT_EQ(uopi_kkey_make(c, &ir, t, 0, &out.k), UOPC_OK) << uopc_ctx_error(c)->msg;
}

std::string Hex(const uint8_t *h) {
  char s[2 * UOPI_KCACHE_HASH + 1];
  uopi_kcache_hex(h, s);
  return s;
}

// Runs `uopc ARGS` with extra environment (shell text), the debug switches off.
CliRun Cli(const std::string &env, const std::string &args) { return UopcEnv("UOPC_DEBUG= " + env, args); }

// The whole suite: kernels any test compiles are cached in a temporary folder
// of this process, removed at the end, not in ~/.cache/uopc (unless the
// caller set UOPC_CACHE_DIR).  (A ctest ENVIRONMENT list cannot say it: CMake
// 3.25's gtest_discover_tests splits lists in PROPERTIES.)
class SuiteCacheDir : public ::testing::Environment {
 public:
  void SetUp() override {
    if (getenv("UOPC_CACHE_DIR")) return;
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/suite_cache_XXXXXX", TestTempDir().c_str());
    if (!mkdtemp(tmpl)) return;
    made_ = tmpl;
    setenv("UOPC_CACHE_DIR", made_.c_str(), 1);
  }
  void TearDown() override {
    if (made_.empty()) return;
    std::string cmd = "rm -rf '" + made_ + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot remove %s\n", made_.c_str());
    unsetenv("UOPC_CACHE_DIR");
  }

 private:
  std::string made_;
};
::testing::Environment *const suite_cache_env = ::testing::AddGlobalTestEnvironment(new SuiteCacheDir);

// Each test: a fresh cache directory, default settings, an empty memory cache.
class Cache : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/cache_XXXXXX", TestTempDir().c_str());
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/cache";
    env_dir_ = new EnvVar("UOPC_CACHE_DIR", dir_.c_str());
    env_off_ = new EnvVar("UOPC_CACHE", nullptr);
    env_max_ = new EnvVar("UOPC_CACHE_MAX_MB", nullptr);
    uopc_cache_set_disk(1);
    uopc_cache_set_memory_limit(1024, 64ull << 20);
    uopc_plan_cache_clear(); /* cached plans hold kernels: an earlier test's would count here */
    uopc_cache_clear_memory();
    uopc_cache_reset_stats();
    ew_file_ = root_ + "/ew.uir";
    Spit(ew_file_, EwText(1000));
  }
  void TearDown() override {
    uopc_cache_clear_memory();
    uopc_cache_set_memory_limit(1024, 64ull << 20);
    delete env_dir_;
    delete env_off_;
    delete env_max_;
    rm_rf(root_);
  }

  // The .uir of the ew kernel over n elements.
  static std::string EwText(int n) {
    std::string s = std::to_string(n);
    return "%o = buffer : slot=0 dtype=f32 shape=(" + s + ",)\n%a = buffer : slot=1 dtype=f32 shape=(" + s +
           ",)\n%b = buffer : slot=2 dtype=f32 shape=(" + s + ",)\n%i = range " + s +
           " : idx=0\n%pa = index %a, %i\n%pb = index %b, %i\n%va = load %pa\n%vb = load %pb\n%m = mul %va, %vb\n"
           "%s = add %m, %va\n%po = index %o, %i\n%st = store %po, %s\n%e = end %st, %i\n%k = sink %e\n";
  }

  // The path of the disk entry of ew(n) at the fast tier.
  std::string EwEntry(int n) {
    Kernel K;
    Key key;
    MakeKey(K.c, Ew(K.c, n), UOPI_JIT_TIER0, key);
    return dir_ + "/" + Hex(key.k.hash) + ".ukc";
  }

  // Compiles ew(n) once so that its entry is on disk, and forgets it in memory.
  std::string Warm(int n) {
    {
      Kernel K;
      CompileEw(K, n);
    }
    uopc_cache_clear_memory();
    std::string p = EwEntry(n);
    EXPECT_TRUE(exists(p)) << p;
    return p;
  }

  std::string root_, dir_, ew_file_;
  EnvVar *env_dir_ = nullptr, *env_off_ = nullptr, *env_max_ = nullptr;
};

// ---- hashing and keys -------------------------------------------------------------

TEST(CacheKey, SipHash128MatchesTheReferenceVectors) {
  // veorq/SipHash vectors.h, vectors_sip128: key 00..0f, message 00..(len-1)
  struct V {
    size_t len;
    uint8_t out[16];
  } const v[] = {
      {0, {0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93}},
      {1, {0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc, 0x45}},
      {7, {0xa1, 0xf1, 0xeb, 0xbe, 0xd8, 0xdb, 0xc1, 0x53, 0xc0, 0xb8, 0x4a, 0xa6, 0x1f, 0xf0, 0x82, 0x39}},
      {8, {0x3b, 0x62, 0xa9, 0xba, 0x62, 0x58, 0xf5, 0x61, 0x0f, 0x83, 0xe2, 0x64, 0xf3, 0x14, 0x97, 0xb4}},
      {15, {0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97, 0xcf, 0xc3, 0xd9}},
      {63, {0x51, 0x50, 0xd1, 0x77, 0x2f, 0x50, 0x83, 0x4a, 0x50, 0x3e, 0x06, 0x9a, 0x97, 0x3f, 0xbd, 0x7c}},
  };
  uint8_t key[16], msg[64], out[16];
  for (int i = 0; i < 16; i++) key[i] = (uint8_t)i;
  for (int i = 0; i < 64; i++) msg[i] = (uint8_t)i;
  for (const V &t : v) {
    uopi_siphash128(key, msg, t.len, out);
    EXPECT_EQ(memcmp(out, t.out, 16), 0) << "length " << t.len;
  }
}

// Elasticsearch's MurmurHash3 x64_128 test values (seed s: both lanes start
// at s), which reach both tail lengths and whole 16-byte blocks.
TEST(CacheKey, Murmur3MatchesKnownValues) {
  struct V {
    const char *in;
    uint64_t seed, h1, h2;
  } const v[] = {
      {"hell", 0, 0x629942693e10f867ull, 0x92db0b82baeb5347ull},
      {"hello", 1, 0xa78ddff5adae8d10ull, 0x128900ef20900135ull},
      {"hello ", 2, 0x8a486b23f422e826ull, 0xf962a2c58947765full},
      {"hello w", 3, 0x2ea59f466f6bed8cull, 0xc610990acc428a17ull},
      {"hello wo", 4, 0x79f6305a386c572cull, 0x46305aed3483b94eull},
      {"hello wor", 5, 0xc2219d213ec1f1b5ull, 0xa1d8e2e0a52785bdull},
      {"The quick brown fox jumps over the lazy dog", 0, 0xe34bbc7bbc071b6cull, 0x7a433ca9c49a9347ull},
      {"The quick brown fox jumps over the lazy cog", 0, 0x658ca970ff85269aull, 0x43fee3eaa68e5c3eull},
  };
  for (const V &t : v) {
    uint8_t key[16], out[16];
    for (int i = 0; i < 8; i++) key[i] = key[8 + i] = (uint8_t)(t.seed >> (8 * i));
    uopi_murmur3_128(key, t.in, strlen(t.in), out);
    uint64_t h1 = 0, h2 = 0;
    for (int i = 7; i >= 0; i--) h1 = h1 << 8 | out[i], h2 = h2 << 8 | out[8 + i];
    EXPECT_EQ(h1, t.h1) << t.in;
    EXPECT_EQ(h2, t.h2) << t.in;
  }
}

TEST(CacheKey, EqualGraphsFromDifferentContextsShareAKey) {
  Kernel A, B;
  // B builds unrelated nodes first: other ids, other pointers
  for (int i = 0; i < 50; i++) uopc_const_i(B.c, UOPC_DT_I32, 1000 + i);
  Key ka, kb;
  MakeKey(A.c, Ew(A.c, 4096), UOPI_JIT_TIER0, ka);
  MakeKey(B.c, Ew(B.c, 4096), UOPI_JIT_TIER0, kb);
  ASSERT_EQ(ka.k.graph_len, kb.k.graph_len);
  EXPECT_EQ(memcmp(ka.k.graph, kb.k.graph, ka.k.graph_len), 0);
  EXPECT_EQ(Hex(ka.k.hash), Hex(kb.k.hash));
  Key ma, mb;
  MakeKey(A.c, Mm(A.c, 64), UOPI_JIT_TIER2, ma);
  MakeKey(B.c, Mm(B.c, 64), UOPI_JIT_TIER2, mb);
  EXPECT_EQ(Hex(ma.k.hash), Hex(mb.k.hash));
}

// The key's graph bytes as lib/kcache/key.c's header documents them, made
// here independently from uopc_toposort: "R1" or "G1", nbufs, count, then
// per node op dtype ndim shape nsrc (position deltas) arg.i bits(arg.f)
// rop n v[n] name, all LEB128 (signed ones zigzag).  The nodes in toposort
// order (raw keys of roots with ids from 1024 on, and prepared keys).
std::vector<uint8_t> RefBytes(uopc_ctx *c, uopc_node *root, char tag, uint32_t nbufs) {
  std::vector<uint8_t> b;
  auto u = [&](uint64_t v) {
    while (v >= 0x80) b.push_back((uint8_t)(v | 0x80)), v >>= 7;
    b.push_back((uint8_t)v);
  };
  auto s = [&](int64_t v) { u(((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); };
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  std::map<const uopc_node *, uint32_t> pos;
  b.push_back((uint8_t)tag), b.push_back('1');
  u(nbufs), u(n);
  for (uint32_t i = 0; i < n; i++) {
    const uopc_node *x = all[i];
    pos[x] = i;
    u(x->op), u(x->dtype), u(x->ndim);
    for (uint32_t d = 0; d < x->ndim; d++) s(x->shape[d]);
    u(x->nsrc);
    for (uint32_t k = 0; k < x->nsrc; k++) u(i - pos.at(x->src[k]));
    s(x->arg.i);
    uint64_t fb;
    memcpy(&fb, &x->arg.f, 8);
    u(fb), u(x->arg.rop), u(x->arg.n);
    for (uint32_t k = 0; k < x->arg.n; k++) s(x->arg.v[k]);
    if (!x->arg.name) {
      u(0);
    } else {
      u(strlen(x->arg.name) + 1);
      for (const char *q = x->arg.name; *q; q++) b.push_back((uint8_t)*q);
    }
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return b;
}

// A raw key's bytes in key.c's "R2" form, made here independently: the
// nodes in id order, each as op dtype ndim have (u8) nsrc (u32) shape (i32)
// position deltas (u32), then the nonzero arguments that `have` names
// (1 arg.i i64, 2 bits(arg.f) u64, 4 rop u32, 8 n u32, 16 v i32[n], 32 name
// length u32 and bytes), in host byte order.
std::vector<uint8_t> RefRawBytes(uopc_ctx *c, uopc_node *root) {
  std::vector<uint8_t> b;
  auto raw = [&](const void *p, size_t n) {
    const uint8_t *q = static_cast<const uint8_t *>(p);
    b.insert(b.end(), q, q + n);
  };
  auto u32 = [&](uint32_t v) { raw(&v, 4); };
  uint32_t n = 0;
  uopc_node **all = uopc_toposort(c, root, &n);
  std::sort(all, all + n, [](const uopc_node *x, const uopc_node *y) { return x->id < y->id; });
  std::map<const uopc_node *, uint32_t> pos;
  b.push_back('R'), b.push_back('2');
  u32(n);
  for (uint32_t i = 0; i < n; i++) {
    const uopc_node *x = all[i];
    pos[x] = i;
    uint64_t fb;
    memcpy(&fb, &x->arg.f, 8);
    unsigned have = (x->arg.i != 0) | (fb != 0) << 1 | (x->arg.rop != 0) << 2 | (x->arg.n != 0) << 3 |
                    (x->arg.n != 0 && x->arg.v) << 4 | (x->arg.name != nullptr) << 5;
    b.push_back(x->op), b.push_back(x->dtype), b.push_back(x->ndim), b.push_back((uint8_t)have);
    u32(x->nsrc);
    for (uint32_t d = 0; d < x->ndim; d++) raw(&x->shape[d], 4);
    for (uint32_t k = 0; k < x->nsrc; k++) u32(i - pos.at(x->src[k]));
    if (have & 1) raw(&x->arg.i, 8);
    if (have & 2) raw(&fb, 8);
    if (have & 4) u32(x->arg.rop);
    if (have & 8) u32(x->arg.n);
    if (have & 16) raw(x->arg.v, 4 * (size_t)x->arg.n);
    if (have & 32) u32((uint32_t)strlen(x->arg.name)), raw(x->arg.name, strlen(x->arg.name));
  }
  uopc_mem_free(c, all, (size_t)n * sizeof *all);
  return b;
}

// The bytes (key.c): a raw key of a root with an id below 1024 in id order
// ("R2", A), one beyond in toposort order with a side table (B), and for a graph
// deeper than the walk's 128 frames on the stack.  Every way gives the
// documented bytes, prepared keys the same in both contexts, and the raw-key
// memo gives them back unchanged.
TEST(CacheKey, BytesAreTheDocumentedSerializationInEveryContext) {
  Kernel A, B;
  for (int i = 0; i < 3000; i++) uopc_const_i(B.c, UOPC_DT_I32, 1000 + i);  // B: the side-table path
  auto deep = [](uopc_ctx *c) {  // o[i] = ((a[i] + 1) + 2) + ... : 300 deep
    uopc_node *o = uopc_buffer(c, 0, UOPC_DT_F32, 16), *a = uopc_buffer(c, 1, UOPC_DT_F32, 16);
    uopc_node *i = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 16), 0);
    uopc_node *v = uopc_load(c, uopc_index(c, a, &i, 1));
    for (int k = 0; k < 300; k++) v = uopc_add(c, v, uopc_const_f(c, UOPC_DT_F32, k + 1));
    uopc_node *st = uopc_store(c, uopc_index(c, o, &i, 1), v);
    uopc_node *e = uopc_end(c, st, &i, 1);
    return uopc_sink(c, &e, 1);
  };
  for (int g = 0; g < 3; g++) {
    SCOPED_TRACE(g);
    uopc_node *ra = g == 0 ? Ew(A.c, 4096) : g == 1 ? Mm(A.c, 64) : deep(A.c);
    uopc_node *rb = g == 0 ? Ew(B.c, 4096) : g == 1 ? Mm(B.c, 64) : deep(B.c);
    ASSERT_NE(ra, nullptr);
    ASSERT_NE(rb, nullptr);
    Key xa, xb, xa2;
    ASSERT_EQ(uopi_kkey_raw(A.c, ra, UOPI_JIT_TIER0, 0, &xa.k), UOPC_OK);
    ASSERT_EQ(uopi_kkey_raw(B.c, rb, UOPI_JIT_TIER0, 0, &xb.k), UOPC_OK);
    ASSERT_EQ(uopi_kkey_raw(A.c, ra, UOPI_JIT_TIER0, 0, &xa2.k), UOPC_OK);  // from the memo
    ASSERT_LT(ra->id, 1024u);
    ASSERT_GE(rb->id, 1024u);
    std::vector<uint8_t> want = RefRawBytes(A.c, ra);
    EXPECT_EQ(std::vector<uint8_t>(xa.k.graph, xa.k.graph + xa.k.graph_len), want);
    EXPECT_EQ(std::vector<uint8_t>(xb.k.graph, xb.k.graph + xb.k.graph_len), RefBytes(B.c, rb, 'R', 0));
    EXPECT_EQ(std::vector<uint8_t>(xa2.k.graph, xa2.k.graph + xa2.k.graph_len), want);
    EXPECT_EQ(Hex(xa.k.hash), Hex(xa2.k.hash));
    Key pa, pb;
    MakeKey(A.c, ra, UOPI_JIT_TIER0, pa);
    MakeKey(B.c, rb, UOPI_JIT_TIER0, pb);
    uopi_kernel_ir ir;
    ASSERT_EQ(uopi_kernel_prepare(A.c, ra, &ir), UOPC_OK);
    EXPECT_EQ(std::vector<uint8_t>(pa.k.graph, pa.k.graph + pa.k.graph_len), RefBytes(A.c, ir.root, 'G', ir.nbufs));
    EXPECT_EQ(std::vector<uint8_t>(pb.k.graph, pb.k.graph + pb.k.graph_len),
              std::vector<uint8_t>(pa.k.graph, pa.k.graph + pa.k.graph_len));
    EXPECT_EQ(Hex(pa.k.hash), Hex(pb.k.hash));
    EXPECT_NE(Hex(pa.k.hash), Hex(xa.k.hash));  // prepared and raw keys are told apart
  }
}

// "R2" writes each argument only when it is not zero, at a width that the
// bytes before it fix: every argument kind (slot, shape, reshape and permute
// vectors, reduce op, float bits, a call's name) gives the documented bytes,
// and graphs that differ in one argument (0.0 and -0.0 included) give
// different bytes and hashes, while the same graph built again gives the same.
TEST(CacheKey, RawBytesWriteEveryArgumentApart) {
  auto build = [](uopc_ctx *c, int variant) {
    const int32_t sh[2] = {4, 6}, sh2[2] = {6, 4}, perm[2] = {1, 0};
    const int32_t one[2] = {1, 1};
    uopc_node *x = uopc_param(c, 0, UOPC_DT_F32, sh, 2);
    uopc_node *t = variant == 2 ? uopc_reshape(c, x, sh2, 2) : uopc_permute(c, x, perm, 2);
    uopc_node *r = uopc_reduce(c, t, variant == 5 ? UOPC_OP_MAX : UOPC_OP_ADD, variant == 1 ? 2 : 1);
    uopc_node *k = uopc_const_f(c, UOPC_DT_F32, variant == 3 ? -0.0 : variant == 4 ? -2.5 : 0.0);
    uopc_node *arg = uopc_expand(c, uopc_reshape(c, k, one, 2), sh, 2);
    return uopc_call(c, r, &arg, 1, variant == 6 ? "g" : variant == 7 ? nullptr : "f");
  };
  std::vector<std::vector<uint8_t>> seen;
  std::vector<std::string> hashes;
  for (int v = 0; v < 8; v++) {
    SCOPED_TRACE(v);
    Kernel A, B;
    uopc_node *ra = build(A.c, v), *rb = build(B.c, v);
    ASSERT_NE(ra, nullptr) << uopc_ctx_error(A.c)->msg;
    Key ka, kb;
    ASSERT_EQ(uopi_kkey_raw(A.c, ra, UOPI_JIT_TIER0, 0, &ka.k), UOPC_OK);
    ASSERT_EQ(uopi_kkey_raw(B.c, rb, UOPI_JIT_TIER0, 0, &kb.k), UOPC_OK);
    std::vector<uint8_t> got(ka.k.graph, ka.k.graph + ka.k.graph_len);
    EXPECT_EQ(got, RefRawBytes(A.c, ra));
    EXPECT_EQ(got, std::vector<uint8_t>(kb.k.graph, kb.k.graph + kb.k.graph_len));
    EXPECT_EQ(Hex(ka.k.hash), Hex(kb.k.hash));
    for (size_t q = 0; q < seen.size(); q++) {
      EXPECT_NE(got, seen[q]) << "variants " << q << " and " << v;
      EXPECT_NE(Hex(ka.k.hash), hashes[q]);
    }
    seen.push_back(got);
    hashes.push_back(Hex(ka.k.hash));
  }
}

TEST(CacheKey, EquivalentIndexExpressionsShareAKey) {
  // the seed's copy kernel, and the same kernel with its index already simplified
  Kernel A, B;
  uopc_error e{};
  uopc_node *seed = uopc_uir_parse_file(A.c, UOPC_SOURCE_DIR "/examples/copy_kernel.uir", &e);
  ASSERT_NE(seed, nullptr) << e.msg;
  uopc_node *src = uopc_buffer(B.c, 0, UOPC_DT_F32, 32), *dst = uopc_buffer(B.c, 1, UOPC_DT_F32, 32);
  uopc_node *i = uopc_kernels::Range(B.c, 4, 0), *j = uopc_kernels::Range(B.c, 8, 1);
  uopc_node *flat = uopc_add(B.c, uopc_mul_k(B.c, i, 8), j);
  uopc_node *st = uopc_store(B.c, uopc_kernels::At(B.c, dst, flat), uopc_load(B.c, uopc_kernels::At(B.c, src, flat)));
  uopc_node *r[2] = {i, j};
  uopc_node *end = uopc_end(B.c, st, r, 2);
  Key ka, kb;
  MakeKey(A.c, seed, UOPI_JIT_TIER0, ka);
  MakeKey(B.c, uopc_sink(B.c, &end, 1), UOPI_JIT_TIER0, kb);
  EXPECT_EQ(Hex(ka.k.hash), Hex(kb.k.hash));
}

TEST(CacheKey, ChangesWithGraphTierAndEnvironment) {
  Kernel K;
  Key base, n2, tier, tier1, fm;
  MakeKey(K.c, Ew(K.c, 4096), UOPI_JIT_TIER0, base);
  MakeKey(K.c, Ew(K.c, 4095), UOPI_JIT_TIER0, n2);
  MakeKey(K.c, Ew(K.c, 4096), UOPI_JIT_TIER2, tier);
  MakeKey(K.c, Ew(K.c, 4096), UOPI_JIT_TIER1, tier1);  // TIER0's passes, another codegen
  MakeKey(K.c, Mm(K.c, 64), UOPI_JIT_TIER0, fm);
  EXPECT_NE(Hex(base.k.hash), Hex(n2.k.hash));
  EXPECT_NE(Hex(base.k.hash), Hex(tier.k.hash));
  EXPECT_NE(Hex(base.k.hash), Hex(tier1.k.hash));
  EXPECT_NE(Hex(tier.k.hash), Hex(tier1.k.hash));
  EXPECT_NE(Hex(base.k.hash), Hex(fm.k.hash));
  // a constant's bits: 0.0 and -0.0 are different kernels
  uopc_node *o = uopc_buffer(K.c, 0, UOPC_DT_F32, 8);
  uopc_node *i = uopc_kernels::Range(K.c, 8, 0);
  Key kp, km;
  for (double v : {0.0, -0.0}) {
    uopc_node *st = uopc_store(K.c, uopc_kernels::At(K.c, o, i), uopc_const_f(K.c, UOPC_DT_F32, v));
    uopc_node *e = uopc_end(K.c, st, &i, 1);
    MakeKey(K.c, uopc_sink(K.c, &e, 1), UOPI_JIT_TIER0, v == 0.0 && !std::signbit(v) ? kp : km);
  }
  EXPECT_NE(Hex(kp.k.hash), Hex(km.k.hash));
  // the environment: format version, codegen id, target id, pipeline
  uint8_t h[16];
  uopi_kenv env = base.k.env;
  auto differs = [&](const uopi_kenv &e2) {
    uopi_kkey_hash(&e2, base.k.graph, base.k.graph_len, h);
    return Hex(h) != Hex(base.k.hash);
  };
  uopi_kkey_hash(&env, base.k.graph, base.k.graph_len, h);
  EXPECT_EQ(Hex(h), Hex(base.k.hash));
  uopi_kenv e2 = env;
  e2.format = env.format + 1;
  EXPECT_TRUE(differs(e2));
  e2 = env;
  e2.codegen = "another build";
  EXPECT_TRUE(differs(e2));
  e2 = env;
  std::string cpu = std::string(env.target) + "-avx512f";
  e2.target = cpu.c_str();
  EXPECT_TRUE(differs(e2));
  e2 = env;
  e2.pipeline = "default<O3>";
  EXPECT_TRUE(differs(e2));
  e2 = env;
  e2.flags = env.flags ^ UOPC_COMPILE_FAST_MATH;
  EXPECT_TRUE(differs(e2));
  // the environment's memo still gives the real key afterwards
  uopi_kkey_hash(&env, base.k.graph, base.k.graph_len, h);
  EXPECT_EQ(Hex(h), Hex(base.k.hash));
  EXPECT_NE(std::string(env.target).find("llvm 19"), std::string::npos);
  EXPECT_EQ(env.format, UOPI_KCACHE_FORMAT);
}

// ---- memory -------------------------------------------------------------------------

TEST_F(Cache, MemoryHitReturnsAWorkingKernelWithoutCompiling) {
  Kernel A, B;
  CompileEw(A, 4096);
  uopc_cache_stats s1 = Stats();
  EXPECT_EQ(s1.misses, 1u);
  CompileEw(B, 4096);  // another context, the same graph
  uopc_cache_stats s2 = Stats();
  EXPECT_EQ(s2.misses, 1u);
  EXPECT_EQ(s2.mem_hits, 1u);
  EXPECT_EQ(s2.disk_hits, 0u);
  EXPECT_EQ(s2.mem_entries, 1u);
  EXPECT_EQ(s2.mem_held, 1u);
  // freeing one handle leaves the other working
  uopc_kernel_free(A.k);
  A.k = nullptr;
  CheckEw(B.k, 4096);
  uopc_kernel_free(B.k);
  B.k = nullptr;
  uopc_cache_stats s3 = Stats();
  EXPECT_EQ(s3.mem_entries, 1u);  // kept, unheld
  EXPECT_EQ(s3.mem_held, 0u);
  EXPECT_GT(s3.mem_bytes, 0u);
  Kernel C;
  CompileEw(C, 4096);
  CheckEw(C.k, 4096);
  EXPECT_EQ(Stats().mem_hits, 2u);
  EXPECT_EQ(Stats().misses, 1u);
}

// The elementwise kernel of bench/cache_kernels.h built in another order
// (the range and the b loads first): the same graph, other ids.
uopc_node *EwOtherOrder(uopc_ctx *c, int32_t n) {
  uopc_node *i = uopc_kernels::Range(c, n, 0);
  uopc_node *b = uopc_buffer(c, 2, UOPC_DT_F32, n), *vb = uopc_load(c, uopc_kernels::At(c, b, i));
  uopc_node *a = uopc_buffer(c, 1, UOPC_DT_F32, n), *va = uopc_load(c, uopc_kernels::At(c, a, i));
  uopc_node *o = uopc_buffer(c, 0, UOPC_DT_F32, n);
  uopc_node *st = uopc_store(c, uopc_kernels::At(c, o, i), uopc_add(c, uopc_mul(c, va, vb), va));
  uopc_node *e = uopc_end(c, st, &i, 1);
  return uopc_sink(c, &e, 1);
}

// Raw keys of small contexts list the nodes in id order (key.c), so the same
// graph built in another order has other raw bytes.  That costs a raw-key
// miss, never a wrong hit or a compile: the prepared key finds the entry,
// the graph is remembered as given, and the next context that builds it in
// that order hits on the raw key, with the same code.
TEST_F(Cache, TheSameGraphBuiltInAnotherOrderHitsTheSameEntry) {
  Kernel A, B, C;
  CompileEw(A, 4096);
  uopc_node *rb = EwOtherOrder(B.c, 4096), *rc = EwOtherOrder(C.c, 4096);
  Key ka, kb;
  ASSERT_EQ(uopi_kkey_raw(B.c, rb, UOPI_JIT_TIER0, 0, &kb.k), UOPC_OK);
  ASSERT_EQ(uopi_kkey_raw(A.c, Ew(A.c, 4096), UOPI_JIT_TIER0, 0, &ka.k), UOPC_OK);
  ASSERT_FALSE(ka.k.graph_len == kb.k.graph_len && memcmp(ka.k.graph, kb.k.graph, ka.k.graph_len) == 0);
  EXPECT_EQ(uopi_kcache_find_raw(&kb.k), nullptr);  // not seen as given yet
  uopc_error e{};
  B.k = uopc_compile(B.c, rb, nullptr, &e);
  ASSERT_NE(B.k, nullptr) << e.msg;
  EXPECT_EQ(Stats().misses, 1u);
  EXPECT_EQ(Stats().mem_hits, 1u);
  CheckEw(B.k, 4096);
  Key kc;
  ASSERT_EQ(uopi_kkey_raw(C.c, rc, UOPI_JIT_TIER0, 0, &kc.k), UOPC_OK);
  uopi_kentry *hit = uopi_kcache_find_raw(&kc.k);  // remembered from B
  ASSERT_NE(hit, nullptr);
  uopi_kcache_release(hit);
  C.k = uopc_compile(C.c, rc, nullptr, &e);
  ASSERT_NE(C.k, nullptr) << e.msg;
  EXPECT_EQ(Stats().misses, 1u);
  EXPECT_EQ(Stats().mem_hits, 3u);  // B's, the find above, C's
  CheckEw(C.k, 4096);
}

TEST_F(Cache, TheSameContextCompilingTwiceGetsTwoHandles) {
  Kernel A;
  uopc_node *g = Ew(A.c, 100);
  uopc_kernel *k1 = uopc_compile(A.c, g, nullptr, nullptr);
  uopc_kernel *k2 = uopc_compile(A.c, g, nullptr, nullptr);
  ASSERT_TRUE(k1 && k2);
  EXPECT_NE(k1, k2);
  uopc_kernel_free(k1);
  CheckEw(k2, 100);
  uopc_kernel_free(k2);
}

// Kernels that differ in one constant, one op or one dtype never share an
// entry, in one context (where the raw key of a root is memoized in the
// context) and in fresh ones; a root compiled again after the memory cache
// is cleared goes to disk (the memoized bytes lent to the alias, copied).
TEST_F(Cache, OneConstantOpOrDtypeApartMissesAndRunsItsOwnCode) {
  Kernel K;
  const int n = 16;
  // o[i] = a[i] OP const, as f32 or i32
  auto build = [&](uopc_ctx *c, uopc_dtype t, int op_mul, double k) {
    uopc_node *o = uopc_buffer(c, 0, t, n), *a = uopc_buffer(c, 1, t, n);
    uopc_node *i = uopc_kernels::Range(c, n, 0);
    uopc_node *va = uopc_load(c, uopc_kernels::At(c, a, i));
    uopc_node *kk = t == UOPC_DT_F32 ? uopc_const_f(c, t, k) : uopc_const_i(c, t, (int64_t)k);
    uopc_node *v = op_mul ? uopc_mul(c, va, kk) : uopc_add(c, va, kk);
    uopc_node *st = uopc_store(c, uopc_kernels::At(c, o, i), v);
    uopc_node *e = uopc_end(c, st, &i, 1);
    return uopc_sink(c, &e, 1);
  };
  struct Variant {
    uopc_dtype t;
    int op_mul;
    double k;
  } vs[] = {{UOPC_DT_F32, 0, 3.0}, {UOPC_DT_F32, 0, 5.0}, {UOPC_DT_F32, 1, 3.0}, {UOPC_DT_I32, 0, 3.0},
            {UOPC_DT_F32, 1, 0.0}, {UOPC_DT_F32, 1, -0.0}};
  auto check = [&](uopc_kernel *k, const Variant &v) {
    ASSERT_NE(k, nullptr);
    std::vector<float> fo(n, -1.0f), fa(n);
    std::vector<int32_t> io(n, -1), ia(n);
    for (int i = 0; i < n; i++) fa[i] = 0.5f * (float)i + 1.0f, ia[i] = 7 * i - 20;
    void *bufs[2] = {v.t == UOPC_DT_F32 ? (void *)fo.data() : (void *)io.data(),
                     v.t == UOPC_DT_F32 ? (void *)fa.data() : (void *)ia.data()};
    uopc_error e{};
    ASSERT_EQ(uopc_kernel_call(k, bufs, 2, &e), UOPC_OK) << e.msg;
    for (int i = 0; i < n; i++) {
      if (v.t == UOPC_DT_I32) {
        ASSERT_EQ(io[i], ia[i] + (int32_t)v.k);
      } else {
        float want = v.op_mul ? fa[i] * (float)v.k : fa[i] + (float)v.k;
        ASSERT_EQ(memcmp(&fo[i], &want, 4), 0) << "element " << i << " k " << v.k;
      }
    }
  };
  std::vector<uopc_node *> roots;
  for (const Variant &v : vs) roots.push_back(build(K.c, v.t, v.op_mul, v.k));
  uint64_t m0 = Stats().misses;
  for (int round = 0; round < 3; round++)
    for (size_t j = 0; j < roots.size(); j++) {
      uopc_kernel *k = uopc_compile(K.c, roots[j], nullptr, nullptr);
      check(k, vs[j]);
      uopc_kernel_free(k);
    }
  EXPECT_EQ(Stats().misses - m0, roots.size());  // one per variant, then memory hits
  EXPECT_EQ(Stats().mem_hits, 2 * roots.size());
  // fresh contexts, the same variants: hits, each with its own code
  for (size_t j = 0; j < roots.size(); j++) {
    Kernel F;
    F.k = uopc_compile(F.c, build(F.c, vs[j].t, vs[j].op_mul, vs[j].k), nullptr, nullptr);
    check(F.k, vs[j]);
  }
  EXPECT_EQ(Stats().misses - m0, roots.size());
  // memory cleared: the same roots again, from disk, then from memory
  uopc_cache_clear_memory();
  uint64_t d0 = Stats().disk_hits, h0 = Stats().mem_hits;
  for (int round = 0; round < 2; round++)
    for (size_t j = 0; j < roots.size(); j++) {
      uopc_kernel *k = uopc_compile(K.c, roots[j], nullptr, nullptr);
      check(k, vs[j]);
      uopc_kernel_free(k);
    }
  EXPECT_EQ(Stats().disk_hits - d0, roots.size());
  EXPECT_EQ(Stats().mem_hits - h0, roots.size());
  EXPECT_EQ(Stats().misses - m0, roots.size());
  // the same root at the other tier: the memoized bytes, another key
  uopc_compile_opts strong{UOPC_TIER_STRONG};
  for (int round = 0; round < 2; round++) {
    uopc_kernel *k = uopc_compile(K.c, roots[0], &strong, nullptr);
    check(k, vs[0]);
    uopc_kernel_free(k);
  }
  EXPECT_EQ(Stats().misses - m0, roots.size() + 1);
}

TEST_F(Cache, MemoryIsBoundedLeastRecentlyUsedFirst) {
  EnvVar off("UOPC_CACHE", "0");
  uopc_cache_set_memory_limit(2, 1ull << 30);
  for (int n : {10, 11, 12}) {
    Kernel K;
    CompileEw(K, n);
  }
  EXPECT_EQ(Stats().mem_entries, 2u);  // 10 went
  {
    Kernel K;
    CompileEw(K, 11);  // a hit; 11 becomes the most recent
  }
  EXPECT_EQ(Stats().mem_hits, 1u);
  {
    Kernel K;
    CompileEw(K, 13);  // evicts 12
  }
  {
    Kernel K;
    CompileEw(K, 11);
  }
  EXPECT_EQ(Stats().mem_hits, 2u);
  {
    Kernel K;
    CompileEw(K, 12);
  }
  EXPECT_EQ(Stats().misses, 5u);  // 10, 11, 12, 13, 12 again
  // held kernels are never dropped; with 0, 0 nothing unheld is kept
  Kernel H;
  CompileEw(H, 20);
  uopc_cache_set_memory_limit(0, 0);
  EXPECT_EQ(Stats().mem_entries, 1u);
  EXPECT_EQ(Stats().mem_held, 1u);
  CheckEw(H.k, 20);
  uopc_kernel_free(H.k);
  H.k = nullptr;
  EXPECT_EQ(Stats().mem_entries, 0u);
}

TEST_F(Cache, ThreadsCompilingTheSameKernelShareOneEntry) {
  EnvVar off("UOPC_CACHE", "0");
  constexpr int kThreads = 6;
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  std::vector<uopc_kernel *> ks(kThreads);
  for (int t = 0; t < kThreads; t++)
    ts.emplace_back([&, t] {
      uopc_ctx *c = uopc_ctx_new(nullptr);
      uopc_compile_opts o{UOPC_TIER_STRONG};
      ks[t] = uopc_compile(c, Mm(c, 64), &o, nullptr);
      if (ks[t]) ok++;
      uopc_ctx_free(c);
    });
  for (auto &t : ts) t.join();
  EXPECT_EQ(ok.load(), kThreads);
  uopc_cache_stats s = Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.mem_hits, (uint64_t)kThreads - 1);
  EXPECT_EQ(s.mem_entries, 1u);
  for (auto *k : ks) {
    CheckMm(k, 64);
    uopc_kernel_free(k);
  }
}

TEST_F(Cache, ThreadsCompilingUnderEvictionPressure) {
  // 4 threads, 6 kernels, room for 2 unheld: entries are evicted, reloaded
  // from disk and waited for while other threads hold and call them
  uopc_cache_set_memory_limit(2, 1ull << 30);
  constexpr int kThreads = 4, kRounds = 25;
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; t++)
    ts.emplace_back([&, t] {
      unsigned r = 12345u * (unsigned)(t + 1);
      for (int i = 0; i < kRounds; i++) {
        r = r * 1103515245u + 12345u;
        int n = 50 + (int)((r >> 16) % 6);
        uopc_ctx *c = uopc_ctx_new(nullptr);
        uopc_kernel *k = uopc_compile(c, Ew(c, n), nullptr, nullptr);
        if (!k) {
          bad++;
        } else {
          std::vector<float> o(n), a(n, 1.5f), b(n, 2.0f);
          void *bufs[3] = {o.data(), a.data(), b.data()};
          if (uopc_kernel_call(k, bufs, 3, nullptr) != UOPC_OK || o[n - 1] != MulAdd(1.5f, 2.0f)) bad++;
          if (i % 3 == 0) uopc_cache_clear_memory();
        }
        uopc_kernel_free(k);
        uopc_ctx_free(c);
      }
    });
  for (auto &t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  uopc_cache_stats s = Stats();
  EXPECT_EQ(s.mem_hits + s.disk_hits + s.misses, (uint64_t)kThreads * kRounds);
  EXPECT_EQ(s.misses, 6u);  // each kernel compiled once: the rest from memory or disk
  EXPECT_EQ(s.disk_damaged, 0u);
  EXPECT_EQ(s.mem_held, 0u);
}

// ---- disk -----------------------------------------------------------------------------

TEST_F(Cache, DiskHitInAWarmProcess) {
  std::string p = Warm(4096);
  EXPECT_EQ(Stats().disk_writes, 1u);
  Kernel K;
  CompileEw(K, 4096);
  uopc_cache_stats s = Stats();
  EXPECT_EQ(s.disk_hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  CheckEw(K.k, 4096);
  // the matmul nest at the strong tier too
  Kernel M;
  uopc_compile_opts o{UOPC_TIER_STRONG};
  M.k = uopc_compile(M.c, Mm(M.c, 64), &o, nullptr);
  CheckMm(M.k, 64);
  uopc_kernel_free(M.k);
  M.k = nullptr;
  uopc_cache_clear_memory();
  M.k = uopc_compile(M.c, Mm(M.c, 64), &o, nullptr);
  CheckMm(M.k, 64);
  EXPECT_EQ(Stats().disk_hits, 2u);
  // an entry decodes and matches its key
  std::string bytes = Slurp(p);
  uopi_kfile f;
  ASSERT_EQ(uopi_kfile_decode((const uint8_t *)bytes.data(), bytes.size(), &f), nullptr);
  EXPECT_EQ(f.meta.nbufs, 3u);
  EXPECT_EQ(f.meta.len[0], 4096);
  EXPECT_EQ(f.meta.dtype[1], UOPC_DT_F32);
  EXPECT_EQ(f.obj_size, f.payload_size);  // stored as it is
  EXPECT_EQ(std::memcmp(f.obj, "\x7f" "ELF", 4), 0);
  EXPECT_EQ(entries(dir_).size(), 2u);
  EXPECT_EQ(leftovers(dir_), std::vector<std::string>{});  // no temporary files
}

TEST_F(Cache, ASecondProcessHitsTheDiskCache) {
  std::string env = "UOPC_CACHE_DIR='" + dir_ + "' UOPC_DEBUG=cache";
  CliRun a = Cli(env, "cache warm '" + ew_file_ + "'");
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, "miss\n");
  EXPECT_NE(a.err.find("uopc cache: wrote "), std::string::npos) << a.err;
  CliRun b = Cli(env, "cache warm '" + ew_file_ + "'");
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(b.out, "disk hit\n");
  EXPECT_NE(b.err.find("uopc cache: disk hit "), std::string::npos) << b.err;
  // another tier is another entry
  CliRun c = Cli(env, "cache warm --tier=strong '" + ew_file_ + "'");
  EXPECT_EQ(c.out, "miss\n");
  EXPECT_EQ(entries(dir_).size(), 2u);
  // this process finds the CLI's entry
  Kernel K;
  CompileEw(K, 1000);
  EXPECT_EQ(Stats().disk_hits, 1u);
  CheckEw(K.k, 1000);
}

TEST_F(Cache, CliStatsAndClear) {
  std::string env = "UOPC_CACHE_DIR='" + dir_ + "'";
  ASSERT_EQ(Cli(env, "cache warm '" + ew_file_ + "'").status, 0);
  CliRun s = Cli(env, "cache stats");
  EXPECT_EQ(s.status, 0);
  EXPECT_NE(s.out.find("directory: " + dir_ + "\nentries: 1\nbytes: "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("this process: 0 memory hits"), std::string::npos) << s.out;
  CliRun c = Cli(env, "cache clear");
  EXPECT_EQ(c.status, 0);
  EXPECT_EQ(c.out, "removed 1 entries from " + dir_ + "\n");
  EXPECT_TRUE(entries(dir_).empty());
  EXPECT_EQ(Cli("UOPC_CACHE=0", "cache stats").out.rfind("directory: none (disk cache off)\n", 0), 0u);
  EXPECT_EQ(Cli(env, "cache frob").status, 2);
  EXPECT_EQ(Cli(env, "cache warm").status, 2);
  EXPECT_EQ(Cli(env, "cache warm --tier=slow x.uir").status, 2);
  CliRun bad = Cli(env, "cache warm '" + std::string(UOPC_SOURCE_DIR) + "/examples/mul_add.uir'");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("error: "), std::string::npos);
}

// ---- damaged entries ----------------------------------------------------------------------

// Rewrites the entry at path with a valid header CRC after fix(key, meta).
void Reencode(const std::string &path, const std::function<void(uopi_kkey &, uopi_kmeta &, std::string &)> &fix) {
  std::string bytes = Slurp(path);
  uopi_kfile f;
  ASSERT_EQ(uopi_kfile_decode((const uint8_t *)bytes.data(), bytes.size(), &f), nullptr);
  std::string codegen(f.codegen, f.codegen_len), target(f.target, f.target_len), pipeline(f.pipeline, f.pipeline_len);
  std::string graph((const char *)f.graph, f.graph_len);
  uopi_kkey key{};
  uopi_kmeta meta = f.meta;
  key.env = {f.format, f.tier, f.flags, codegen.c_str(), target.c_str(), pipeline.c_str()};
  memcpy(key.hash, f.hash, 16);
  std::string obj((const char *)f.obj, f.obj_size);
  fix(key, meta, target);  // may repoint key.env.target at the (changed) string
  key.graph = (uint8_t *)graph.data();
  key.graph_len = graph.size();
  size_t n;
  uint8_t *p = uopi_kfile_encode(&key, &meta, obj.data(), obj.size(), &n);
  ASSERT_NE(p, nullptr);
  Spit(path, std::string((const char *)p, n));
  free(p);
}

void FixHeaderCrc(std::string &b) {
  uint32_t h;
  memcpy(&h, b.data() + 12, 4);
  ASSERT_LE(h, b.size());
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, (const Bytef *)b.data(), h - 4);
  uint32_t v = (uint32_t)c;
  memcpy(&b[h - 4], &v, 4);
}

struct Damage {
  const char *name;
  const char *reason;  // in the warning
  std::function<void(const std::string &path)> apply;
};

TEST_F(Cache, DamagedEntriesAreRemovedAndRecompiled) {
  const Damage cases[] = {
      {"truncated in the object", "truncated",
       [](const std::string &p) {
         std::string b = Slurp(p);
         Spit(p, b.substr(0, b.size() - 5));
       }},
      {"truncated in the header", "truncated",
       [](const std::string &p) { Spit(p, Slurp(p).substr(0, 100)); }},
      {"empty", "truncated", [](const std::string &p) { Spit(p, ""); }},
      {"flipped payload byte", "object CRC-32 mismatch",
       [](const std::string &p) {
         std::string b = Slurp(p);
         b[b.size() - 10] ^= 0x20;
         Spit(p, b);
       }},
      {"flipped header byte", "header CRC-32 mismatch",
       [](const std::string &p) {
         std::string b = Slurp(p);
         b[100] ^= 0x01;  // inside the codegen id
         Spit(p, b);
       }},
      {"flipped object size", "header CRC-32 mismatch",
       [](const std::string &p) {
         std::string b = Slurp(p);
         b[41] ^= 0x01;
         Spit(p, b);
       }},
      {"wrong magic", "bad magic",
       [](const std::string &p) {
         std::string b = Slurp(p);
         b[0] = 'X';
         Spit(p, b);
       }},
      {"wrong format version", "another format version",
       [](const std::string &p) {
         std::string b = Slurp(p);
         b[8] = (char)(UOPI_KCACHE_FORMAT + 1);
         FixHeaderCrc(b);
         Spit(p, b);
       }},
      {"wrong target (another CPU)", "built for another target",
       [](const std::string &p) {
         Reencode(p, [](uopi_kkey &k, uopi_kmeta &, std::string &target) {
           size_t at = target.find("; ", target.find("; ") + 2);  // "llvm V; TRIPLE; CPU; ..."
           ASSERT_NE(at, std::string::npos);
           target.insert(at + 2, "other-cpu-");
           k.env.target = target.c_str();
         });
       }},
      {"wrong codegen id", "another uopc code generator",
       [](const std::string &p) {
         Reencode(p, [](uopi_kkey &k, uopi_kmeta &, std::string &) { k.env.codegen = "0123456789abcdef"; });
       }},
      {"another kernel's key under this name", "hash collision",
       [](const std::string &p) {
         std::string b = Slurp(p);
         uopi_kfile f;
         ASSERT_EQ(uopi_kfile_decode((const uint8_t *)b.data(), b.size(), &f), nullptr);
         size_t at = (size_t)(f.graph - (const uint8_t *)b.data()) + f.graph_len - 1;
         b[at] ^= 0x01;  // a graph byte: another kernel, same hash claimed
         FixHeaderCrc(b);
         Spit(p, b);
       }},
      {"other buffer lengths", "other buffer dtypes or lengths",
       [](const std::string &p) {
         Reencode(p, [](uopi_kkey &, uopi_kmeta &m, std::string &) { m.len[1] = 8; });
       }},
      {"trailing bytes", "trailing bytes",
       [](const std::string &p) { Spit(p, Slurp(p) + "junk"); }},
      {"trailing bytes past the first read (64 KiB)", "trailing bytes",
       [](const std::string &p) { Spit(p, Slurp(p) + std::string(70000, 'j')); }},
      {"not an object", "cannot link the object",
       [](const std::string &p) {
         std::string b = Slurp(p);
         uopi_kfile f;
         ASSERT_EQ(uopi_kfile_decode((const uint8_t *)b.data(), b.size(), &f), nullptr);
         std::string hdr = b.substr(0, f.header_size);
         std::string junk(600, 'x');
         uint64_t sz = junk.size();
         memcpy(&hdr[40], &sz, 8);
         memcpy(&hdr[48], &sz, 8);
         uint32_t pc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)junk.data(), (uInt)junk.size());
         memcpy(&hdr[56], &pc, 4);
         FixHeaderCrc(hdr);
         Spit(p, hdr + junk);
       }},
  };
  int n = 100;
  for (const Damage &d : cases) {
    SCOPED_TRACE(d.name);
    n++;  // a kernel of its own for each case
    std::string p = Warm(n);
    d.apply(p);
    uopc_cache_stats before = Stats();
    Kernel K;
    std::string err;
    {
      EnvVar dbg("UOPC_DEBUG", "check,cache");
      testing::internal::CaptureStderr();
      CompileEw(K, n);
      err = testing::internal::GetCapturedStderr();
    }
    uopc_cache_stats after = Stats();
    EXPECT_EQ(after.misses, before.misses + 1);  // compiled afresh
    EXPECT_EQ(after.disk_hits, before.disk_hits);
    EXPECT_EQ(after.disk_damaged, before.disk_damaged + 1);
    CheckEw(K.k, n);
    // one warning line, naming the entry and the reason
    size_t w = err.find("uopc cache: warning: removed damaged entry " + p + ": ");
    EXPECT_NE(w, std::string::npos) << err;
    EXPECT_NE(err.find(d.reason), std::string::npos) << err;
    size_t lines = 0;
    for (size_t i = err.find("warning"); i != std::string::npos; i = err.find("warning", i + 1)) lines++;
    EXPECT_EQ(lines, 1u) << err;
    // the bad file is gone; the fresh compile wrote a good one in its place
    std::string now = Slurp(p);
    uopi_kfile f;
    ASSERT_EQ(uopi_kfile_decode((const uint8_t *)now.data(), now.size(), &f), nullptr);
    uopc_kernel_free(K.k);
    K.k = nullptr;
    uopc_cache_clear_memory();
    Kernel K2;
    CompileEw(K2, n);
    EXPECT_EQ(Stats().disk_hits, after.disk_hits + 1);
    CheckEw(K2.k, n);
  }
  EXPECT_EQ(leftovers(dir_), std::vector<std::string>{});  // no temporary files left
}

TEST_F(Cache, DecodeRejectsEveryTruncationAndByteFlip) {
  std::string p = Warm(64);
  std::string b = Slurp(p);
  uopi_kfile f;
  for (size_t n = 0; n < b.size(); n++) {
    ASSERT_NE(uopi_kfile_decode((const uint8_t *)b.data(), n, &f), nullptr) << n;
  }
  for (size_t i = 0; i < b.size(); i++) {
    std::string c = b;
    c[i] ^= 0x10;
    const char *why = uopi_kfile_decode((const uint8_t *)c.data(), c.size(), &f);
    if (!why) {  // a flip the CRCs cannot see does not exist
      ADD_FAILURE() << "byte " << i << " flipped, entry accepted";
    }
  }
}

// ---- concurrency, directories, settings ----------------------------------------------------------

// A disk hit reads an entry in one read of 64 KiB (lib/kcache/disk.c,
// FIRST_READ): an entry longer than that is read to its end.
TEST_F(Cache, AnEntryLongerThanTheFirstReadHits) {
  // x * c_k + d_k, 400 times, over 64 floats: an object of ~80 KiB
  const int steps = 400;
  std::string t = "%o = buffer : slot=0 dtype=f32 shape=(64,)\n%a = buffer : slot=1 dtype=f32 shape=(64,)\n"
                  "%i = range 64 : idx=0\n%pa = index %a, %i\n%v0 = load %pa\n";
  std::vector<float> c(steps), d(steps);
  for (int k = 0; k < steps; k++) {
    c[k] = 1.0f + 0.001f * (float)k, d[k] = 0.5f + 0.01f * (float)k;
    char line[160];
    snprintf(line, sizeof line, "%%m%d = mul %%v%d, %.9g\n%%v%d = add %%m%d, %.9g\n", k, k, (double)c[k], k + 1, k,
             (double)d[k]);
    t += line;
  }
  t += "%po = index %o, %i\n%st = store %po, %v" + std::to_string(steps) + "\n%e = end %st, %i\n%k = sink %e\n";
  std::vector<float> a(64), want(64);
  for (int i = 0; i < 64; i++) {
    a[i] = 0.125f * (float)i - 4.0f;
    float v = a[i];
    for (int k = 0; k < steps; k++) {
      volatile float p = v * c[k];
      v = p + d[k];
    }
    want[i] = v;
  }
  auto compile_and_check = [&]() {
    Kernel K;
    uopc_error e{};
    uopc_node *g = uopc_uir_parse(K.c, t.data(), t.size(), "long.uir", &e);
    ASSERT_NE(g, nullptr) << e.msg;
    uopc_compile_opts o{UOPC_TIER_FAST};
    K.k = uopc_compile(K.c, g, &o, &e);
    ASSERT_NE(K.k, nullptr) << e.msg;
    std::vector<float> out(64, -1.0f);
    void *bufs[2] = {out.data(), a.data()};
    ASSERT_EQ(uopc_kernel_call(K.k, bufs, 2, &e), UOPC_OK) << e.msg;
    EXPECT_EQ(memcmp(out.data(), want.data(), sizeof(float) * 64), 0);
  };
  compile_and_check();
  uopc_cache_clear_memory();
  std::vector<std::string> entries;
  for (const std::string &n : list_dir(dir_))
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".ukc") == 0) entries.push_back(n);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_GT(Slurp(dir_ + "/" + entries[0]).size(), 65536u);
  uopc_cache_stats before = Stats();
  compile_and_check();
  EXPECT_EQ(Stats().disk_hits, before.disk_hits + 1);
  EXPECT_EQ(Stats().disk_damaged, before.disk_damaged);
}

// Something other than a file where an entry would be: a FIFO must not block
// the lookup (an open without O_NONBLOCK waits for a writer forever), a
// directory must not be taken for a damaged entry; both are misses.
TEST_F(Cache, AFifoOrADirectoryWhereAnEntryWouldBeIsAMiss) {
  Warm(7);  // makes the directory
  std::string fifo = EwEntry(8), sub = EwEntry(9);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  for (int n : {8, 9}) {
    SCOPED_TRACE(n);
    uopc_cache_stats before = Stats();
    Kernel K;
    CompileEw(K, n);
    CheckEw(K.k, n);
    EXPECT_EQ(Stats().disk_hits, before.disk_hits);
    EXPECT_EQ(Stats().disk_damaged, before.disk_damaged);
  }
  struct stat st;
  ASSERT_EQ(stat(sub.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));  // left alone (a store cannot rename over it)
  ASSERT_EQ(rmdir(sub.c_str()), 0);
}

// A hit refreshes an mtime older than 2 s (the LRU clock); while this process
// knows the entry's mtime is fresh, later hits skip the fstat that checks it,
// so an mtime set back by hand is seen again only after that window.
TEST_F(Cache, HitsRefreshTheMtimeAtMostOnceInTheWindow) {
  std::string p = Warm(11);
  auto set_age = [&](int seconds) {
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), t, 0), 0);
  };
  auto age = [&]() {
    struct stat st;
    EXPECT_EQ(stat(p.c_str(), &st), 0);
    return (long)(time(nullptr) - st.st_mtime);
  };
  auto hit = [&]() {
    uopc_cache_clear_memory();
    uint64_t h = Stats().disk_hits;
    Kernel K;
    CompileEw(K, 11);
    EXPECT_EQ(Stats().disk_hits, h + 1);
  };
  set_age(300);
  hit();
  EXPECT_LE(age(), 1);  // refreshed
  set_age(300);
  hit();
  EXPECT_GE(age(), 299);  // within the window: not looked at
  sleep(3);
  hit();
  EXPECT_LE(age(), 1);  // after it: refreshed again
}

TEST_F(Cache, TwoProcessesCompilingAtOnceLeaveOneValidEntry) {
  std::string mm = root_ + "/mm.uir";
  {
    // the 64^3 matmul nest as .uir (strong tier: ~10 ms of compile to overlap)
    std::string s =
        "%c = buffer : slot=0 dtype=f32 shape=(4096,)\n%a = buffer : slot=1 dtype=f32 shape=(4096,)\n"
        "%b = buffer : slot=2 dtype=f32 shape=(4096,)\n%zi = range 64 : idx=0\n%zj = range 64 : idx=1\n"
        "%zi64 = mul %zi, 64\n%zf = add %zi64, %zj\n%zp = index %c, %zf\n%z = store %zp, 0.0\n"
        "%ze = end %z, %zi, %zj\n%i = range 64 : idx=2\n%k = range 64 : idx=3\n%j = range 64 : idx=4\n"
        "%i64 = mul %i, 64\n%cf = add %i64, %j\n%cp = index %c, %cf\n%af = add %i64, %k\n%ap = index %a, %af\n"
        "%k64 = mul %k, 64\n%bf = add %k64, %j\n%bp = index %b, %bf\n%cv = load %cp\n%av = load %ap\n"
        "%bv = load %bp\n%p = mul %av, %bv\n%s = add %cv, %p\n%st = store %cp, %s\n%e = end %st, %i, %k, %j\n"
        "%root = sink %ze, %e\n";
    Spit(mm, s);
  }
  std::string env = "UOPC_CACHE_DIR='" + dir_ + "'";
  for (int round = 0; round < 4; round++) {
    SCOPED_TRACE(round);
    uopc_error e{};
    ASSERT_EQ(uopc_cache_clear_disk(nullptr, &e), UOPC_OK) << e.msg;
    CliRun r[2];
    std::thread t0([&] { r[0] = Cli(env, "cache warm --tier=strong '" + mm + "'"); });
    std::thread t1([&] { r[1] = Cli(env, "cache warm --tier=strong '" + mm + "'"); });
    t0.join();
    t1.join();
    for (auto &x : r) {
      EXPECT_EQ(x.status, 0) << x.err;
      EXPECT_TRUE(x.out == "miss\n" || x.out == "disk hit\n") << x.out;
    }
    EXPECT_EQ(entries(dir_).size(), 1u);
    EXPECT_EQ(leftovers(dir_), std::vector<std::string>{});  // no temporary file left
    EXPECT_EQ(Cli(env, "cache warm --tier=strong '" + mm + "'").out, "disk hit\n");
  }
  // and the entry is the right code
  Kernel K;
  uopc_error e{};
  uopc_node *g = uopc_uir_parse_file(K.c, mm.c_str(), &e);
  ASSERT_NE(g, nullptr) << e.msg;
  uopc_compile_opts o{UOPC_TIER_STRONG};
  K.k = uopc_compile(K.c, g, &o, &e);
  EXPECT_EQ(Stats().disk_hits, 1u);
  CheckMm(K.k, 64);
}

TEST_F(Cache, AnUncreatableDirectoryMeansNoDiskCache) {
  std::string file = root_ + "/a-file";
  Spit(file, "not a directory\n");
  std::string bad = file + "/cache";
  EnvVar d("UOPC_CACHE_DIR", bad.c_str());
  EnvVar dbg("UOPC_DEBUG", "check,cache");
  testing::internal::CaptureStderr();
  Kernel K;
  CompileEw(K, 300);
  std::string err = testing::internal::GetCapturedStderr();
  CheckEw(K.k, 300);
  EXPECT_NE(err.find("uopc cache: warning: cache directory " + bad + " is unusable"), std::string::npos) << err;
  EXPECT_EQ(Stats().disk_writes, 0u);
  uopc_kernel_free(K.k);
  K.k = nullptr;
  uopc_cache_clear_memory();
  testing::internal::CaptureStderr();
  CompileEw(K, 300);  // compiles again, without a second warning
  err = testing::internal::GetCapturedStderr();
  CheckEw(K.k, 300);
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
  EXPECT_EQ(Stats().misses, 2u);
  // the CLI too
  CliRun r = Cli("UOPC_CACHE_DIR='" + bad + "'", "cache warm '" + ew_file_ + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "miss\n");
  EXPECT_EQ(r.err, "");
  uint64_t n, bytes;
  uopc_error e{};
  EXPECT_EQ(uopc_cache_disk_usage(&n, &bytes, &e), UOPC_ERR_IO);
}

TEST_F(Cache, DisabledDiskCacheWritesNothing) {
  {
    EnvVar off("UOPC_CACHE", "0");
    Kernel K;
    CompileEw(K, 500);
    CheckEw(K.k, 500);
    char buf[64];
    EXPECT_EQ(uopc_cache_dir(buf, sizeof buf), 0);
    CliRun r = Cli("UOPC_CACHE=0 UOPC_CACHE_DIR='" + dir_ + "'", "cache warm '" + ew_file_ + "'");
    EXPECT_EQ(r.out, "miss\n");
  }
  EXPECT_FALSE(exists(dir_));
  uopc_cache_set_disk(0);
  {
    Kernel K;
    CompileEw(K, 501);
  }
  EXPECT_FALSE(exists(dir_));
  uopc_cache_set_disk(1);
  EXPECT_EQ(Stats().disk_writes, 0u);
}

TEST_F(Cache, DirectoryFromTheEnvironment) {
  char buf[4096];
  ASSERT_EQ(uopc_cache_dir(buf, sizeof buf), 1);
  EXPECT_EQ(std::string(buf), dir_);
  {
    EnvVar d("UOPC_CACHE_DIR", nullptr);
    EnvVar x("XDG_CACHE_HOME", "/x/cache");
    ASSERT_EQ(uopc_cache_dir(buf, sizeof buf), 1);
    EXPECT_EQ(std::string(buf), "/x/cache/uopc");
    EnvVar x2("XDG_CACHE_HOME", "");
    EnvVar h("HOME", "/home/someone");
    ASSERT_EQ(uopc_cache_dir(buf, sizeof buf), 1);
    EXPECT_EQ(std::string(buf), "/home/someone/.cache/uopc");
    EnvVar h2("HOME", nullptr);
    EXPECT_EQ(uopc_cache_dir(buf, sizeof buf), 0);
  }
  EnvVar d("UOPC_CACHE_DIR", "/tmp/with/slash/");
  ASSERT_EQ(uopc_cache_dir(buf, sizeof buf), 1);
  EXPECT_EQ(std::string(buf), "/tmp/with/slash");
}

TEST_F(Cache, SizeBoundEvictsTheLeastRecentlyUsed) {
  // three entries; 101 is made the most recently used by a disk hit
  std::string p[4];
  int ns[4] = {101, 102, 103, 104};
  for (int i = 0; i < 3; i++) p[i] = Warm(ns[i]);
  struct timespec t[2];
  for (int i = 0; i < 3; i++) {
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= 300 - 100 * i;  // 101 oldest, then 102, then 103
    t[1] = t[0];
    ASSERT_EQ(utimensat(AT_FDCWD, p[i].c_str(), t, 0), 0);
  }
  {
    Kernel K;
    CompileEw(K, 101);
    EXPECT_EQ(Stats().disk_hits, 1u);
  }
  uopc_cache_clear_memory();
  double total = 0;
  for (int i = 0; i < 3; i++) total += (double)Slurp(p[i]).size();
  // room for 3.5 entries: the 4th store goes over, eviction goes to 90% (3.15)
  char mb[64];
  snprintf(mb, sizeof mb, "%.9f", total / 3 * 3.5 / 1048576.0);
  EnvVar max("UOPC_CACHE_MAX_MB", mb);
  uopc_cache_stats before = Stats();
  {
    Kernel K;
    CompileEw(K, 104);
  }
  p[3] = EwEntry(104);
  EXPECT_EQ(Stats().disk_evicted, before.disk_evicted + 1);
  EXPECT_TRUE(exists(p[0]));   // used recently
  EXPECT_FALSE(exists(p[1]));  // the least recently used
  EXPECT_TRUE(exists(p[2]));
  EXPECT_TRUE(exists(p[3]));
  uint64_t n, bytes;
  ASSERT_EQ(uopc_cache_disk_usage(&n, &bytes, nullptr), UOPC_OK);
  EXPECT_EQ(n, 3u);
  EXPECT_LE((double)bytes, total / 3 * 3.5);
  // 0 writes nothing
  EnvVar zero("UOPC_CACHE_MAX_MB", "0");
  uint64_t w = Stats().disk_writes;
  {
    Kernel K;
    CompileEw(K, 105);
  }
  EXPECT_EQ(Stats().disk_writes, w);
}

// DIR/.budget (lib/kcache/disk.c, "the size bound"): 8-byte little-endian
// records, a scan record (top bit) then the bytes of each entry written since.
const uint64_t kScanRecord = UINT64_C(1) << 63;

std::vector<uint64_t> BudgetRecords(const std::string &dir) {
  std::string b = Slurp(dir + "/.budget");
  std::vector<uint64_t> v;
  for (size_t i = 0; i + 8 <= b.size(); i += 8) {
    uint64_t r = 0;
    for (int j = 7; j >= 0; j--) r = r << 8 | (uint8_t)b[i + j];
    v.push_back(r);
  }
  return v;
}

std::string Records(const std::vector<uint64_t> &v) {
  std::string b;
  for (uint64_t r : v)
    for (int j = 0; j < 8; j++) b += (char)(uint8_t)(r >> (8 * j));
  return b;
}

// n entries of `size` bytes an hour old, which no estimate counts (an older
// uopc wrote them, say): only scans see them (and evict them first).
std::vector<std::string> OldUncountedEntries(const std::string &dir, int n, size_t size) {
  std::vector<std::string> v;
  EXPECT_TRUE(exists(dir));
  for (int i = 0; i < n; i++) {
    char hex[40];
    snprintf(hex, sizeof hex, "%032x", i);
    std::string name = dir + "/" + hex + ".ukc";
    Spit(name, std::string(size, 'x'));
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= 3600;
    t[1] = t[0];
    utimensat(AT_FDCWD, name.c_str(), t, 0);
    v.push_back(name);
  }
  return v;
}

uint64_t DiskBytes() {
  uint64_t bytes = 0;
  EXPECT_EQ(uopc_cache_disk_usage(nullptr, &bytes, nullptr), UOPC_OK);
  return bytes;
}

TEST_F(Cache, EveryProcessSharesOneSizeEstimate) {
  Warm(10);  // the first store finds no estimate: it scans and writes one
  std::vector<uint64_t> r = BudgetRecords(dir_);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], kScanRecord | DiskBytes());
  Warm(11);  // a store adds its bytes
  r = BudgetRecords(dir_);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1], (uint64_t)Slurp(EwEntry(11)).size());
  // 160 KiB the estimate does not know of, the bound 0.1 MiB: the estimate
  // (three entries) is trusted, nothing is scanned nor evicted
  std::vector<std::string> old = OldUncountedEntries(dir_, 40, 4096);
  EnvVar max("UOPC_CACHE_MAX_MB", "0.1");
  uint64_t evicted = Stats().disk_evicted;
  Warm(12);
  EXPECT_EQ(Stats().disk_evicted, evicted);
  for (auto &p : old) EXPECT_TRUE(exists(p)) << p;
  EXPECT_EQ(BudgetRecords(dir_).size(), 3u);
  // other processes' stores, as they append them, take it over the bound:
  // this store scans and evicts the oldest entries down to 90 % of it
  std::ofstream(dir_ + "/.budget", std::ios::app | std::ios::binary) << Records({200000});
  Warm(13);
  EXPECT_GT(Stats().disk_evicted, evicted);
  r = BudgetRecords(dir_);
  ASSERT_EQ(r.size(), 1u);
  uint64_t bytes = DiskBytes();
  EXPECT_EQ(r[0], kScanRecord | bytes);
  EXPECT_LE((double)bytes, 0.9 * 0.1 * 1048576);
  for (int n = 10; n <= 13; n++) EXPECT_TRUE(exists(EwEntry(n))) << n;  // the recent ones stay
  EXPECT_FALSE(exists(old[0]));
}

TEST_F(Cache, AMissingDamagedOrOldEstimateMeansAScan) {
  EnvVar max("UOPC_CACHE_MAX_MB", "0.1");
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  const std::string budget = dir_ + "/.budget";
  std::vector<uint64_t> rescan(1 + 1024, 0), before_rescan(1 + 1022, 0);
  rescan[0] = before_rescan[0] = kScanRecord | 3000;
  struct Case {
    const char *what;
    bool exists;         // the file is written
    std::string bytes;   // its content
    bool scan;           // the next store scans
  } cases[] = {
      {"no file (a directory an older uopc wrote)", false, "", true},
      {"empty", true, "", true},
      {"not a whole record", true, "abcde", true},
      {"records but no scan record", true, Records({100, 200}), true},
      {"too long", true, Records(std::vector<uint64_t>(2000, 1)), true},
      {"1024 entries written since the scan", true, Records(rescan), true},
      {"1023 entries written since the scan", true, Records(before_rescan), false},
      {"a scan record under the bound", true, Records({kScanRecord | 3000}), false},
  };
  int n = 100;
  for (const Case &k : cases) {
    SCOPED_TRACE(k.what);
    ASSERT_EQ(uopc_cache_clear_disk(nullptr, nullptr), UOPC_OK);
    EXPECT_FALSE(exists(budget));  // clear removes it
    std::vector<std::string> old = OldUncountedEntries(dir_, 40, 4096);
    if (k.exists) Spit(budget, k.bytes);
    uint64_t evicted = Stats().disk_evicted;
    Warm(n++);
    EXPECT_EQ(Stats().disk_evicted > evicted, k.scan);
    EXPECT_EQ(exists(old[0]), !k.scan);
    std::vector<uint64_t> r = BudgetRecords(dir_);
    if (k.scan) {
      ASSERT_EQ(r.size(), 1u);  // rewritten as the scan's record
      EXPECT_EQ(r[0], kScanRecord | DiskBytes());
    } else {
      EXPECT_EQ(Slurp(budget).size(), k.bytes.size() + 8);  // one record more
    }
  }
  // a scan that another holds (flock) is left to it; once released, the
  // next store scans
  ASSERT_EQ(uopc_cache_clear_disk(nullptr, nullptr), UOPC_OK);
  std::vector<std::string> old = OldUncountedEntries(dir_, 40, 4096);
  Spit(budget, "");
  int fd = open(budget.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  uint64_t evicted = Stats().disk_evicted;
  Warm(n++);
  EXPECT_EQ(Stats().disk_evicted, evicted);
  EXPECT_TRUE(exists(old[0]));
  close(fd);
  Warm(n++);
  EXPECT_GT(Stats().disk_evicted, evicted);
  EXPECT_FALSE(exists(old[0]));
}

TEST_F(Cache, ASecondProcessDoesNotScanTheDirectoryAgain) {
  std::string env = "UOPC_CACHE_DIR='" + dir_ + "' UOPC_DEBUG=cache";
  CliRun a = Cli(env, "cache warm '" + ew_file_ + "'");
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("uopc cache: scanned "), std::string::npos) << a.err;  // the first store
  std::string other = root_ + "/ew2.uir";
  Spit(other, EwText(2000));
  CliRun b = Cli(env, "cache warm '" + other + "'");
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(b.out, "miss\n");
  EXPECT_NE(b.err.find("uopc cache: wrote "), std::string::npos) << b.err;
  EXPECT_EQ(b.err.find("scanned"), std::string::npos) << b.err;
  EXPECT_EQ(BudgetRecords(dir_).size(), 2u);
}

TEST_F(Cache, ClearDiskRemovesEntriesAndLeftoverTemporaryFiles) {
  Warm(7);
  Warm(8);
  Spit(dir_ + "/.tmp-0123-abcdef", "half a file");
  Spit(dir_ + "/README", "not ours");
  uint64_t removed = 0;
  uopc_error e{};
  ASSERT_EQ(uopc_cache_clear_disk(&removed, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(removed, 2u);
  EXPECT_EQ(list_dir(dir_), std::vector<std::string>{"README"});
}

}  // namespace
