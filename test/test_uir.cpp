// The .uir text form: parser, printer, number formatting, value printing.
// docs/uir.md is the contract these tests hold the code to.
#include <gtest/gtest.h>

#include <pthread.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "uopc/uopc.h"
#include "support/ctx.h"
}

namespace {

uopc_node *parse(uopc_ctx *c, const std::string &s, uopc_error *e = nullptr) {
  uopc_error tmp;
  return uopc_uir_parse(c, s.data(), s.size(), "t.uir", e ? e : &tmp);
}

std::string print(uopc_ctx *c, uopc_node *u) {
  char *s = uopc_uir_print(c, u);
  if (!s) return "<print failed>";
  std::string r = s;
  uopc_mem_free(c, s, strlen(s) + 1);
  return r;
}

std::string value(uopc_ctx *c, uopc_node *u) {
  char *s = uopc_value_print(c, u);
  if (!s) {
    const uopc_error *e = uopc_ctx_error(c);
    return std::string("<error: ") + (e ? e->msg : "?") + ">";
  }
  std::string r = s;
  uopc_mem_free(c, s, strlen(s) + 1);
  return r;
}

std::string read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// parse(print(u)) is u itself; printing is deterministic; a fresh context
// reads the text back to a graph that prints the same.
void ExpectRoundTrip(uopc_ctx *c, uopc_node *u) {
  ASSERT_NE(u, nullptr);
  std::string a = print(c, u);
  uopc_error e;
  uopc_node *back = parse(c, a, &e);
  ASSERT_EQ(back, u) << "reparse failed: " << (back ? "different node" : e.msg) << " at " << e.line << ":" << e.col
                     << "\n" << a;
  EXPECT_EQ(print(c, u), a);
  Ctx fresh;
  uopc_node *v = parse(fresh, a, &e);
  ASSERT_NE(v, nullptr) << e.msg;
  EXPECT_EQ(print(fresh, v), a);
}

std::string fmt_d(double v) {
  char b[32];
  int n = uopc_fmt_double(v, b);
  EXPECT_EQ((size_t)n, strlen(b));
  return b;
}

std::string fmt_s(double v, uopc_dtype t) {
  char b[32];
  int n = uopc_fmt_scalar(v, t, b);
  EXPECT_EQ((size_t)n, strlen(b));
  return b;
}

// ---- examples -------------------------------------------------------------

TEST(Uir, ExamplesRoundTrip) {
  const char *files[] = {"examples/copy_kernel.uir", "examples/mul_add.uir",      "examples/where.uir",
                         "examples/movement_reduce.uir", "examples/sq_call.uir", "examples/nested_calls.uir",
                         "bench/data/simplify46.uir",    "bench/data/run_abn100.uir"};
  for (const char *f : files) {
    SCOPED_TRACE(f);
    Ctx c;
    uopc_error e;
    std::string path = std::string(UOPC_SOURCE_DIR) + "/" + f;
    uopc_node *u = uopc_uir_parse_file(c, path.c_str(), &e);
    ASSERT_NE(u, nullptr) << e.msg << " at " << e.line << ":" << e.col;
    ExpectRoundTrip(c, u);
  }
}

TEST(Uir, SeedMovementExamplePrintsAsTheSeed) {
  Ctx c;
  std::string path = std::string(UOPC_SOURCE_DIR) + "/examples/movement_reduce.uir";
  uopc_error e;
  uopc_node *u = uopc_uir_parse_file(c, path.c_str(), &e);
  ASSERT_NE(u, nullptr) << e.msg;
  EXPECT_EQ(print(c, u),
            "%0 = stack 1.0, 2.0, 3.0\n"
            "%1 = stack %0, %0\n"
            "%2 = reshape 2.0, (1, 1)\n"
            "%3 = expand %2, (2, 3)\n"
            "%4 = mul %1, %3\n"
            "%5 = permute %4, (1, 0)\n"
            "%6 = reduce %5 : op=add pop=1\n");
}

TEST(Uir, CopyKernelIsTheDocsKernel) {
  Ctx c;
  std::string path = std::string(UOPC_SOURCE_DIR) + "/examples/copy_kernel.uir";
  uopc_error e;
  uopc_node *k = uopc_uir_parse_file(c, path.c_str(), &e);
  ASSERT_NE(k, nullptr) << e.msg;
  uopc_node *A = uopc_buffer(c, 0, UOPC_DT_F32, 32), *O = uopc_buffer(c, 1, UOPC_DT_F32, 32);
  uopc_node *i = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 4), 0), *j = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 8), 1);
  uopc_node *flat = uopc_add(c, uopc_mul_k(c, i, 8), j);
  uopc_node *row = uopc_mod_k(c, uopc_idiv_k(c, flat, 8), 4);
  uopc_node *idx = uopc_add(c, uopc_mul_k(c, row, 8), uopc_mod_k(c, flat, 8));
  uopc_node *ld = uopc_load(c, uopc_index(c, A, &idx, 1));
  uopc_node *st = uopc_store(c, uopc_index(c, O, &flat, 1), ld);
  uopc_node *r[] = {i, j};
  uopc_node *e2 = uopc_end(c, st, r, 2);
  EXPECT_EQ(k, uopc_sink(c, &e2, 1));
}

// ---- literal typing and broadcast sugar -----------------------------------

TEST(Uir, LiteralTyping) {
  Ctx c;
  uopc_node *xf = uopc_param(c, 0, UOPC_DT_F32, nullptr, 0);
  uopc_node *xh = uopc_param(c, 1, UOPC_DT_F16, nullptr, 0);
  uopc_node *xb = uopc_param(c, 2, UOPC_DT_BOOL, nullptr, 0);
  const std::string pf = "%x = param : slot=0 dtype=f32\n", ph = "%x = param : slot=1 dtype=f16\n",
                    pb = "%x = param : slot=2 dtype=bool\n";
  // an int literal next to a float node converts exactly
  EXPECT_EQ(parse(c, pf + "%a = add %x, 2\n"), uopc_add(c, xf, uopc_const_f(c, UOPC_DT_F32, 2.0)));
  EXPECT_EQ(parse(c, pf + "%a = add 2, %x\n"), uopc_add(c, uopc_const_f(c, UOPC_DT_F32, 2.0), xf));
  EXPECT_EQ(parse(c, ph + "%a = mul %x, 16777217\n"), uopc_mul(c, xh, uopc_const_f(c, UOPC_DT_F16, 16777217.0)));
  // a float literal stores the double it spells, at the sibling's dtype
  EXPECT_EQ(parse(c, ph + "%a = add %x, 0.1\n"), uopc_add(c, xh, uopc_const_f(c, UOPC_DT_F16, 0.1)));
  // no node sibling: the spelling's dtype
  EXPECT_EQ(parse(c, "%a = add 1, 2\n"), uopc_add(c, uopc_const_i(c, UOPC_DT_I32, 1), uopc_const_i(c, UOPC_DT_I32, 2)));
  EXPECT_EQ(parse(c, "%a = add 1.0, 2.5\n"),
            uopc_add(c, uopc_const_f(c, UOPC_DT_F32, 1.0), uopc_const_f(c, UOPC_DT_F32, 2.5)));
  EXPECT_EQ(parse(c, "%a = add True, False\n"),
            uopc_add(c, uopc_const_i(c, UOPC_DT_BOOL, 1), uopc_const_i(c, UOPC_DT_BOOL, 0)));
  EXPECT_EQ(parse(c, "%a = sqrt 2.0\n"), uopc_alu1(c, UOPC_OP_SQRT, uopc_const_f(c, UOPC_DT_F32, 2.0)));
  // STACK: the first node sibling, wherever it stands
  uopc_node *st3[] = {uopc_const_f(c, UOPC_DT_F16, 1), xh, uopc_const_f(c, UOPC_DT_F16, 2.5)};
  EXPECT_EQ(parse(c, ph + "%a = stack 1, %x, 2.5\n"), uopc_stack(c, st3, 3));
  // WHERE: the value operands type each other; the condition is bool
  EXPECT_EQ(parse(c, pb + "%y = param : slot=0 dtype=f32\n%a = where %x, 1, %y\n"),
            uopc_where(c, xb, uopc_const_f(c, UOPC_DT_F32, 1), xf));
  EXPECT_EQ(parse(c, "%a = where True, 1, 2\n"),
            uopc_where(c, uopc_const_i(c, UOPC_DT_BOOL, 1), uopc_const_i(c, UOPC_DT_I32, 1), uopc_const_i(c, UOPC_DT_I32, 2)));
  // CMPLT takes the dtype of the compared node
  EXPECT_EQ(parse(c, pf + "%a = cmplt %x, 3\n"), uopc_lt(c, xf, uopc_const_f(c, UOPC_DT_F32, 3)));
  // explicit constants of any dtype
  EXPECT_EQ(parse(c, "%a = const 1.5 : dtype=f16\n"), uopc_const_f(c, UOPC_DT_F16, 1.5));
  EXPECT_EQ(parse(c, "%a = const 7 : dtype=f32\n"), uopc_const_f(c, UOPC_DT_F32, 7.0));
  EXPECT_EQ(parse(c, "%a = const True : dtype=bool\n"), uopc_const_i(c, UOPC_DT_BOOL, 1));
  EXPECT_EQ(parse(c, "%a = const -0.0 : dtype=f32\n"), uopc_const_f(c, UOPC_DT_F32, -0.0));
  EXPECT_NE(parse(c, "%a = const -0.0 : dtype=f32\n"), parse(c, "%a = const 0.0 : dtype=f32\n"));
  EXPECT_EQ(parse(c, "%a = const nan : dtype=f32\n"), uopc_const_f(c, UOPC_DT_F32, -NAN));
  EXPECT_EQ(parse(c, "%a = const -inf : dtype=f16\n"), uopc_const_f(c, UOPC_DT_F16, -INFINITY));
  EXPECT_EQ(parse(c, "%a = const 5e-324 : dtype=f32\n"), uopc_const_f(c, UOPC_DT_F32, 5e-324));
  EXPECT_EQ(parse(c, "%a = const -2147483648 : dtype=i32\n"), uopc_const_i(c, UOPC_DT_I32, INT32_MIN));
  // other ops: spelling (range end, index, call args, movement sources)
  const int32_t ones[] = {1, 1};
  EXPECT_EQ(parse(c, "%a = reshape 2.0, (1, 1)\n"), uopc_reshape(c, uopc_const_f(c, UOPC_DT_F32, 2), ones, 2));
  EXPECT_EQ(parse(c, "%a = range 4 : idx=0\n"), uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 4), 0));
}

TEST(Uir, LenientSpellings) {
  Ctx c;
  uopc_node *u = parse(c, "%a = reshape 2.0, (1, 1)\n");
  ASSERT_NE(u, nullptr);
  // spacing is free; tuples may end in a comma; (1) is read as (1,)
  EXPECT_EQ(parse(c, "%a=reshape 2.0,(1,1,)\n"), u);
  EXPECT_EQ(parse(c, "  %a   =   reshape\t2.0 ,( 1 , 1 )   # c\n"), u);
  EXPECT_EQ(parse(c, "%a = reshape 2.0, (1)\n"), parse(c, "%a = reshape 2.0, (1,)\n"));
  EXPECT_EQ(parse(c, "%a = shrink %b, ((0, 2,),)\n"), nullptr);
  uopc_node *s = parse(c, "%w = stack 1, 2, 3\n%a = shrink %w, ((0, 2,),)\n");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(print(c, s), "%0 = stack 1, 2, 3\n%1 = shrink %0, ((0, 2),)\n");
  // names are [A-Za-z0-9_]+, digits first included; attributes in any order
  EXPECT_EQ(parse(c, "%0x_ = param : dtype=i32 slot=0\n"), uopc_param(c, 0, UOPC_DT_I32, nullptr, 0));
  // an empty shape is a scalar
  EXPECT_EQ(parse(c, "%p = param : slot=0 dtype=i32 shape=()\n"), uopc_param(c, 0, UOPC_DT_I32, nullptr, 0));
}

TEST(Uir, BroadcastSugar) {
  Ctx c;
  int32_t s23[] = {2, 3}, ones[] = {1, 1};
  uopc_node *x = uopc_param(c, 0, UOPC_DT_F32, s23, 2);
  uopc_node *two = uopc_expand(c, uopc_reshape(c, uopc_const_f(c, UOPC_DT_F32, 2), ones, 2), s23, 2);
  std::string p = "%x = param : slot=0 dtype=f32 shape=(2, 3)\n";
  EXPECT_EQ(parse(c, p + "%y = mul %x, 2\n"), uopc_mul(c, x, two));
  EXPECT_EQ(parse(c, p + "%y = mul 2, %x\n"), uopc_mul(c, two, x));
  // a scalar node broadcasts too; the condition of WHERE as well
  std::string q = p + "%s = param : slot=1 dtype=f32\n%b = param : slot=2 dtype=bool\n";
  uopc_node *s = uopc_param(c, 1, UOPC_DT_F32, nullptr, 0), *b = uopc_param(c, 2, UOPC_DT_BOOL, nullptr, 0);
  auto bc = [&](uopc_node *k) { return uopc_expand(c, uopc_reshape(c, k, ones, 2), s23, 2); };
  EXPECT_EQ(parse(c, q + "%y = add %s, %x\n"), uopc_add(c, bc(s), x));
  EXPECT_EQ(parse(c, q + "%y = where %b, %x, 0\n"), uopc_where(c, bc(b), x, bc(uopc_const_f(c, UOPC_DT_F32, 0))));
  // the printer writes the explicit lines, which read back to the same node
  uopc_node *u = parse(c, p + "%y = mul %x, 2\n");
  EXPECT_EQ(print(c, u),
            "%0 = param : slot=0 dtype=f32 shape=(2, 3)\n%1 = reshape 2.0, (1, 1)\n%2 = expand %1, (2, 3)\n"
            "%3 = mul %0, %2\n");
  // shapes of the shaped operands must still agree
  uopc_error e;
  EXPECT_EQ(parse(c, p + "%z = param : slot=1 dtype=f32 shape=(3,)\n%y = add %x, %z\n", &e), nullptr);
  EXPECT_EQ(std::string(e.msg), "ADD shape mismatch (2, 3) vs (3,)");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.col, 6);
}

// ---- the printer's choices ----------------------------------------------

TEST(Uir, PrinterInlinesWhereTypingGivesTheDtypeBack) {
  Ctx c;
  uopc_node *h1 = uopc_const_f(c, UOPC_DT_F16, 1.5), *h2 = uopc_const_f(c, UOPC_DT_F16, 2.0);
  // f16 constants with no node sibling: the first gets a line
  EXPECT_EQ(print(c, uopc_add(c, h1, h2)), "%0 = const 1.5 : dtype=f16\n%1 = add %0, 2.0\n");
  // a constant root gets a line
  EXPECT_EQ(print(c, uopc_const_i(c, UOPC_DT_I32, 5)), "%0 = const 5 : dtype=i32\n");
  EXPECT_EQ(print(c, uopc_const_f(c, UOPC_DT_F32, 2)), "%0 = const 2.0 : dtype=f32\n");
  // an integral f32 constant inline is written as a float
  uopc_node *f2 = uopc_const_f(c, UOPC_DT_F32, 2), *f3 = uopc_const_f(c, UOPC_DT_F32, 3);
  EXPECT_EQ(print(c, uopc_add(c, f2, f3)), "%0 = add 2.0, 3.0\n");
  // i32 constants in a STACK of constants only
  uopc_node *is[] = {uopc_const_i(c, UOPC_DT_I32, 1), uopc_const_i(c, UOPC_DT_I32, -2)};
  EXPECT_EQ(print(c, uopc_stack(c, is, 2)), "%0 = stack 1, -2\n");
  // a constant used in two places: inline where possible, a line elsewhere
  uopc_node *hp = uopc_param(c, 0, UOPC_DT_F16, nullptr, 0);
  uopc_node *both[] = {uopc_add(c, hp, h1), uopc_add(c, h1, h2)};
  uopc_node *st = uopc_stack(c, both, 2);
  EXPECT_EQ(print(c, st),
            "%0 = param : slot=0 dtype=f16\n%1 = const 1.5 : dtype=f16\n%2 = add %0, 1.5\n%3 = add %1, 2.0\n"
            "%4 = stack %2, %3\n");
  ExpectRoundTrip(c, st);
  // a STORE value keeps its spelling: an f16 value needs a line
  uopc_node *buf = uopc_buffer(c, 0, UOPC_DT_F16, 4), *zero = uopc_const_i(c, UOPC_DT_I32, 0);
  uopc_node *s16 = uopc_store(c, uopc_index(c, buf, &zero, 1), h1);
  EXPECT_EQ(print(c, s16),
            "%0 = buffer : slot=0 dtype=f16 shape=(4,)\n%1 = index %0, 0\n%2 = const 1.5 : dtype=f16\n"
            "%3 = store %1, %2\n");
  ExpectRoundTrip(c, s16);
  // call names: bare, or quoted when they are not [A-Za-z0-9_]+
  uopc_node *p0 = uopc_param(c, 0, UOPC_DT_I32, nullptr, 0), *seven = uopc_const_i(c, UOPC_DT_I32, 7);
  uopc_node *cl = uopc_call(c, p0, &seven, 1, "a \"b\"\\\x01\xff");
  EXPECT_EQ(print(c, cl), "%0 = param : slot=0 dtype=i32\n%1 = call %0, 7 : name=\"a \\\"b\\\"\\\\\\x01\\xff\"\n");
  ExpectRoundTrip(c, cl);
  ExpectRoundTrip(c, uopc_call(c, p0, &seven, 1, "9x"));
  ExpectRoundTrip(c, uopc_call(c, p0, &seven, 1, nullptr));
}

TEST(Uir, SpecialFloatConstantsRoundTrip) {
  Ctx c;
  const double vals[] = {0.0,      -0.0,    NAN,    INFINITY, -INFINITY, 5e-324,  -5e-324, 1e308, 1.7976931348623157e308,
                         1e-300,   0.1,     1.0 / 3, 2.0,      1e16,      1e-5,    65504,   65520, 3.4028235677973366e38,
                         1e39,     1.5e-45, 0x1p-24, 0x1p-25, 123456789.0, -2.5e-3, 1e15,    9007199254740993.0};
  for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_F16})
    for (double v : vals) {
      SCOPED_TRACE(fmt_d(v));
      uopc_node *k = uopc_const_f(c, t, v);
      ExpectRoundTrip(c, k);  // a const line
      uopc_node *p = uopc_param(c, 0, t, nullptr, 0);
      ExpectRoundTrip(c, uopc_add(c, p, k));  // inline next to a node
      ExpectRoundTrip(c, uopc_add(c, k, k));  // among constants only
    }
  for (int64_t v : {(int64_t)INT32_MIN, (int64_t)INT32_MAX, (int64_t)0, (int64_t)-1}) {
    uopc_node *k = uopc_const_i(c, UOPC_DT_I32, v);
    ExpectRoundTrip(c, k);
    ExpectRoundTrip(c, uopc_add(c, k, k));
  }
  uopc_node *t = uopc_const_i(c, UOPC_DT_BOOL, 1), *f = uopc_const_i(c, UOPC_DT_BOOL, 0);
  ExpectRoundTrip(c, t);
  ExpectRoundTrip(c, uopc_where(c, t, f, t));
}

// ---- random graphs: parse(print(g)) == g -------------------------------

struct Gen {
  uopc_ctx *c;
  std::mt19937_64 rng;
  std::vector<uopc_node *> pool;  // values
  std::vector<uopc_node *> effects;
  int next_idx = 0;

  Gen(uopc_ctx *c_, uint64_t seed) : c(c_), rng(seed) {}

  uint64_t r(uint64_t n) { return n ? rng() % n : 0; }
  bool coin(int pct) { return r(100) < (uint64_t)pct; }

  double rand_double() {
    static const double special[] = {0.0, -0.0, NAN,  INFINITY, -INFINITY, 5e-324, 1e308, -1e-300, 0.1,
                                     0.5, 2.0,  1e16, 1e-5,     65504,     65520,  1e-8,  3.0,     -7.25};
    if (coin(50)) return special[r(sizeof special / sizeof special[0])];
    if (coin(50)) return (double)(int64_t)(r(2001)) - 1000.0;
    uint64_t bits = rng();
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;  // anything, NaN payloads included (they are all one NaN)
  }

  int64_t rand_i32() {
    static const int64_t special[] = {0, 1, -1, 2, INT32_MIN, INT32_MAX, 7, 100};
    if (coin(50)) return special[r(8)];
    return (int64_t)(int32_t)(uint32_t)rng();
  }

  uopc_dtype rand_dtype() { return (uopc_dtype)r(4); }

  uopc_node *konst(uopc_dtype t) {
    if (t == UOPC_DT_BOOL) return uopc_const_i(c, t, (int64_t)r(2));
    if (t == UOPC_DT_I32) return uopc_const_i(c, t, rand_i32());
    return uopc_const_f(c, t, rand_double());
  }

  std::vector<int32_t> rand_shape() {
    static const std::vector<std::vector<int32_t>> shapes = {{}, {}, {2}, {3}, {1}, {2, 3}, {1, 3}, {3, 1, 2}};
    return shapes[r(shapes.size())];
  }

  uopc_node *pick() { return pool[r(pool.size())]; }
  // a value like x (same dtype and shape); for scalars often a fresh constant
  uopc_node *like(uopc_node *x) {
    if (x->ndim == 0 && coin(40)) return konst((uopc_dtype)x->dtype);
    std::vector<uopc_node *> m;
    for (uopc_node *u : pool)
      if (u->dtype == x->dtype && u->ndim == x->ndim && std::equal(u->shape, u->shape + u->ndim, x->shape)) m.push_back(u);
    return m.empty() ? x : m[r(m.size())];
  }
  uopc_node *pick_where(bool (*ok)(uopc_node *)) {
    std::vector<uopc_node *> m;
    for (uopc_node *u : pool)
      if (ok(u)) m.push_back(u);
    return m.empty() ? nullptr : m[r(m.size())];
  }
  uopc_node *scalar_i32() {
    uopc_node *u = pick_where([](uopc_node *x) { return x->dtype == UOPC_DT_I32 && x->ndim == 0; });
    return u && coin(50) ? u : konst(UOPC_DT_I32);
  }

  void add(uopc_node *u) {
    if (u) pool.push_back(u);
    uopc_ctx_clear_error(c);
  }

  void step() {
    static const uopc_op bin[] = {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX, UOPC_OP_CMPLT, UOPC_OP_CMPNE, UOPC_OP_FLOORDIV, UOPC_OP_FLOORMOD};
    static const uopc_op un[] = {UOPC_OP_RECIP, UOPC_OP_EXP2, UOPC_OP_LOG2, UOPC_OP_SQRT, UOPC_OP_SIN};
    switch (r(17)) {
    case 0: add(konst(rand_dtype())); break;
    case 1: {
      auto s = rand_shape();
      add(uopc_param(c, (int64_t)r(3), rand_dtype(), s.data(), (uint32_t)s.size()));
      break;
    }
    case 2:
    case 3: {
      uopc_node *a = pick(), *b = like(a);
      if (coin(50)) std::swap(a, b);
      add(uopc_alu2(c, bin[r(7)], a, b));
      break;
    }
    case 4: add(uopc_alu1(c, un[r(5)], pick())); break;
    case 5: add(uopc_cast(c, pick(), rand_dtype())); break;
    case 6: {
      uopc_node *a = pick();
      uopc_node *cond = a->ndim == 0 ? konst(UOPC_DT_BOOL) : uopc_lt(c, a, like(a));
      if (coin(30) && a->ndim == 0) cond = uopc_param(c, 5, UOPC_DT_BOOL, nullptr, 0);
      add(uopc_where(c, cond, coin(50) ? a : like(a), like(a)));
      break;
    }
    case 7: {
      uopc_node *a = pick();
      std::vector<uopc_node *> s{a};
      for (uint64_t i = 0, n = r(4); i < n; i++) s.push_back(like(a));
      if (coin(30)) std::swap(s[0], s[s.size() - 1]);
      add(uopc_stack(c, s.data(), (uint32_t)s.size()));
      break;
    }
    case 8: {
      uopc_node *x = pick();
      std::vector<uopc_node *> idx;
      for (uint64_t i = 0, n = r((uint64_t)x->ndim + 1); i < n; i++) idx.push_back(coin(60) ? uopc_const_i(c, UOPC_DT_I32, (int64_t)r(2)) : scalar_i32());
      add(uopc_index(c, x, idx.data(), (uint32_t)idx.size()));
      break;
    }
    case 9: {  // CALL: arguments shaped like the body's params
      uopc_node *body = pick();
      uint32_t np = 0;
      uopc_node **ps = uopc_call_params(c, body, &np);
      int64_t k = 0;
      for (uint32_t i = 0; i < np; i++) k = std::max<int64_t>(k, ps[i]->arg.i + 1);
      std::vector<uopc_node *> args((size_t)k, nullptr);
      for (uint32_t i = 0; i < np; i++) args[(size_t)ps[i]->arg.i] = like(ps[i]);
      for (auto &a : args)
        if (!a) a = konst(rand_dtype());
      uopc_mem_free(c, ps, np * sizeof *ps);
      static const char *names[] = {nullptr, "f", "sq", "two words", "q\"uote", "x9_"};
      add(uopc_call(c, body, args.data(), (uint32_t)args.size(), names[r(6)]));
      break;
    }
    case 10: {  // RESHAPE
      uopc_node *x = pick();
      int64_t n = uopc_numel(x);
      std::vector<int32_t> s;
      if (coin(50)) s = {(int32_t)n};
      else if (coin(50)) s = {1, (int32_t)n};
      else if (n == 1) s = {};
      else s = {(int32_t)n, 1};
      add(uopc_reshape(c, x, s.data(), (uint32_t)s.size()));
      break;
    }
    case 11: {  // EXPAND
      uopc_node *x = pick();
      std::vector<int32_t> s(x->shape, x->shape + x->ndim);
      for (auto &d : s)
        if (d == 1 && coin(70)) d = 1 + (int32_t)r(3);
      add(uopc_expand(c, x, s.data(), (uint32_t)s.size()));
      break;
    }
    case 12: {  // PERMUTE
      uopc_node *x = pick();
      std::vector<int32_t> p(x->ndim);
      for (uint32_t i = 0; i < x->ndim; i++) p[i] = (int32_t)i;
      std::shuffle(p.begin(), p.end(), rng);
      add(uopc_permute(c, x, p.data(), x->ndim));
      break;
    }
    case 13: {  // SHRINK
      uopc_node *x = pick();
      std::vector<int32_t> b;
      for (uint32_t i = 0; i < x->ndim; i++) {
        int32_t lo = (int32_t)r((uint64_t)x->shape[i]);
        int32_t hi = lo + 1 + (int32_t)r((uint64_t)(x->shape[i] - lo));
        b.push_back(lo);
        b.push_back(hi);
      }
      add(uopc_shrink(c, x, b.data(), x->ndim));
      break;
    }
    case 14: {  // REDUCE
      uopc_node *x = pick();
      static const uopc_op rops[] = {UOPC_OP_ADD, UOPC_OP_MUL, UOPC_OP_MAX};
      add(uopc_reduce(c, x, rops[r(3)], 1 + (int64_t)r(x->ndim ? x->ndim : 1)));
      break;
    }
    default: {  // a kernel: buffer, ranges, index arithmetic, load, store, end
      uopc_dtype t = rand_dtype();
      uopc_node *in = uopc_buffer(c, (int64_t)r(2), t, 12), *out = uopc_buffer(c, 2, t, 12);
      uopc_node *i = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 3), next_idx++);
      uopc_node *j = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 4), next_idx++);
      uopc_node *flat = uopc_add(c, uopc_mul_k(c, i, 4), j);
      uopc_node *src = coin(50) ? flat : uopc_mod_k(c, uopc_add_k(c, flat, 1), 12);
      uopc_node *v = uopc_load(c, uopc_index(c, in, &src, 1));
      if (coin(50)) v = uopc_alu2(c, UOPC_OP_MAX, v, like(v));
      uopc_node *st = uopc_store(c, uopc_index(c, out, &flat, 1), coin(30) ? konst(t) : v);
      uopc_node *rs[] = {i, j};
      uopc_node *e = uopc_end(c, st, rs, coin(50) ? 2 : 1);
      if (e) effects.push_back(e);
      uopc_ctx_clear_error(c);
      add(v);
    }
    }
  }
};

TEST(Uir, RandomGraphsRoundTrip) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 150; seed++) {
    Ctx c;
    Gen g(c, seed);
    g.add(uopc_param(c, 0, UOPC_DT_I32, nullptr, 0));
    for (int i = 0; i < 60; i++) g.step();
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (uopc_node *u : g.pool) {
      ExpectRoundTrip(c, u);
      checked++;
      if (HasFatalFailure()) return;
    }
    // one root over everything: a STACK of same-shaped values, a SINK of effects
    if (!g.effects.empty()) {
      ExpectRoundTrip(c, uopc_sink(c, g.effects.data(), (uint32_t)g.effects.size()));
      checked++;
    }
  }
  EXPECT_GT(checked, 5000);
}

// ---- errors ---------------------------------------------------------------

struct Bad {
  const char *text;
  int line, col;
  const char *msg;  // a substring of the message
};

TEST(Uir, ErrorsPointAtTheOffendingToken) {
  const Bad cases[] = {
      {"%a = frob 1\n", 1, 6, "unknown op 'frob'"},
      {"%a = add %b, 1\n", 1, 10, "undefined name %b"},
      {"%a = add %a, 1\n", 1, 10, "undefined name %a"},
      {"%a = add 1, 2\n%a = add 1, 3\n", 2, 1, "%a is already defined on line 1"},
      {"%a = add 1\n", 1, 6, "ADD takes 2 operands, got 1"},
      {"%a = add 1, 2, 3\n", 1, 6, "ADD takes 2 operands, got 3"},
      {"%a = const 1, 2 : dtype=i32\n", 1, 6, "CONST takes 1 operand, got 2"},
      {"%a = add 1, 2.0\n", 1, 6, "ADD dtype mismatch i32 vs f32"},
      {"%x = param : slot=0 dtype=i32\n%a = add %x, 2.5\n", 2, 14, "float literal where an i32 is needed"},
      {"%x = param : slot=0 dtype=i32\n%a = add %x, True\n", 2, 14, "bool literal where a number"},
      {"%x = param : slot=0 dtype=f32\n%a = add %x, False\n", 2, 14, "bool literal where a number"},
      {"%x = param : slot=0 dtype=bool\n%a = add %x, 1\n", 2, 14, "number literal where a bool is needed"},
      {"%a = where 1, 2, 3\n", 1, 12, "number literal where a bool is needed"},
      {"%a = const 1.5 : dtype=i32\n", 1, 12, "float literal where an i32 is needed"},
      {"%a = const 1 : dtype=bool\n", 1, 12, "number literal where a bool is needed"},
      {"%a = index 1, 2.0\n", 1, 15, "float literal where an i32 is needed"},
      {"%a = add 2147483648, 1\n", 1, 10, "out of the i32 range"},
      {"%a = add -2147483649, 1\n", 1, 10, "out of the i32 range"},
      {"%a = reshape 1, (2147483648,)\n", 1, 18, "out of the i32 range"},
      {"%a = param : slot=99999999999 dtype=i32\n", 1, 19, "out of the i32 range"},
      {"%a = add 1e400, 1.0\n", 1, 10, "too large for a double"},
      {"%a = add 1, 99999999999999999999999999999999999999\n", 1, 13, "out of the i32 range"},
      {"%a = reshape 1, (1, 2\n", 1, 22, "expected ',' or ')' in a tuple, found the end of the line"},
      {"%a = reshape 1, ((1,),)\n", 1, 18, "found a nested tuple"},
      {"%a = reshape 1, (1.5,)\n", 1, 18, "expected an integer"},
      {"%a = shrink 1, (1, 2)\n", 1, 17, "expected a (begin, end) pair"},
      {"%a = shrink 1, ((0 1))\n", 1, 20, "expected ',' in a (begin, end) pair"},
      {"%a = add (1,), 2\n", 1, 10, "unexpected tuple"},
      {"%a = reshape 1, 2\n", 1, 17, "RESHAPE needs a tuple as its second operand"},
      {"%a = param : slot=0 dtype=i32 slot=1\n", 1, 31, "repeated attribute 'slot'"},
      {"%a = param : slot=0 dtype=i32 size=1\n", 1, 31, "unknown attribute 'size'"},
      {"%a = param : slot=0\n", 1, 6, "PARAM needs the attribute dtype="},
      {"%a = add 1, 2 : dtype=i32\n", 1, 17, "ADD takes no attribute 'dtype'"},
      {"%a = param : slot=0 dtype=i64\n", 1, 27, "unknown dtype 'i64'"},
      {"%a = param : slot=0 dtype=void\n", 1, 27, "unknown dtype 'void'"},
      {"%a = stack 1 : op=foo\n", 1, 16, "STACK takes no attribute 'op'"},
      {"%x = param : slot=0 dtype=f32 shape=(3,)\n%a = reduce %x : op=where pop=1\n", 2, 6, "REDUCE op must be"},
      {"%x = param : slot=0 dtype=f32 shape=(3,)\n%a = reduce %x : op=frob pop=1\n", 2, 21, "unknown op 'frob'"},
      {"%a = add 1, 2 :\n", 1, 16, "expected an attribute after ':'"},
      {"%a = add 1,\n", 1, 12, "expected an operand"},
      {"%a = add 1 2\n", 1, 12, "expected ',' or ':' or the end of the line"},
      {"a = add 1, 2\n", 1, 1, "expected %NAME at the start of a line"},
      {"%a add 1, 2\n", 1, 4, "expected '=' after the name"},
      {"%a = 1\n", 1, 6, "expected an opcode"},
      {"% = add 1, 2\n", 1, 1, "expected a name after '%'"},
      {"%a = add 12x, 1\n", 1, 10, "malformed number '12x'"},
      {"%a = add 1e, 1\n", 1, 10, "malformed number"},
      {"%a = add 1.5.2, 1\n", 1, 10, "malformed number"},
      {"%a = add foo, 1\n", 1, 10, "unexpected 'foo'"},
      {"%a = add -foo, 1\n", 1, 10, "unexpected '-foo'"},
      {"%a = add 1, 2 $\n", 1, 15, "unexpected character '$'"},
      {"%a = add 1, \x01\n", 1, 13, "unexpected character '\\x01'"},
      {"%a = add 1, 2\n%b = add \xff\xfe, 1\n", 2, 10, "unexpected character '\\xff'"},
      {"%x = param : slot=0 dtype=i32\n%a = call %x, 1 : name=\"abc\n", 2, 24, "unterminated string"},
      {"%x = param : slot=0 dtype=i32\n%a = call %x, 1 : name=\"a\\qb\"\n", 2, 26, "bad escape"},
      {"%x = param : slot=0 dtype=i32\n%a = call %x, 1 : name=\"a\\x00\"\n", 2, 26, "NUL byte"},
      {"%x = param : slot=0 dtype=i32\n%a = call %x, 1 : name=!\n", 2, 24, "expected a name"},
      {"%x = param : slot=0 dtype=i32 shape=(2,)\n%y = param : slot=1 dtype=i32 shape=(3,)\n%a = add %x, %y\n", 3, 6,
       "ADD shape mismatch (2,) vs (3,)"},
      {"%x = param : slot=0 dtype=i32 shape=(0,)\n", 1, 6, "PARAM dim 0 is 0"},
      {"%a = reshape 1, (2,)\n", 1, 6, "changes the element count"},
      {"%x = param : slot=0 dtype=i32\n%a = call %x\n", 2, 6, "CALL body uses PARAM slot 0"},
      {"", 0, 0, "empty program"},
      {"# nothing\n\n   \n", 0, 0, "empty program"},
      {"%a = add 1, 2\n\n# fine\n%b = add 1, %c # c\n", 4, 13, "undefined name %c"},
      {"\t%a\t=\tadd 1,\t%b\n", 1, 14, "undefined name %b"},
      {"%a = add 1, 2\r\n%b = add %a, %z\r\n", 2, 14, "undefined name %z"},
      {"%a = add 1,\r\n", 1, 12, "expected an operand, found the end of the line"},
  };
  for (const Bad &b : cases) {
    SCOPED_TRACE(b.text);
    Ctx c;
    uopc_error e;
    uopc_node *u = parse(c, b.text, &e);
    EXPECT_EQ(u, nullptr);
    EXPECT_EQ(e.line, b.line);
    EXPECT_EQ(e.col, b.col);
    EXPECT_NE(std::string(e.msg).find(b.msg), std::string::npos) << "message: " << e.msg;
    EXPECT_STREQ(e.file, "t.uir");
    EXPECT_EQ(uopc_ctx_error(c), nullptr);  // the context's slot is left as it was
  }
}

TEST(Uir, NulBytesAndTheLengthArgument) {
  Ctx c;
  uopc_error e;
  std::string s = std::string("%a = add 1, 2\n%b = add %a,") + '\0' + " 3\n";
  EXPECT_EQ(parse(c, s, &e), nullptr);
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.col, 13);
  EXPECT_NE(std::string(e.msg).find("NUL"), std::string::npos);
  // a NUL inside a comment is an error too
  EXPECT_EQ(parse(c, std::string("%a = add 1, 2 # x") + '\0' + "\n", &e), nullptr);
  EXPECT_EQ(e.col, 18);
  // the text need not be NUL-terminated: only len bytes are read
  const char text[] = "%a = add 1, 2\n%b = add %a, 3\nGARBAGE";
  uopc_node *u = uopc_uir_parse(c, text, sizeof text - 1 - 7, "t.uir", &e);
  ASSERT_NE(u, nullptr) << e.msg;
  EXPECT_EQ(u->op, UOPC_OP_ADD);
  // a last line without '\n' counts
  u = parse(c, "%a = add 1, 2");
  ASSERT_NE(u, nullptr);
}

TEST(Uir, ContextErrorIsLeftAsTheCallerHadIt) {
  Ctx c;
  uopc_fail(c, UOPC_ERR_ARG, "earlier problem");
  uopc_error e;
  EXPECT_NE(parse(c, "%a = add 1, 2\n", &e), nullptr);
  ASSERT_NE(uopc_ctx_error(c), nullptr);
  EXPECT_STREQ(uopc_ctx_error(c)->msg, "earlier problem");
  EXPECT_EQ(parse(c, "%x = param : slot=0 dtype=i32 shape=(2,)\n%a = add %x, (1,)\n", &e), nullptr);
  EXPECT_STREQ(uopc_ctx_error(c)->msg, "earlier problem");
  // a refused node is reported with the core's message, not the earlier one
  EXPECT_EQ(parse(c, "%a = add 1, 2.0\n", &e), nullptr);
  EXPECT_STREQ(e.msg, "ADD dtype mismatch i32 vs f32");
}

TEST(Uir, ParseFileErrors) {
  Ctx c;
  uopc_error e;
  EXPECT_EQ(uopc_uir_parse_file(c, "/nonexistent/x.uir", &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_IO);
  EXPECT_EQ(e.line, 0);
  EXPECT_STREQ(e.file, "/nonexistent/x.uir");
  EXPECT_EQ(uopc_uir_parse_file(c, "/", &e), nullptr);  // a directory
  EXPECT_EQ(e.code, UOPC_ERR_IO);
}

// Hostile input: no crash, an error, and quickly.
TEST(Uir, HostileInputIsRejected) {
  Ctx c;
  uopc_error e;
  auto t0 = std::chrono::steady_clock::now();
  // deep tuples
  EXPECT_EQ(parse(c, "%a = reshape 1, " + std::string(1000000, '(') + "\n", &e), nullptr);
  EXPECT_EQ(e.col, 18);
  EXPECT_EQ(parse(c, "%a = shrink 1, " + std::string(1000000, '(') + "\n", &e), nullptr);
  // a tuple longer than any shape
  std::string longtup = "%a = reshape 1, (";
  for (int i = 0; i < 100000; i++) longtup += "1, ";
  EXPECT_EQ(parse(c, longtup + ")\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("more than 64"), std::string::npos);
  // a huge integer and a huge float literal
  EXPECT_EQ(parse(c, "%a = add 1, " + std::string(1000000, '9') + "\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("i32 range"), std::string::npos);
  uopc_node *u = parse(c, "%a = add 1.0, 0." + std::string(1000000, '3') + "\n", &e);
  ASSERT_NE(u, nullptr) << e.msg;
  EXPECT_EQ(u->src[1]->arg.f, 1.0 / 3);
  u = parse(c, "%a = add 1.0, " + std::string(400000, '1') + ".5e-400000\n", &e);
  ASSERT_NE(u, nullptr) << e.msg;
  EXPECT_EQ(u->src[1]->arg.f, 1.0 / 9);
  EXPECT_EQ(parse(c, "%a = add 1.0, 1" + std::string(400, '0') + ".0\n", &e), nullptr);
  EXPECT_EQ(parse(c, "%a = add 1.0, 1e99999999999999999999999999\n", &e), nullptr);
  u = parse(c, "%a = add 1.0, 1e-99999999999999999999999999\n", &e);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->src[1]->arg.f, 0.0);
  // a very long line and a very long name
  std::string name(1000000, 'n');
  u = parse(c, "%" + name + " = add 1, 2\n%b = mul %" + name + ", 3" + std::string(1000000, ' ') + "# " +
                   std::string(1000000, 'c') + "\n",
            &e);
  ASSERT_NE(u, nullptr) << e.msg;
  EXPECT_EQ(parse(c, "%a = add 1, %" + name + "\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("..."), std::string::npos);  // names in messages are cut
  // random bytes
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; i++) {
    std::string s(rng() % 200, '\0');
    for (auto &ch : s) ch = (char)(rng() % 256);
    if (i % 2) s = "%a = add " + s;
    EXPECT_EQ(parse(c, s, &e), nullptr);
    EXPECT_NE(e.msg[0], '\0');
  }
  // every prefix of a real program: either a program or an error, never a crash
  std::string prog = read_file(std::string(UOPC_SOURCE_DIR) + "/examples/copy_kernel.uir");
  for (size_t n = 0; n <= prog.size(); n++) {
    uopc_node *v = parse(c, prog.substr(0, n), &e);
    if (!v) EXPECT_GE(e.line, 0);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 30.0);
}

// The name table keeps where a name starts and its node's id, not the name:
// names that are prefixes of one another, names only the table's growth
// moves, the same node under two names, CRLF lines, and the line of a
// name defined twice counted from the text.
TEST(Uir, NamesArePrefixesOfOneAnother) {
  Ctx c;
  std::string t = "%x = param : slot=0 dtype=i32\r\n# a comment\n\n";
  const char *base[] = {"a", "a1", "a_", "a1b", "_", "A", "a10"};
  for (int k = 0; k < 3000; k++) {
    // base_k: the digits after the last '_', so no two names are the same
    std::string n = std::string(base[k % 7]) + (k < 7 ? "" : "_" + std::to_string(k));
    t += "%" + n + " = add %x, " + std::to_string(k) + "\r\n";
  }
  // refer back to each of them by name, in the opposite order
  t += "%s0 = add %a, %a1\n%s1 = add %s0, %a_\n%s2 = add %s1, %a1b\n%s3 = add %s2, %_\n%s4 = add %s3, %A\n";
  t += "%s5 = add %s4, %a10\n%s6 = add %s5, %a_2996\n%twin = add %x, 5\n%s7 = add %s6, %twin\n";
  uopc_error e;
  uopc_node *u = parse(c, t, &e);
  ASSERT_NE(u, nullptr) << e.msg << " at " << e.line << ":" << e.col;
  // s7 = ((((((((x+0)+(x+1))+(x+2))+(x+3))+(x+4))+(x+5))+(x+6))+(x+2996))+(x+5): %twin is %A's node
  std::vector<int64_t> want = {5, 2996, 6, 5, 4, 3, 2, 1, 0};
  uopc_node *v = u;
  for (size_t k = 0; k + 1 < want.size(); k++) {
    ASSERT_EQ(v->op, UOPC_OP_ADD);
    ASSERT_EQ(v->src[1]->op, UOPC_OP_ADD) << k;
    EXPECT_EQ(v->src[1]->src[1]->arg.i, want[k]) << k;
    v = v->src[0];
  }
  EXPECT_EQ(v->src[1]->arg.i, 0);
  // defined twice: the line of the first definition, CRLF and comment lines counted
  EXPECT_EQ(parse(c, t + "%a1b = add %x, 1\n", &e), nullptr);
  EXPECT_EQ(e.line, 3000 + 3 + 10);
  EXPECT_NE(std::string(e.msg).find("%a1b is already defined on line 7"), std::string::npos) << e.msg;
  EXPECT_EQ(parse(c, t + "%a_2996 = add %x, 1\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("already defined on line 3000"), std::string::npos) << e.msg;
  // a name that is a prefix of a defined one, or extends one, is not defined
  EXPECT_EQ(parse(c, t + "%q = add %a_29, 1\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("undefined name %a_29"), std::string::npos) << e.msg;
  EXPECT_EQ(parse(c, t + "%q = add %a_29960, 1\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("undefined name %a_29960"), std::string::npos) << e.msg;
  EXPECT_EQ(parse(c, t + "%q = add %a1b_, 1\n", &e), nullptr);
  EXPECT_NE(std::string(e.msg).find("undefined name %a1b_"), std::string::npos) << e.msg;
}

// The name table's offsets are 32 bits: a text of 4 GiB or more is refused
// with a message, before any of it is read.
TEST(Uir, TextOf4GiBIsRefused) {
  Ctx c;
  uopc_error e;
  const char text[] = "%a = add 1, 2\n";
  EXPECT_EQ(uopc_uir_parse(c, text, (size_t)UINT32_MAX, "big.uir", &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_SYNTAX);
  EXPECT_NE(std::string(e.msg).find("at most 4294967294"), std::string::npos) << e.msg;
  EXPECT_NE(uopc_uir_parse(c, text, sizeof text - 1, "small.uir", &e), nullptr);
}

std::string write_to_string(uopc_ctx *c, uopc_node *u, int *rc) {
  FILE *f = tmpfile();
  if (!f) return "<no tmpfile>";
  *rc = uopc_uir_write(c, u, f);
  std::string r;
  rewind(f);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.append(buf, n);
  fclose(f);
  return r;
}

// uopc_uir_write writes what uopc_uir_print returns, in pieces, for small
// graphs and for one whose text is many times the 64 KiB piece.
TEST(Uir, WriteIsPrint) {
  Ctx c;
  for (const char *ex : {"copy_kernel.uir", "movement_reduce.uir", "mul_add.uir", "nested_calls.uir", "where.uir"}) {
    std::string text = read_file(std::string(UOPC_SOURCE_DIR) + "/examples/" + ex);
    ASSERT_FALSE(text.empty()) << ex;
    uopc_error e;
    uopc_node *u = parse(c, text, &e);
    ASSERT_NE(u, nullptr) << ex << ": " << e.msg;
    int rc = -1;
    EXPECT_EQ(write_to_string(c, u, &rc), print(c, u)) << ex;
    EXPECT_EQ(rc, 0);
  }
  std::string t = "%v0 = param : slot=0 dtype=f32\n";
  for (int k = 1; k <= 30000; k++)
    t += "%v" + std::to_string(k) + " = mul %v" + std::to_string(k - 1) + ", " + std::to_string(k % 9) + ".5\n";
  uopc_node *u = parse(c, t);
  ASSERT_NE(u, nullptr);
  int rc = -1;
  std::string w = write_to_string(c, u, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_GT(w.size(), 8u * 64 * 1024);
  EXPECT_EQ(w, print(c, u));
  EXPECT_EQ(parse(c, w), u);
}

TEST(Uir, WriteErrors) {
  Ctx c, other;
  uopc_node *u = parse(c, "%a = add 1, 2\n");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(uopc_uir_write(c, u, nullptr), -1);
  ASSERT_NE(uopc_ctx_error(c), nullptr);
  EXPECT_EQ(uopc_ctx_error(c)->code, UOPC_ERR_ARG);
  uopc_ctx_clear_error(c);
  EXPECT_EQ(uopc_uir_write(other, u, stdout), -1);  // a node of another context
  ASSERT_NE(uopc_ctx_error(other), nullptr);
  EXPECT_EQ(uopc_ctx_error(other)->code, UOPC_ERR_ARG);
  EXPECT_EQ(uopc_uir_write(nullptr, u, stdout), -1);
  // a stream that cannot be written
  FILE *ro = fopen("/dev/null", "r");
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ(uopc_uir_write(c, u, ro), -1);
  fclose(ro);
  ASSERT_NE(uopc_ctx_error(c), nullptr);
  EXPECT_EQ(uopc_ctx_error(c)->code, UOPC_ERR_IO);
  EXPECT_NE(std::string(uopc_ctx_error(c)->msg).find("uir_write: cannot write"), std::string::npos);
  // out of memory: an error, no leak, and nothing written
  std::string prog = read_file(std::string(UOPC_SOURCE_DIR) + "/examples/copy_kernel.uir");
  int ok_runs = 0;
  for (long n = 0; n < 200; n++) {
    FailAlloc fa;
    uopc_alloc al = fa.alloc();
    uopc_ctx *d = uopc_ctx_new(&al);
    ASSERT_NE(d, nullptr);
    uopc_node *r = parse(d, prog);
    ASSERT_NE(r, nullptr);
    std::string want = print(d, r);
    fa.left = n;
    int rc = -1;
    std::string w = write_to_string(d, r, &rc);
    if (rc == 0) {
      ok_runs++;
      EXPECT_EQ(w, want);
    } else {
      EXPECT_EQ(w, "") << "with " << n << " allocations allowed";
      ASSERT_NE(uopc_ctx_error(d), nullptr);
      EXPECT_EQ(uopc_ctx_error(d)->code, UOPC_ERR_NOMEM);
    }
    uopc_ctx_free(d);
    EXPECT_EQ(fa.live, 0) << "leak with " << n << " allocations allowed";
  }
  EXPECT_GT(ok_runs, 0);
}

// ---- allocation failure ----------------------------------------------------

TEST(Uir, EveryAllocationFailureIsAnErrorWithoutLeaks) {
  std::string prog = read_file(std::string(UOPC_SOURCE_DIR) + "/examples/copy_kernel.uir") +
                     "%z = call %row, 1 : name=\"n m\"\n%w = stack 1.5, 2.5\n%y = shrink %w, ((0, 1),)\n";
  int ok_runs = 0;
  for (long n = 0; n < 400; n++) {
    FailAlloc fa;
    fa.left = n;
    uopc_alloc al = fa.alloc();
    uopc_ctx *c = uopc_ctx_new(&al);
    if (c) {
      uopc_error e;
      uopc_node *u = uopc_uir_parse(c, prog.data(), prog.size(), "t.uir", &e);
      if (!u) {
        EXPECT_EQ(e.code, UOPC_ERR_NOMEM) << e.msg;
      } else {
        char *s = uopc_uir_print(c, u);
        if (s) {
          uopc_mem_free(c, s, strlen(s) + 1);
          char *v = uopc_value_print(c, u);
          if (v) uopc_mem_free(c, v, strlen(v) + 1);
          ok_runs++;
        } else {
          ASSERT_NE(uopc_ctx_error(c), nullptr);
          EXPECT_EQ(uopc_ctx_error(c)->code, UOPC_ERR_NOMEM);
        }
      }
      uopc_ctx_free(c);
    }
    EXPECT_EQ(fa.live, 0) << "leak with " << n << " allocations allowed";
  }
  EXPECT_GT(ok_runs, 0);
}

// ---- numbers ----------------------------------------------------------------

TEST(Uir, FormatDoubleIsPythonRepr) {
  const std::pair<double, const char *> cases[] = {
      {0.1, "0.1"},
      {0.30000000000000004, "0.30000000000000004"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1.0 / 3, "0.3333333333333333"},
      {2.0, "2.0"},
      {-2.0, "-2.0"},
      {100.0, "100.0"},
      {0.5, "0.5"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {9007199254740992.0, "9007199254740992.0"},
      {1e-4, "0.0001"},
      {1e-5, "1e-05"},
      {1.5e-7, "1.5e-07"},
      {0.00012, "0.00012"},
      {5e-324, "5e-324"},
      {-5e-324, "-5e-324"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {1e308, "1e+308"},
      {1e22, "1e+22"},
      {1e23, "1e+23"},
      {8.41e21, "8.41e+21"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {INFINITY, "inf"},
      {-INFINITY, "-inf"},
      {NAN, "nan"},
      {-NAN, "nan"},
      {0x1p-1074 * 3, "1.5e-323"},
      {4.35, "4.35"},
      {-2.5e-3, "-0.0025"},
      {1234.5678, "1234.5678"},
      {0x1p60, "1.152921504606847e+18"},
      {0x1p-20, "9.5367431640625e-07"},
  };
  for (auto &c : cases) EXPECT_EQ(fmt_d(c.first), c.second) << c.second;
}

TEST(Uir, FormatScalarAtTheDtypesPrecision) {
  const struct {
    double v;
    uopc_dtype t;
    const char *s;
  } cases[] = {
      {0.1, UOPC_DT_F32, "0.1"},
      {0.30000001192092896, UOPC_DT_F32, "0.3"},
      {(double)(0.1f + 0.2f), UOPC_DT_F32, "0.3"},
      {0.3, UOPC_DT_F32, "0.3"},
      {2.0, UOPC_DT_F32, "2.0"},
      {1e16, UOPC_DT_F32, "1e+16"},
      {1e-5, UOPC_DT_F32, "1e-05"},
      {0.0001, UOPC_DT_F32, "0.0001"},
      {16777216.0, UOPC_DT_F32, "16777216.0"},
      {16777217.0, UOPC_DT_F32, "16777216.0"},
      {123456789.0, UOPC_DT_F32, "123456790.0"},
      {3.4028234663852886e38, UOPC_DT_F32, "3.4028235e+38"},
      {3.5e38, UOPC_DT_F32, "inf"},
      {0x1p-149, UOPC_DT_F32, "1e-45"},
      {0x1p-150, UOPC_DT_F32, "0.0"},
      {1.0 / 3, UOPC_DT_F32, "0.33333334"},
      {-0.0, UOPC_DT_F32, "-0.0"},
      {NAN, UOPC_DT_F32, "nan"},
      {-INFINITY, UOPC_DT_F32, "-inf"},
      {0x1p-126, UOPC_DT_F32, "1.1754944e-38"},
      {65504.0, UOPC_DT_F16, "65500.0"},  // 65500 reads back as 65504, the largest f16 (numpy agrees)
      {65519.0, UOPC_DT_F16, "65500.0"},
      {65520.0, UOPC_DT_F16, "inf"},
      {0.1, UOPC_DT_F16, "0.1"},
      {1.0 / 3, UOPC_DT_F16, "0.3333"},
      {2049.0, UOPC_DT_F16, "2048.0"},
      {2051.0, UOPC_DT_F16, "2052.0"},
      {0x1p-24, UOPC_DT_F16, "6e-08"},
      {0x1p-14, UOPC_DT_F16, "6.104e-05"},
      {1000.0, UOPC_DT_F16, "1000.0"},
      {4097.0, UOPC_DT_F16, "4096.0"},
      {0.0001, UOPC_DT_F16, "0.0001"},
      {-0.0, UOPC_DT_F16, "-0.0"},
      {1.0, UOPC_DT_BOOL, "True"},
      {0.0, UOPC_DT_BOOL, "False"},
      {-2147483648.0, UOPC_DT_I32, "-2147483648"},
      {2147483647.0, UOPC_DT_I32, "2147483647"},
      {0.0, UOPC_DT_I32, "0"},
  };
  for (auto &c : cases) EXPECT_EQ(fmt_s(c.v, c.t), c.s) << c.s;
}

// Shortest really is shortest, and reads back, on many values of each precision.
TEST(Uir, FormatReadsBackAndIsShortest) {
  std::mt19937_64 rng(3);
  // significant digits of a printed number
  auto digits = [](const std::string &s) {
    std::string m;
    for (char ch : s.substr(0, s.find('e')))
      if (ch >= '0' && ch <= '9') m += ch;
    size_t a = m.find_first_not_of('0'), b = m.find_last_not_of('0');
    return a == std::string::npos ? 0 : (int)(b - a + 1);
  };
  for (int i = 0; i < 20000; i++) {
    uint64_t bits = rng();
    double d;
    memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d) || d == 0) continue;
    for (uopc_dtype t : {UOPC_DT_F32, UOPC_DT_F16, UOPC_DT_VOID}) {
      int ex;
      double x = t == UOPC_DT_F32   ? uopc_round_f32(d)
                 : t == UOPC_DT_F16 ? uopc_round_f16(ldexp(frexp(d, &ex), (int)(rng() % 42) - 25))
                                 : d;
      if (!std::isfinite(x) || x == 0) continue;
      std::string s = t == UOPC_DT_VOID ? fmt_d(x) : fmt_s(x, t);
      double back = strtod(s.c_str(), nullptr);
      double br = t == UOPC_DT_F32 ? uopc_round_f32(back) : t == UOPC_DT_F16 ? uopc_round_f16(back) : back;
      ASSERT_EQ(br, x) << s;
      // one digit fewer never reads back
      int n = digits(s);
      if (n > 1) {
        char buf[64];
        bool found = false;
        for (int dir = -1; dir <= 1 && !found; dir++) {
          snprintf(buf, sizeof buf, "%.*e", n - 2, x);
          double y = strtod(buf, nullptr);
          // also try the neighbours of the rounded (n-1)-digit decimal
          double ulp = pow(10.0, floor(log10(fabs(y))) - (n - 2));
          double cand = y + dir * ulp;
          snprintf(buf, sizeof buf, "%.*e", n - 2, cand);
          double z = strtod(buf, nullptr);
          double zr = t == UOPC_DT_F32 ? uopc_round_f32(z) : t == UOPC_DT_F16 ? uopc_round_f16(z) : z;
          if (zr == x) found = true;
        }
        ASSERT_FALSE(found) << s << " is not the shortest (" << buf << ")";
      }
    }
  }
}

// ---- values -----------------------------------------------------------------

TEST(Uir, ValuePrint) {
  Ctx c;
  EXPECT_EQ(value(c, parse(c, "%a = stack 1, 2\n%b = stack 3, 4\n%c = stack %a, %b\n")), "[[1, 2], [3, 4]]");
  EXPECT_EQ(value(c, parse(c, "%a = stack 4.0, 8.0, 12.0\n")), "[4.0, 8.0, 12.0]");
  EXPECT_EQ(value(c, parse(c, "%a = const True : dtype=bool\n")), "True");
  EXPECT_EQ(value(c, parse(c, "%a = stack 0.1, 0.30000001192092896, -0.0, nan, inf, 1e16\n")),
            "[0.1, 0.3, -0.0, nan, inf, 1e+16]");
  EXPECT_EQ(value(c, parse(c, "%h = const 0.1 : dtype=f16\n%a = stack %h, 65519\n")), "[0.1, 65500.0]");
  EXPECT_EQ(value(c, parse(c, "%a = stack True, False\n%b = stack %a\n")), "[[True, False]]");
  EXPECT_EQ(value(c, parse(c, "%a = stack -2147483648\n")), "[-2147483648]");
  // stuck: the first op in pre-order that is not a value, upper case
  EXPECT_EQ(value(c, parse(c, "%p = param : slot=0 dtype=i32\n%a = stack 1, %p\n")),
            "<error: program did not evaluate to a value, stuck at PARAM>");
  uopc_ctx_clear_error(c);
  EXPECT_EQ(value(c, parse(c, "%a = add 1, 2\n%p = param : slot=0 dtype=i32\n%b = stack %a, %p\n")),
            "<error: program did not evaluate to a value, stuck at ADD>");
  EXPECT_EQ(uopc_ctx_error(c)->code, UOPC_ERR_EVAL);
  uopc_ctx_clear_error(c);
  // deep nesting is fine (no recursion)
  std::string s = "%v0 = stack 7\n";
  for (int i = 1; i < 60; i++) s += "%v" + std::to_string(i) + " = stack %v" + std::to_string(i - 1) + "\n";
  EXPECT_EQ(value(c, parse(c, s)), std::string(60, '[') + "7" + std::string(60, ']'));
}

// ---- scale: a million lines, on a small stack ---------------------------

struct Chain {
  std::string text;
  bool ok = false;
  double parse_s = 0, print_s = 0;
  std::string why;
};

void *run_chain(void *p) {
  Chain *ch = (Chain *)p;
  Ctx c;
  uopc_error e;
  auto t0 = std::chrono::steady_clock::now();
  uopc_node *u = uopc_uir_parse(c, ch->text.data(), ch->text.size(), "chain.uir", &e);
  auto t1 = std::chrono::steady_clock::now();
  if (!u) {
    ch->why = e.msg;
    return nullptr;
  }
  char *s = uopc_uir_print(c, u);
  auto t2 = std::chrono::steady_clock::now();
  if (!s) {
    ch->why = "print failed";
    return nullptr;
  }
  uopc_node *v = uopc_uir_parse(c, s, strlen(s), "printed.uir", &e);
  ch->ok = v == u && uopc_graph_size(c, u) == 1000000 + 7;  // + the constants 0..6
  if (!ch->ok) ch->why = v ? "different node" : e.msg;
  uopc_mem_free(c, s, strlen(s) + 1);
  ch->parse_s = std::chrono::duration<double>(t1 - t0).count();
  ch->print_s = std::chrono::duration<double>(t2 - t1).count();
  return nullptr;
}

TEST(Uir, MillionLineChainOnA256KiBStack) {
  Chain ch;
  ch.text.reserve(24 << 20);
  ch.text = "%x0 = param : slot=0 dtype=i32\n";
  for (int i = 1; i < 1000000; i++)
    ch.text += "%x" + std::to_string(i) + " = add %x" + std::to_string(i - 1) + ", " + std::to_string(i % 7) + "\n";
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, &attr, run_chain, &ch), 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_TRUE(ch.ok) << ch.why;
  RecordProperty("parse_seconds", std::to_string(ch.parse_s));
  RecordProperty("print_seconds", std::to_string(ch.print_s));
}

}  // namespace
