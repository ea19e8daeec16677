/* tools/fuzz.c - differential fuzzing of compiled ALU ops against
 * uopc_exec_alu (tools/fuzz.h has the contract).  Outside the library: it
 * uses the public API only (uopc_compile, uopc_kernel_call, uopc_exec_alu,
 * the constructors), and is built as the static library uopc_fuzz that the
 * CLI (`uopc fuzz`), the tests and bench_kernel link.
 *
 * Per triple: one kernel `out[i] = op(in0[i], ...)` built with the public
 * constructors and compiled once (or twice: both tiers); then batches of
 * `batch` elements: fill the operand buffers (a wyrand stream; a class per
 * run of 32 elements: random bits, moderate values, edge values, powers of
 * two, values related to the previous operand), call the kernel, decode the
 * operands into uopc_val arrays, run exec_alu over the batch
 * (uopc_exec_alu_n: the per-case results of uopc_exec_alu with one dispatch
 * per batch instead of a call and a dispatch per case), and compare every
 * element in a loop specialised by result dtype.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"

/* ---- the triples ---------------------------------------------------------- */

#define P(op, i, o) {UOPC_OP_##op, UOPC_DT_##i, UOPC_DT_##o}
static const uopc_fuzz_pair pairs[] = {
    P(ADD, BOOL, BOOL),     P(ADD, I32, I32),       P(ADD, F32, F32),      P(ADD, F16, F16),
    P(MUL, BOOL, BOOL),     P(MUL, I32, I32),       P(MUL, F32, F32),      P(MUL, F16, F16),
    P(MAX, BOOL, BOOL),     P(MAX, I32, I32),       P(MAX, F32, F32),      P(MAX, F16, F16),
    P(CMPLT, BOOL, BOOL),   P(CMPLT, I32, BOOL),    P(CMPLT, F32, BOOL),   P(CMPLT, F16, BOOL),
    P(CMPNE, BOOL, BOOL),   P(CMPNE, I32, BOOL),    P(CMPNE, F32, BOOL),   P(CMPNE, F16, BOOL),
    P(FLOORDIV, I32, I32),  P(FLOORMOD, I32, I32),
    P(WHERE, BOOL, BOOL),   P(WHERE, I32, I32),     P(WHERE, F32, F32),    P(WHERE, F16, F16),
    P(RECIP, F32, F32),     P(RECIP, F16, F16),     P(SQRT, F32, F32),     P(SQRT, F16, F16),
    P(EXP2, F32, F32),      P(EXP2, F16, F16),      P(LOG2, F32, F32),     P(LOG2, F16, F16),
    P(SIN, F32, F32),       P(SIN, F16, F16),
    P(CAST, BOOL, BOOL),    P(CAST, BOOL, I32),     P(CAST, BOOL, F32),    P(CAST, BOOL, F16),
    P(CAST, I32, BOOL),     P(CAST, I32, I32),      P(CAST, I32, F32),     P(CAST, I32, F16),
    P(CAST, F32, BOOL),     P(CAST, F32, I32),      P(CAST, F32, F32),     P(CAST, F32, F16),
    P(CAST, F16, BOOL),     P(CAST, F16, I32),      P(CAST, F16, F32),     P(CAST, F16, F16),
};
#undef P
#define NPAIRS (sizeof pairs / sizeof pairs[0])
_Static_assert(NPAIRS == 52, "docs/semantics.md lists 52 triples");

const uopc_fuzz_pair *uopc_fuzz_pairs(size_t *n) {
  if (n) *n = NPAIRS;
  return pairs;
}

static int known_pair(const uopc_fuzz_pair *p) {
  for (size_t i = 0; i < NPAIRS; i++)
    if (pairs[i].op == p->op && pairs[i].in_t == p->in_t && pairs[i].out_t == p->out_t) return 1;
  return 0;
}

static uint32_t nin_of(uopc_op op) {
  if (op == UOPC_OP_WHERE) return 3;
  return (uopc_op_flags(op) & UOPC_OPF_UNARY) ? 1 : 2;
}

/* Operand k's dtype. */
static uopc_dtype in_dtype(const uopc_fuzz_pair *p, uint32_t k) {
  return p->op == UOPC_OP_WHERE && k == 0 ? UOPC_DT_BOOL : p->in_t;
}

const char *uopc_fuzz_dtype_str(const uopc_fuzz_pair *p, char buf[16]) {
  if (p->op == UOPC_OP_CAST)
    snprintf(buf, 16, "%s:%s", uopc_dtype_name(p->in_t), uopc_dtype_name(p->out_t));
  else
    snprintf(buf, 16, "%s", uopc_dtype_name(p->in_t));
  return buf;
}

/* ---- the kernel ------------------------------------------------------------ */

uopc_node *uopc_fuzz_kernel(uopc_ctx *c, const uopc_fuzz_pair *p, int32_t n) {
  if (!p || !known_pair(p) || n < 1) return uopc_fail(c, UOPC_ERR_ARG, "fuzz: not an (op, dtype) triple of the IR");
  uint32_t nin = nin_of(p->op);
  uopc_node *r = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, n), 0);
  uopc_node *v[3] = {0};
  for (uint32_t k = 0; k < nin; k++) {
    uopc_node *buf = uopc_buffer(c, k, in_dtype(p, k), n);
    v[k] = uopc_load(c, uopc_index(c, buf, &r, 1));
  }
  uopc_node *x;
  if (p->op == UOPC_OP_CAST) x = uopc_cast(c, v[0], p->out_t);
  else x = uopc_alu(c, p->op, v, nin);
  uopc_node *out = uopc_buffer(c, nin, p->out_t, n);
  uopc_node *st = uopc_store(c, uopc_index(c, out, &r, 1), x);
  uopc_node *e = uopc_end(c, st, &r, 1);
  return uopc_sink(c, &e, 1);
}

/* ---- random operands ---------------------------------------------------------- */

/* wyrand: a counter and one 64x64->128 multiply per draw. */
static inline uint64_t next(uint64_t *s) {
  *s += 0xa0761d6478bd642full;
  __uint128_t t = (__uint128_t)*s * (*s ^ 0xe7037ed1a0b428dbull);
  return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

static const uint32_t edge_f32[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000,             /* +-0, +-inf */
    0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001,             /* NaNs: quiet, signaling */
    0x7fbfffff, 0x7fc00001, 0x7fffffff, 0xffffffff, 0x7fa5a5a5, /* NaN payloads */
    0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00400000, /* denormals */
    0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,             /* FLT_MIN, FLT_MAX */
    0x3f800000, 0xbf800000, 0x3f800001, 0x3f7fffff,             /* +-1, 1 +- ulp */
    0x4b7fffff, 0x4b800000, 0x4b800001, 0xcb7fffff, 0xcb800000, /* 2^24 - 1, 2^24, 2^24 + 2 */
    0x477fe000, 0xc77fe000, 0x477fefff, 0x477ff000, 0xc77ff000, /* 65504, 65520 (f16 overflow) */
    0x477fffff, 0x47800000,                                     /* 65535.996, 65536 */
    0x4f000000, 0xcf000000, 0x4effffff, 0xcf000001,             /* +-2^31, the f32 next to them */
    0x3f000000, 0xbf000000, 0x3fc00000, 0x40200000, 0xbfc00000, /* 0.5, 1.5, 2.5 (ties) */
    0x33800000, 0x33000000, 0x33400000, 0xb3000000,             /* 2^-24, 2^-25, 1.5 * 2^-25 */
    0x38800000, 0x387fc000, 0x38000000,                         /* f16 min normal, max subnormal */
    0x40000000, 0xc0000000, 0x40490fdb, 0x3fc90fdb, 0x49742400, /* 2, pi, pi/2, 1e6 */
    0x42fe0000, 0x43000000, 0xc3150000, 0xc3160000, 0xc3158000, /* exp2 edges: 127, 128, -149, -150 */
    0x5a000000, 0x7e800000, 0x01000000,                         /* 2^53, 2^126, 2^-125 */
};
static const uint32_t edge_i32[] = {
    0,          1,          0xffffffff, 2,          0xfffffffe, 3,          0xfffffffd,
    7,          0xfffffff9, 0x80000000, 0x7fffffff, 0x80000001, 0x7ffffffe, 0x00ffffff,
    0x01000000, 0x01000001, 0xff000000, 0xfeffffff, 0x0000ffe0, 0x0000ffef, 0x0000fff0,
    0x0000ffff, 0x00010000, 0xffff0010, 0xffff0020, 0x7fffff80, 0x7fffffc0, 0x40000000,
    0xc0000000, 0x00000800, 0x00000801, 0x00000fff,
};
static const uint16_t edge_f16[] = {
    0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x7dff, 0x7fff, 0xffff,
    0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x7bfe,
    0x3c00, 0xbc00, 0x3c01, 0x3bff, 0x3800, 0x3e00, 0x4100, 0x4000, 0xc000, 0x6800,
    0x6801, 0x4248, 0x57f8, 0x5800, 0xcc80, 0xce40, 0x1400, 0x0c00,
};
static const uint8_t odd_bool[] = {2, 0x80, 0xff, 0x7f};
/* The mantissas of the power-of-two class: 2^e, one ulp above, just below 2^(e+1). */
static const uint32_t mant_f32[3] = {0, 1, 0x7fffff}, mant_f16[3] = {0, 1, 0x3ff};
#define NEL(a) (sizeof(a) / sizeof((a)[0]))

/* Operand values.  The class (random bits, moderate, edge, power of two,
   related) is drawn per run of CHUNK elements, so the loops that make the
   values do not branch per element; the classes of different operands are
   drawn independently, so every pairing of classes occurs.  prev is the
   previous operand's buffer when it has this dtype (for equal, negated and
   nearby values), else NULL. */
#define CHUNK 32u

/* gen_f32, gen_f16, decode2 and check are kept out of line (noinline): each is
   its own line in a profile, and inlined into uopc_fuzz_run they measured no
   faster (Zen 2, stop 20). */

/* m random 32-bit words, two per draw. */
static void rand32(uint64_t *s, uint32_t *o, uint32_t m) {
  uint32_t j = 0;
  for (; j + 2 <= m; j += 2) {
    uint64_t r = next(s);
    o[j] = (uint32_t)r, o[j + 1] = (uint32_t)(r >> 32);
  }
  if (j < m) o[j] = (uint32_t)next(s);
}

__attribute__((noinline)) static void gen_f32(uint64_t *s, uint32_t *d, const uint32_t *prev, uint32_t n) {
  for (uint32_t b = 0; b < n; b += CHUNK) {
    uint32_t m = n - b < CHUNK ? n - b : CHUNK, *o = d + b;
    const uint32_t *a = prev ? prev + b : NULL;
    uint64_t c = next(s);
    uint32_t sel = (uint32_t)(c >> 61), mode = (uint32_t)c & 3;
    switch (sel) {
    default: /* 0-3: any bits (NaN payloads, denormals, huge and tiny) */
      rand32(s, o, m);
      break;
    case 4: /* moderate: |v| in [2^-24, 2^25) */
      for (uint32_t j = 0; j < m; j++) {
        uint64_t r = next(s);
        uint32_t hi = (uint32_t)(r >> 32);
        o[j] = (hi & 0x80000000u) | ((103u + (hi & 0xffff) % 49u) << 23) | ((uint32_t)r & 0x7fffff);
      }
      break;
    case 5:
      for (uint32_t j = 0; j < m; j++) o[j] = edge_f32[(uint32_t)(next(s) >> 32) % NEL(edge_f32)];
      break;
    case 6: /* +-2^e, or one ulp above it, or just below the next; inf for e = 255 */
      for (uint32_t j = 0; j < m; j++) { /* no branch per element: a table and a mask */
        uint32_t hi = (uint32_t)(next(s) >> 32), e = hi & 0xff;
        uint32_t mant = mant_f32[(hi >> 8) % 3u] & (0u - (uint32_t)(e != 255));
        o[j] = (hi & 0x80000000u) | (e << 23) | mant;
      }
      break;
    case 7:
      if (a && mode == 0) memcpy(o, a, m * sizeof *o); /* equal */
      else if (a && mode == 1)
        for (uint32_t j = 0; j < m; j++) o[j] = a[j] ^ 0x80000000u; /* negated */
      else if (a && mode == 2)
        for (uint32_t j = 0; j < m; j++) o[j] = a[j] ^ ((uint32_t)next(s) & 0xff); /* a few ulps away */
      else if (a)
        for (uint32_t j = 0; j < m; j++) /* exponent +-24: cancellation, absorption */
          o[j] = a[j] + (uint32_t)((int32_t)((uint32_t)next(s) % 49u) - 24) * 0x800000u;
      else
        for (uint32_t j = 0; j < m; j++) { /* integer-valued, any magnitude up to 2^32 */
          uint64_t r = next(s);
          uint32_t hi = (uint32_t)(r >> 32);
          float f = (float)((int32_t)(uint32_t)r >> (hi & 31)) * (float)(1u + ((hi >> 8) & 1u)); /* x1 or x2 */
          memcpy(&o[j], &f, 4);
        }
      break;
    }
  }
}

static void gen_i32(uint64_t *s, uint32_t *d, const uint32_t *prev, uint32_t n) {
  for (uint32_t b = 0; b < n; b += CHUNK) {
    uint32_t m = n - b < CHUNK ? n - b : CHUNK, *o = d + b;
    const uint32_t *a = prev ? prev + b : NULL;
    uint64_t c = next(s);
    uint32_t sel = (uint32_t)(c >> 61), mode = (uint32_t)c & 3;
    switch (sel) {
    default: /* 0-2 */
      rand32(s, o, m);
      break;
    case 3:
    case 4: /* small: -64..64 */
      for (uint32_t j = 0; j < m; j++) o[j] = (uint32_t)((int32_t)((uint32_t)(next(s) >> 32) % 129u) - 64);
      break;
    case 5:
      for (uint32_t j = 0; j < m; j++) o[j] = edge_i32[(uint32_t)(next(s) >> 32) % NEL(edge_i32)];
      break;
    case 6: /* +-(2^k + {-1, 0, 1}) */
      for (uint32_t j = 0; j < m; j++) {
        uint32_t hi = (uint32_t)(next(s) >> 32);
        uint32_t v = (1u << (hi & 31)) + ((hi >> 5) % 3u) - 1u;
        o[j] = (hi & 0x10000) ? 0u - v : v;
      }
      break;
    case 7:
      if (a && mode == 0) memcpy(o, a, m * sizeof *o);
      else if (a && mode == 1)
        for (uint32_t j = 0; j < m; j++) o[j] = 0u - a[j];
      else if (a && mode == 2)
        for (uint32_t j = 0; j < m; j++) o[j] = a[j] + (uint32_t)((int32_t)((uint32_t)next(s) % 9u) - 4);
      else
        for (uint32_t j = 0; j < m; j++) { /* any magnitude */
          uint64_t r = next(s);
          o[j] = (uint32_t)((int32_t)(uint32_t)r >> ((uint32_t)(r >> 32) & 31));
        }
      break;
    }
  }
}

__attribute__((noinline)) static void gen_f16(uint64_t *s, uint16_t *d, const uint16_t *prev, uint32_t n) {
  for (uint32_t b = 0; b < n; b += CHUNK) {
    uint32_t m = n - b < CHUNK ? n - b : CHUNK;
    uint16_t *o = d + b;
    const uint16_t *a = prev ? prev + b : NULL;
    uint64_t c = next(s);
    uint32_t sel = (uint32_t)(c >> 61), mode = (uint32_t)c & 3;
    switch (sel) {
    default: /* 0-3 */
      for (uint32_t j = 0; j + 4 <= m; j += 4) {
        uint64_t r = next(s);
        o[j] = (uint16_t)r, o[j + 1] = (uint16_t)(r >> 16), o[j + 2] = (uint16_t)(r >> 32), o[j + 3] = (uint16_t)(r >> 48);
      }
      for (uint32_t j = m & ~3u; j < m; j++) o[j] = (uint16_t)next(s);
      break;
    case 4: /* moderate: |v| in [2^-6, 2^7) */
      for (uint32_t j = 0; j < m; j++) {
        uint64_t r = next(s);
        uint32_t hi = (uint32_t)(r >> 32);
        o[j] = (uint16_t)((hi & 0x8000) | ((9u + (hi & 0xfff) % 13u) << 10) | ((uint32_t)r & 0x3ff));
      }
      break;
    case 5:
      for (uint32_t j = 0; j < m; j++) o[j] = edge_f16[(uint32_t)(next(s) >> 32) % NEL(edge_f16)];
      break;
    case 6:
      for (uint32_t j = 0; j < m; j++) {
        uint32_t hi = (uint32_t)(next(s) >> 32), e = hi & 0x1f;
        uint32_t mant = mant_f16[(hi >> 5) % 3u] & (0u - (uint32_t)(e != 31));
        o[j] = (uint16_t)((hi & 0x8000) | (e << 10) | mant);
      }
      break;
    case 7:
      if (a && mode == 0) memcpy(o, a, m * sizeof *o);
      else if (a && mode == 1)
        for (uint32_t j = 0; j < m; j++) o[j] = (uint16_t)(a[j] ^ 0x8000);
      else if (a && mode == 2)
        for (uint32_t j = 0; j < m; j++) o[j] = (uint16_t)(a[j] ^ ((uint32_t)next(s) & 0xf));
      else if (a)
        for (uint32_t j = 0; j < m; j++)
          o[j] = (uint16_t)(a[j] + (uint32_t)((int32_t)((uint32_t)next(s) % 13u) - 6) * 0x400u);
      else
        for (uint32_t j = 0; j < m; j++) o[j] = (uint16_t)(next(s) >> 40);
      break;
    }
  }
}

/* 0 and 1, and now and then another non-zero byte (which reads as True). */
static void gen_bool(uint64_t *s, uint8_t *d, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    uint64_t r = next(s);
    d[i] = (r >> 58) == 0 ? odd_bool[r & 3] : (uint8_t)((r >> 20) & 1);
  }
}

/* ---- decoding and bits ------------------------------------------------------- */

/* Every f16 value as a float (256 KB: a table of doubles, twice the size,
   measured slower for its cache misses). */
static float f16tab[65536];
static pthread_once_t f16once = PTHREAD_ONCE_INIT;
static void f16init(void) {
  for (uint32_t h = 0; h < 65536; h++) f16tab[h] = (float)uopc_f16_to_double((uint16_t)h);
}

static inline float f32_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static inline uint32_t bits_f32(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static inline uint64_t bits_f64(double f) {
  uint64_t b;
  memcpy(&b, &f, 8);
  return b;
}

/* Operand k of every element into vals[nin*i + k]: the buffer's values as
   exec_alu takes them (f32 bits -> double, f16 bits via uopc_f16_to_double,
   through a table).  Only the field the dtype uses is written; the other
   stays 0 from the allocation. */
static void decode(uopc_dtype t, const void *buf, uopc_val *vals, uint32_t k, uint32_t nin, uint32_t n) {
  uopc_val *v = vals + k;
  switch (t) {
  case UOPC_DT_BOOL: {
    const uint8_t *p = buf;
    for (uint32_t i = 0; i < n; i++, v += nin) v->i = p[i];
    break;
  }
  case UOPC_DT_I32: {
    const int32_t *p = buf;
    for (uint32_t i = 0; i < n; i++, v += nin) v->i = p[i];
    break;
  }
  case UOPC_DT_F32: {
    const float *p = buf;
    for (uint32_t i = 0; i < n; i++, v += nin) v->f = (double)p[i];
    break;
  }
  default: {
    const uint16_t *p = buf;
    for (uint32_t i = 0; i < n; i++, v += nin) v->f = (double)f16tab[p[i]];
    break;
  }
  }
}

/* Both operands of a binary op on f32 or f16 in one pass (decode's values:
   vals[2i] from a, vals[2i+1] from b), so that every line of vals is
   written once. */
__attribute__((noinline)) static void decode2(uopc_dtype t, const void *a, const void *b, uopc_val *vals, uint32_t n) {
  if (t == UOPC_DT_F32) {
    const float *p = a, *q = b;
    for (uint32_t i = 0; i < n; i++) vals[2 * i].f = (double)p[i], vals[2 * i + 1].f = (double)q[i];
  } else {
    const uint16_t *p = a, *q = b;
    for (uint32_t i = 0; i < n; i++) vals[2 * i].f = (double)f16tab[p[i]], vals[2 * i + 1].f = (double)f16tab[q[i]];
  }
}

/* Bits of element i of a buffer of dtype t. */
static uint32_t elem_bits(uopc_dtype t, const void *buf, uint32_t i) {
  switch (t) {
  case UOPC_DT_BOOL: return ((const uint8_t *)buf)[i];
  case UOPC_DT_F16: return ((const uint16_t *)buf)[i];
  default: return ((const uint32_t *)buf)[i];
  }
}

/* exec_alu's result as bits of its dtype. */
static uint32_t val_bits(uopc_dtype t, const uopc_val *o) {
  switch (t) {
  case UOPC_DT_BOOL: return (uint32_t)(o->i & 0xff);
  case UOPC_DT_I32: return (uint32_t)o->i;
  case UOPC_DT_F32: return bits_f32((float)o->f);
  default: return uopc_f16_from_double(o->f);
  }
}

/* ---- the run ------------------------------------------------------------------ */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct run {
  const uopc_fuzz_pair *p;
  const uopc_fuzz_opts *o;
  uopc_fuzz_stats *s;
  uint32_t nin, max_reports;
  void *buf[4];
} run;

static void report(run *R, uint32_t i, const uopc_val *ref) {
  R->s->mismatches++;
  if (!R->o->on_mismatch || R->s->mismatches > R->max_reports) return;
  uopc_fuzz_case m = {.pair = *R->p, .nin = R->nin};
  for (uint32_t k = 0; k < R->nin; k++) m.in[k] = elem_bits(in_dtype(R->p, k), R->buf[k], i);
  m.jit = elem_bits(R->p->out_t, R->buf[R->nin], i);
  m.ref = val_bits(R->p->out_t, ref);
  R->o->on_mismatch(R->o->ud, &m);
}

/* opts.self_test: the lowest bit of the JIT's output flipped for the first
   case check compares (ok, the batch not past `want`) whose reference is not
   a NaN. */
static void corrupt(run *R, const uopc_val *res, const unsigned char *ok, uint32_t n, uint64_t want) {
  const uopc_dtype ot = R->p->out_t;
  uint64_t left = want - R->s->cases; /* cases this batch still compares */
  for (uint32_t i = 0; i < n && left; i++) {
    if (!ok[i]) continue;
    left--;
    if (uopc_dtype_is_float(ot) && isnan(res[i].f)) continue;
    void *out = R->buf[R->nin];
    switch (ot) {
    case UOPC_DT_BOOL: ((uint8_t *)out)[i] ^= 1u; break;
    case UOPC_DT_F16: ((uint16_t *)out)[i] ^= 1u; break;
    default: ((uint32_t *)out)[i] ^= 1u; break;
    }
    R->s->injected++;
    return;
  }
}

/* Compares elements 0..n-1 (operands in vals[nin*i ...]; stopping when
   `want` cases are compared).  exec_alu runs over the whole batch first
   (uopc_exec_alu_n: one dispatch per batch, results in res/ok); the cases
   past `want` in the last batch are computed and not compared. */
__attribute__((noinline)) static void check(run *R, const uopc_val *vals, uopc_val *res, unsigned char *ok, uint32_t n, uint64_t want) {
  const uopc_dtype ot = R->p->out_t;
  const void *out = R->buf[R->nin];
  uint64_t cases = R->s->cases, refused = 0;
  size_t good = uopc_exec_alu_n(R->p->op, ot, R->p->in_t, vals, n, res, ok);
  if (R->o->self_test) corrupt(R, res, ok, n, want);
  /* A batch without refusals that cannot reach `want` (nearly all): no
     per-case test of ok[i] or of the count, and no branch per case (the
     mismatches are found again, in order, when there are any). */
#define LOOP(SAME)                                                 \
  if (good == n && want - cases >= n) {                            \
    unsigned bad = 0;                                              \
    for (uint32_t i = 0; i < n; i++) {                             \
      const uopc_val *o = res + i;                                 \
      bad |= !(SAME);                                              \
    }                                                              \
    for (uint32_t i = 0; bad && i < n; i++) {                      \
      const uopc_val *o = res + i;                                 \
      if (!(SAME)) report(R, i, o);                                \
    }                                                              \
    cases += n;                                                    \
  } else {                                                         \
    for (uint32_t i = 0; i < n && cases < want; i++) {             \
      const uopc_val *o = res + i;                                 \
      if (!ok[i]) {                                                \
        refused++;                                                 \
        continue;                                                  \
      }                                                            \
      cases++;                                                     \
      if (!(SAME)) report(R, i, o);                                \
    }                                                              \
  }
  switch (ot) {
  case UOPC_DT_BOOL: {
    const uint8_t *q = out;
    LOOP(q[i] == (uint64_t)o->i)
    break;
  }
  case UOPC_DT_I32: {
    const int32_t *q = out;
    LOOP(q[i] == o->i)
    break;
  }
  case UOPC_DT_F32: {
    const float *q = out;
    LOOP((bits_f64((double)q[i]) == bits_f64(o->f)) | (isnan(o->f) & isnan(q[i]))) /* a NaN matches any NaN */
    break;
  }
  default: {
    const uint16_t *q = out;
    /* As floats (exec_alu's f16 results are f16 values, exact as floats):
       f16tab's NaNs are +-NAN, exec_alu's NaN is +NAN, so the JIT's NaN of
       either sign matches it */
    LOOP((bits_f32(f16tab[q[i]]) == bits_f32((float)o->f)) |
         ((bits_f32(f16tab[q[i]]) == 0xffc00000u) & (bits_f32((float)o->f) == 0x7fc00000u)))
    break;
  }
  }
#undef LOOP
  R->s->cases = cases;
  R->s->refused += refused;
}

static void fill(run *R, uint64_t *st, uint32_t n) {
  for (uint32_t k = 0; k < R->nin; k++) {
    uopc_dtype t = in_dtype(R->p, k);
    int same = k > 0 && in_dtype(R->p, k - 1) == t;
    switch (t) {
    case UOPC_DT_BOOL: gen_bool(st, R->buf[k], n); break;
    case UOPC_DT_I32: gen_i32(st, R->buf[k], same ? R->buf[k - 1] : NULL, n); break;
    case UOPC_DT_F32: gen_f32(st, R->buf[k], same ? R->buf[k - 1] : NULL, n); break;
    default: gen_f16(st, R->buf[k], same ? R->buf[k - 1] : NULL, n); break;
    }
  }
}

static uopc_kernel *compile(const uopc_fuzz_pair *p, uint32_t n, uopc_tier tier, uopc_error *e) {
  uopc_ctx *c = uopc_ctx_new(NULL);
  if (!c) {
    e->code = UOPC_ERR_NOMEM;
    snprintf(e->msg, sizeof e->msg, "out of memory");
    return NULL;
  }
  uopc_node *root = uopc_fuzz_kernel(c, p, (int32_t)n);
  uopc_compile_opts co = {.tier = tier};
  uopc_kernel *k = root ? uopc_compile(c, root, &co, e) : NULL;
  if (!root && uopc_ctx_error(c)) *e = *uopc_ctx_error(c);
  uopc_ctx_free(c);
  return k;
}

uopc_status uopc_fuzz_run(const uopc_fuzz_pair *p, const uopc_fuzz_opts *opts, uopc_fuzz_stats *s, uopc_error *e) {
  uopc_error tmp;
  uopc_fuzz_stats stmp;
  if (!e) e = &tmp;
  if (!s) s = &stmp;
  memset(e, 0, sizeof *e);
  memset(s, 0, sizeof *s);
  if (!p || !known_pair(p)) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "fuzz: not an (op, dtype) triple of the IR");
    return e->code;
  }
  uopc_fuzz_opts def = {0};
  const uopc_fuzz_opts *o = opts ? opts : &def;
  uint64_t want = o->count ? o->count : 100000;
  uint32_t n = o->batch ? o->batch : 4095;
  if (n > (1u << 24)) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "fuzz: batch %u is too large (at most 2^24)", n);
    return e->code;
  }
  if (want > UOPC_FUZZ_MAX_COUNT) {
    e->code = UOPC_ERR_ARG;
    snprintf(e->msg, sizeof e->msg, "fuzz: count %llu is more than can be run (at most 2^50)", (unsigned long long)want);
    return e->code;
  }
  pthread_once(&f16once, f16init);

  run R = {.p = p, .o = o, .s = s, .nin = nin_of(p->op), .max_reports = o->max_reports ? o->max_reports : 10};
  uopc_kernel *k[2] = {0};
  uopc_val *vals = NULL, *res = NULL;
  unsigned char *ok = NULL;
  uopc_status st = UOPC_OK;
  double t0 = now_s();
  int nk = o->both_tiers ? 2 : 1;
  for (int j = 0; j < nk && !st; j++) {
    k[j] = compile(p, n, o->both_tiers ? (j ? UOPC_TIER_STRONG : UOPC_TIER_FAST) : o->tier, e);
    if (!k[j]) st = e->code ? e->code : UOPC_ERR_JIT;
  }
  double t1 = now_s();
  s->compile_ms = (t1 - t0) * 1e3;
  for (uint32_t b = 0; b <= R.nin && !st; b++) {
    size_t bytes = ((size_t)n * uopc_dtype_size(b < R.nin ? in_dtype(p, b) : p->out_t) + 63) / 64 * 64;
    R.buf[b] = aligned_alloc(64, bytes);
    if (!R.buf[b]) st = UOPC_ERR_NOMEM;
    else memset(R.buf[b], 0, bytes);
  }
  if (!st && (!(vals = calloc((size_t)n * 3, sizeof *vals)) || !(res = calloc(n, sizeof *res)) || !(ok = malloc(n))))
    st = UOPC_ERR_NOMEM;
  if (st == UOPC_ERR_NOMEM) {
    e->code = st;
    snprintf(e->msg, sizeof e->msg, "fuzz: out of memory for batches of %u", n);
  }

  /* The triple's own stream: the seed mixed with the triple (wyrand). */
  uint64_t rs = o->seed ^ (0x9e3779b97f4a7c15ull * (1 + (uint64_t)p->op * 64 + (uint64_t)p->in_t * 8 + p->out_t));
  (void)next(&rs);
  uint64_t total = 0, limit = want * 64 + n; /* stops a triple whose cases would all be refused */
  for (uint64_t batch = 0; !st && s->cases < want && total < limit; batch++) {
    fill(&R, &rs, n);
    st = uopc_kernel_call(k[batch % (uint64_t)nk], R.buf, R.nin + 1, e);
    if (st) break;
    if (R.nin == 2 && (p->in_t == UOPC_DT_F32 || p->in_t == UOPC_DT_F16)) decode2(p->in_t, R.buf[0], R.buf[1], vals, n);
    else
      for (uint32_t j = 0; j < R.nin; j++) decode(in_dtype(p, j), R.buf[j], vals, j, R.nin, n);
    check(&R, vals, res, ok, n, want);
    total += n;
    if (o->on_progress && o->on_progress(o->ud, p, s->cases, want)) break;
  }
  s->seconds = now_s() - t1;
  free(vals);
  free(res);
  free(ok);
  for (uint32_t b = 0; b < 4; b++) free(R.buf[b]);
  for (int j = 0; j < 2; j++) uopc_kernel_free(k[j]);
  return st;
}

/* ---- reporting ------------------------------------------------------------------ */

/* "0x3f800000 (1.0)" for bits of dtype t. */
static int fmt_bits(char *buf, size_t n, uopc_dtype t, uint32_t b) {
  char num[40];
  double v;
  switch (t) {
  case UOPC_DT_BOOL: return snprintf(buf, n, "0x%02x (%s)", b, b ? "True" : "False");
  case UOPC_DT_I32: return snprintf(buf, n, "0x%08x (%d)", b, (int32_t)b);
  case UOPC_DT_F32: v = (double)f32_of(b); break;
  default: v = uopc_f16_to_double((uint16_t)b); break;
  }
  uopc_fmt_scalar(v, t, num);
  return snprintf(buf, n, t == UOPC_DT_F16 ? "0x%04x (%s)" : "0x%08x (%s)", b, num);
}

char *uopc_fuzz_describe(const uopc_fuzz_case *m, char *buf, size_t n) {
  static const char *const names1[] = {"a"}, *const names2[] = {"a", "b"}, *const names3[] = {"c", "a", "b"};
  const char *const *nm = m->nin == 3 ? names3 : m->nin == 2 ? names2 : names1;
  char dt[16], op[16], item[64];
  size_t len = 0;
  if (!n) return buf;
  buf[0] = 0;
  snprintf(op, sizeof op, "%s", uopc_op_spelling(m->pair.op));
  len += (size_t)snprintf(buf, n, "mismatch: %s %s", op, uopc_fuzz_dtype_str(&m->pair, dt));
  for (uint32_t k = 0; k < m->nin && k < 3 && len < n; k++) {
    fmt_bits(item, sizeof item, in_dtype(&m->pair, k), m->in[k]);
    len += (size_t)snprintf(buf + len, n - len, " %s=%s", nm[k], item);
  }
  if (len < n) {
    fmt_bits(item, sizeof item, m->pair.out_t, m->jit);
    len += (size_t)snprintf(buf + len, n - len, " jit=%s", item);
  }
  if (len < n) {
    fmt_bits(item, sizeof item, m->pair.out_t, m->ref);
    snprintf(buf + len, n - len, " exec_alu=%s", item);
  }
  return buf;
}
