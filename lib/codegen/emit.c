/* lib/codegen/emit.c - a prepared kernel graph as LLVM IR.
 *
 * The function is   void NAME(ptr noalias %b0, ..., ptr noalias %status)
 * (lib/jit/jit.h's convention; the last pointer is an i32 status word, 0 on
 * entry, set to 1 + slot when an access falls outside BUFFER slot).
 *
 * Effects are emitted in program order: a SINK's sources one after another,
 * an END as a nest of bottom-tested loops (outermost first) around its
 * effect.  Values are emitted where first needed and reused while they stay
 * valid: a value computed inside a loop is dropped when the loop closes, and
 * a value that read a buffer is dropped when that buffer is stored to.
 *
 * Every op computes exactly what uopc_exec_alu says (docs/semantics.md):
 * no fast-math flags, no fmuladd, i32 wraparound (nsw only where bounds
 * prove no overflow), floor division with a divisor guard (no SIGFPE),
 * casts that never produce poison, libm's double exp2/log2/sin marked
 * nobuiltin so that LLVM neither folds nor narrows them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "codegen/emit.h"

#define MAX_LOOPS 256
#define MAX_EFFECT_DEPTH 1000

typedef struct loop {
  uopc_node *range;
  LLVMValueRef iv, end;
  LLVMBasicBlockRef body, after;
} loop;

typedef struct em {
  uopc_ctx *c;
  const uopi_kernel_ir *k;
  LLVMContextRef lc;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMValueRef fn, status;
  LLVMValueRef bufs[UOPI_KERNEL_MAX_BUFS];
  LLVMTypeRef i1, i8, i16, i32, i64, f16, f32, f64, ptr;
  /* the value cache, by node id */
  LLVMValueRef *val;
  int32_t *depth; /* -1: not cached */
  uint64_t *mask; /* buffers a value read (uopi_slot_bit) */
  uint32_t n;
  uint32_t *log; /* ids cached, in order */
  uint32_t nlog, caplog;
  loop loops[MAX_LOOPS];
  int nloops;
  int failed;
} em;

static int fail(em *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(em *E, const char *fmt, ...) {
  if (!E->failed) {
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uopc_fail(E->c, UOPC_ERR_TYPE, "%s", msg);
  }
  E->failed = 1;
  return 0;
}

static LLVMTypeRef vtype(em *E, uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return E->i1;
  case UOPC_DT_I32: return E->i32;
  case UOPC_DT_F16: return E->f16;
  default: return E->f32;
  }
}

static LLVMTypeRef mtype(em *E, uopc_dtype t) { return t == UOPC_DT_BOOL ? E->i8 : vtype(E, t); }

static int cache(em *E, uopc_node *u, LLVMValueRef v, uint64_t mask) {
  if (!uopi_grow(E->c, (void **)&E->log, &E->caplog, E->nlog + 1, sizeof *E->log)) return 0;
  E->val[u->id] = v;
  E->depth[u->id] = E->nloops;
  E->mask[u->id] = mask;
  E->log[E->nlog++] = u->id;
  return 1;
}

static LLVMValueRef cached(em *E, const uopc_node *u) { return E->depth[u->id] >= 0 ? E->val[u->id] : NULL; }

/* Drops cached values made at loop depth >= d (a loop closes). */
static void drop_depth(em *E, int d) {
  while (E->nlog && E->depth[E->log[E->nlog - 1]] >= d) E->depth[E->log[--E->nlog]] = -1;
  /* entries invalidated earlier may sit below; compact lazily */
  uint32_t k = 0;
  for (uint32_t i = 0; i < E->nlog; i++)
    if (E->depth[E->log[i]] >= 0 && E->depth[E->log[i]] < d) E->log[k++] = E->log[i];
    else if (E->depth[E->log[i]] >= d) E->depth[E->log[i]] = -1;
  E->nlog = k;
}

/* Drops cached values that read buffer slot s (it was stored to). */
static void drop_slot(em *E, int64_t s) {
  uint64_t bit = uopi_slot_bit(s);
  uint32_t k = 0;
  for (uint32_t i = 0; i < E->nlog; i++) {
    uint32_t id = E->log[i];
    if (E->depth[id] < 0) continue;
    if (E->mask[id] & bit) E->depth[id] = -1;
    else E->log[k++] = id;
  }
  E->nlog = k;
}

static LLVMValueRef iconst(em *E, LLVMTypeRef t, int64_t v) { return LLVMConstInt(t, (unsigned long long)v, 1); }

/* nsw when the interval of the exact result fits in i32 for every input. */
static int no_wrap(em *E, const uopc_node *u) {
  int64_t a0 = uopc_vmin(E->c, u->src[0]), a1 = uopc_vmax(E->c, u->src[0]);
  int64_t b0 = uopc_vmin(E->c, u->src[1]), b1 = uopc_vmax(E->c, u->src[1]);
  int64_t lo, hi;
  if (u->op == UOPC_OP_ADD) {
    lo = a0 + b0, hi = a1 + b1;
  } else {
    int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
    lo = hi = p[0];
    for (int i = 1; i < 4; i++) lo = p[i] < lo ? p[i] : lo, hi = p[i] > hi ? p[i] : hi;
  }
  return lo >= INT32_MIN && hi <= INT32_MAX;
}

static LLVMValueRef libm(em *E, const char *name, LLVMValueRef x, uopc_dtype t) {
  LLVMTypeRef ft = LLVMFunctionType(E->f64, &E->f64, 1, 0);
  LLVMValueRef f = LLVMGetNamedFunction(E->m, name);
  if (!f) f = LLVMAddFunction(E->m, name, ft);
  LLVMValueRef arg = LLVMBuildFPExt(E->b, x, E->f64, "wide");
  LLVMValueRef call = LLVMBuildCall2(E->b, ft, f, &arg, 1, name);
  unsigned nb = LLVMGetEnumAttributeKindForName("nobuiltin", 9);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(E->lc, nb, 0));
  return LLVMBuildFPTrunc(E->b, call, vtype(E, t), "r");
}

static LLVMValueRef intrinsic1(em *E, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(E->m, id, &t, 1);
  return LLVMBuildCall2(E->b, LLVMIntrinsicGetType(E->lc, id, &t, 1), f, &x, 1, "r");
}

/* Python floor division / modulo on i32, never trapping. */
static LLVMValueRef floordiv(em *E, const uopc_node *u, LLVMValueRef a, LLVMValueRef d, int mod) {
  const uopc_node *bn = u->src[1];
  if (bn->op == UOPC_OP_CONST && bn->arg.i > 0 && uopc_vmin(E->c, u->src[0]) >= 0)
    return mod ? LLVMBuildSRem(E->b, a, d, "mod") : LLVMBuildSDiv(E->b, a, d, "div");
  LLVMBuilderRef b = E->b;
  LLVMValueRef zero = iconst(E, E->i32, 0), one = iconst(E, E->i32, 1);
  LLVMValueRef bad = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntEQ, d, zero, ""),
                                 LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, a, iconst(E, E->i32, INT32_MIN), ""),
                                              LLVMBuildICmp(b, LLVMIntEQ, d, iconst(E, E->i32, -1), ""), ""),
                                 "undef_div");
  LLVMValueRef ds = LLVMBuildSelect(b, bad, one, d, "d");
  LLVMValueRef q = LLVMBuildSDiv(b, a, ds, "q"), r = LLVMBuildSRem(b, a, ds, "r");
  LLVMValueRef adj = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, r, zero, ""),
                                  LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, ds, ""), zero, ""), "adj");
  if (mod) return LLVMBuildAdd(b, r, LLVMBuildSelect(b, adj, ds, zero, ""), "mod");
  return LLVMBuildSub(b, q, LLVMBuildZExt(b, adj, E->i32, ""), "div");
}

static LLVMValueRef cast(em *E, LLVMValueRef x, uopc_dtype from, uopc_dtype to) {
  LLVMBuilderRef b = E->b;
  if (from == to) return x;
  int ff = uopc_dtype_is_float(from), tf = uopc_dtype_is_float(to);
  if (to == UOPC_DT_BOOL)
    return ff ? LLVMBuildFCmp(b, LLVMRealUNE, x, LLVMConstReal(vtype(E, from), 0.0), "tobool")
              : LLVMBuildICmp(b, LLVMIntNE, x, iconst(E, vtype(E, from), 0), "tobool");
  if (from == UOPC_DT_BOOL) return tf ? LLVMBuildUIToFP(b, x, vtype(E, to), "") : LLVMBuildZExt(b, x, E->i32, "");
  if (from == UOPC_DT_I32) return LLVMBuildSIToFP(b, x, vtype(E, to), "");
  if (tf) return to == UOPC_DT_F16 ? LLVMBuildFPTrunc(b, x, E->f16, "") : LLVMBuildFPExt(b, x, E->f32, "");
  /* float -> i32: defined only for finite values whose truncation fits */
  LLVMValueRef w = LLVMBuildFPExt(b, x, E->f64, "");
  LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, w, LLVMConstReal(E->f64, -2147483649.0), ""),
                                 LLVMBuildFCmp(b, LLVMRealOLT, w, LLVMConstReal(E->f64, 2147483648.0), ""), "fits");
  LLVMValueRef v = LLVMBuildFreeze(b, LLVMBuildFPToSI(b, w, E->i32, ""), "");
  return LLVMBuildSelect(b, ok, v, iconst(E, E->i32, INT32_MIN), "toi32");
}

static LLVMValueRef alu(em *E, const uopc_node *u, LLVMValueRef *s) {
  LLVMBuilderRef b = E->b;
  uopc_dtype t = (uopc_dtype)u->src[u->op == UOPC_OP_WHERE ? 1 : 0]->dtype;
  int fl = uopc_dtype_is_float(t);
  LLVMValueRef r;
  switch (u->op) {
  case UOPC_OP_ADD:
    if (t == UOPC_DT_BOOL) return LLVMBuildOr(b, s[0], s[1], "or");
    if (fl) return LLVMBuildFAdd(b, s[0], s[1], "add");
    r = LLVMBuildAdd(b, s[0], s[1], "add");
    if (no_wrap(E, u)) LLVMSetNSW(r, 1);
    return r;
  case UOPC_OP_MUL:
    if (t == UOPC_DT_BOOL) return LLVMBuildAnd(b, s[0], s[1], "and");
    if (fl) return LLVMBuildFMul(b, s[0], s[1], "mul");
    r = LLVMBuildMul(b, s[0], s[1], "mul");
    if (no_wrap(E, u)) LLVMSetNSW(r, 1);
    return r;
  case UOPC_OP_MAX: /* b if b > a else a */
    if (t == UOPC_DT_BOOL) return LLVMBuildOr(b, s[0], s[1], "max");
    r = fl ? LLVMBuildFCmp(b, LLVMRealOGT, s[1], s[0], "") : LLVMBuildICmp(b, LLVMIntSGT, s[1], s[0], "");
    return LLVMBuildSelect(b, r, s[1], s[0], "max");
  case UOPC_OP_CMPLT:
    if (fl) return LLVMBuildFCmp(b, LLVMRealOLT, s[0], s[1], "lt");
    return LLVMBuildICmp(b, t == UOPC_DT_BOOL ? LLVMIntULT : LLVMIntSLT, s[0], s[1], "lt");
  case UOPC_OP_CMPNE:
    return fl ? LLVMBuildFCmp(b, LLVMRealUNE, s[0], s[1], "ne") : LLVMBuildICmp(b, LLVMIntNE, s[0], s[1], "ne");
  case UOPC_OP_FLOORDIV: return floordiv(E, u, s[0], s[1], 0);
  case UOPC_OP_FLOORMOD: return floordiv(E, u, s[0], s[1], 1);
  case UOPC_OP_WHERE: return LLVMBuildSelect(b, s[0], s[1], s[2], "where");
  case UOPC_OP_RECIP: return LLVMBuildFDiv(b, LLVMConstReal(vtype(E, t), 1.0), s[0], "recip");
  case UOPC_OP_SQRT: return intrinsic1(E, "llvm.sqrt", s[0]);
  case UOPC_OP_EXP2: return libm(E, "exp2", s[0], t);
  case UOPC_OP_LOG2: return libm(E, "log2", s[0], t);
  case UOPC_OP_SIN: return libm(E, "sin", s[0], t);
  case UOPC_OP_CAST: return cast(E, s[0], t, (uopc_dtype)u->dtype);
  default: fail(E, "%s cannot be compiled", uopc_op_name((uopc_op)u->op)); return NULL;
  }
}

/* The address of INDEX(buffer, i), after a bounds check unless bounds prove it. */
static LLVMValueRef address(em *E, const uopc_node *u, LLVMValueRef idx) {
  const uopc_node *buf = u->src[0];
  int64_t n = buf->shape[0], slot = buf->arg.i;
  if (!(uopc_vmin(E->c, u->src[1]) >= 0 && uopc_vmax(E->c, u->src[1]) < n)) {
    LLVMValueRef ok = LLVMBuildICmp(E->b, LLVMIntULT, idx, iconst(E, E->i32, n), "inbounds");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(E->lc, E->fn, "oob");
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(E->lc, E->fn, "ok");
    LLVMBuildCondBr(E->b, ok, go, bad);
    LLVMPositionBuilderAtEnd(E->b, bad);
    LLVMBuildStore(E->b, iconst(E, E->i32, 1 + slot), E->status);
    LLVMBuildRetVoid(E->b);
    LLVMPositionBuilderAtEnd(E->b, go);
  }
  LLVMValueRef i64 = LLVMBuildZExt(E->b, idx, E->i64, "i");
  LLVMSetNNeg(i64, 1);
  return LLVMBuildInBoundsGEP2(E->b, mtype(E, (uopc_dtype)buf->dtype), E->bufs[slot], &i64, 1, "p");
}

static unsigned align_of(uopc_dtype t) { return t == UOPC_DT_BOOL ? 1 : t == UOPC_DT_F16 ? 2 : 4; }

/* One node whose sources are all emitted. */
static LLVMValueRef node(em *E, uopc_node *u, uint64_t *mask) {
  LLVMValueRef s[3] = {0};
  *mask = 0;
  for (uint32_t i = 0; i < u->nsrc && i < 3; i++) {
    if (u->src[i]->op == UOPC_OP_BUFFER) continue;
    s[i] = E->val[u->src[i]->id];
    *mask |= E->mask[u->src[i]->id];
  }
  switch (u->op) {
  case UOPC_OP_CONST:
    if (uopc_dtype_is_float((uopc_dtype)u->dtype)) return LLVMConstReal(vtype(E, (uopc_dtype)u->dtype), u->arg.f);
    return iconst(E, vtype(E, (uopc_dtype)u->dtype), u->arg.i);
  case UOPC_OP_RANGE:
    fail(E, "RANGE idx=%lld is used outside the loops (ENDs) that close it", (long long)u->arg.i);
    return NULL;
  case UOPC_OP_INDEX: return address(E, u, s[1]);
  case UOPC_OP_LOAD: {
    uopc_dtype t = (uopc_dtype)u->dtype;
    LLVMValueRef v = LLVMBuildLoad2(E->b, mtype(E, t), s[0], "ld");
    LLVMSetAlignment(v, align_of(t));
    *mask |= uopi_slot_bit(u->src[0]->src[0]->arg.i);
    return t == UOPC_DT_BOOL ? LLVMBuildICmp(E->b, LLVMIntNE, v, iconst(E, E->i8, 0), "b") : v;
  }
  default:
    if (uopc_op_flags((uopc_op)u->op) & UOPC_OPF_ALU) return alu(E, u, s);
    fail(E, "%s cannot be compiled here", uopc_op_name((uopc_op)u->op));
    return NULL;
  }
}

typedef struct vframe {
  uopc_node *u;
  uint32_t next;
} vframe;

/* The value of u in the current block, emitting what is not cached. */
static LLVMValueRef value(em *E, uopc_node *root) {
  LLVMValueRef v = cached(E, root);
  if (v || E->failed) return v;
  vframe small[64], *st = small;
  uint32_t cap = 64, sp = 0;
  st[sp++] = (vframe){root, 0};
  while (sp && !E->failed) {
    vframe *f = &st[sp - 1];
    uopc_node *u = f->u;
    if (f->next < u->nsrc) {
      uopc_node *s = u->src[f->next++];
      if (s->op == UOPC_OP_BUFFER || cached(E, s)) continue;
      if (sp == cap) {
        vframe *ns = uopc_mem_alloc(E->c, (size_t)cap * 2 * sizeof *ns);
        if (!ns) {
          E->failed = 1;
          break;
        }
        memcpy(ns, st, (size_t)sp * sizeof *st);
        if (st != small) uopc_mem_free(E->c, st, (size_t)cap * sizeof *st);
        st = ns, cap *= 2;
      }
      st[sp++] = (vframe){s, 0};
      continue;
    }
    sp--;
    uint64_t mask;
    LLVMValueRef r = node(E, u, &mask);
    if (!r || !cache(E, u, r, mask)) E->failed = 1;
  }
  if (st != small) uopc_mem_free(E->c, st, (size_t)cap * sizeof *st);
  return E->failed ? NULL : cached(E, root);
}

static int effect(em *E, uopc_node *u, int level);

static int store(em *E, uopc_node *u) {
  LLVMValueRef p = value(E, u->src[0]);
  LLVMValueRef v = p ? value(E, u->src[1]) : NULL;
  if (!v) return 0;
  uopc_dtype t = (uopc_dtype)u->src[1]->dtype;
  if (t == UOPC_DT_BOOL) v = LLVMBuildZExt(E->b, v, E->i8, "");
  LLVMSetAlignment(LLVMBuildStore(E->b, v, p), align_of(t));
  drop_slot(E, u->src[0]->src[0]->arg.i);
  return 1;
}

static int open_loop(em *E, uopc_node *r) {
  for (int i = 0; i < E->nloops; i++)
    if (E->loops[i].range == r) return fail(E, "RANGE idx=%lld is opened again inside its own loop", (long long)r->arg.i);
  if (E->nloops == MAX_LOOPS) return fail(E, "loops nest more than %d deep", MAX_LOOPS);
  LLVMValueRef end = value(E, r->src[0]);
  if (!end) return 0;
  loop *l = &E->loops[E->nloops];
  l->range = r;
  l->end = end;
  l->body = LLVMAppendBasicBlockInContext(E->lc, E->fn, "loop");
  l->after = LLVMAppendBasicBlockInContext(E->lc, E->fn, "after");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(E->b);
  LLVMBuildCondBr(E->b, LLVMBuildICmp(E->b, LLVMIntSGT, end, iconst(E, E->i32, 0), "any"), l->body, l->after);
  LLVMPositionBuilderAtEnd(E->b, l->body);
  l->iv = LLVMBuildPhi(E->b, E->i32, "r");
  LLVMValueRef zero = iconst(E, E->i32, 0);
  LLVMAddIncoming(l->iv, &zero, &pre, 1);
  E->nloops++;
  return cache(E, r, l->iv, 0);
}

static void close_loop(em *E) {
  loop *l = &E->loops[E->nloops - 1];
  LLVMValueRef next = LLVMBuildAdd(E->b, l->iv, iconst(E, E->i32, 1), "next");
  LLVMSetNSW(next, 1); /* iv < end <= INT32_MAX */
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(E->b);
  LLVMAddIncoming(l->iv, &next, &latch, 1);
  LLVMBuildCondBr(E->b, LLVMBuildICmp(E->b, LLVMIntSLT, next, l->end, "more"), l->body, l->after);
  LLVMPositionBuilderAtEnd(E->b, l->after);
  drop_depth(E, E->nloops);
  E->nloops--;
}

static int effect(em *E, uopc_node *u, int level) {
  if (level > MAX_EFFECT_DEPTH) return fail(E, "effects nest more than %d deep", MAX_EFFECT_DEPTH);
  switch (u->op) {
  case UOPC_OP_SINK:
    for (uint32_t i = 0; i < u->nsrc; i++)
      if (!effect(E, u->src[i], level + 1)) return 0;
    return 1;
  case UOPC_OP_STORE: return store(E, u);
  case UOPC_OP_END: {
    int base = E->nloops;
    for (uint32_t i = 1; i < u->nsrc; i++)
      if (!open_loop(E, u->src[i])) return 0;
    if (!effect(E, u->src[0], level + 1)) return 0;
    while (E->nloops > base) close_loop(E);
    return 1;
  }
  default: return fail(E, "%s is not an effect", uopc_op_name((uopc_op)u->op));
  }
}

uopc_status uopi_emit_kernel(uopc_ctx *c, const uopi_kernel_ir *k, const char *name, LLVMModuleRef *out) {
  *out = NULL;
  LLVMModuleRef m;
  uopc_error je = {0};
  if (uopi_jit_module_new(name, &m, &je) != UOPC_OK) return uopc_fail(c, je.code, "%s", je.msg), je.code;
  em E = {.c = c, .k = k, .m = m, .lc = LLVMGetModuleContext(m)};
  E.i1 = LLVMInt1TypeInContext(E.lc), E.i8 = LLVMInt8TypeInContext(E.lc), E.i16 = LLVMInt16TypeInContext(E.lc);
  E.i32 = LLVMInt32TypeInContext(E.lc), E.i64 = LLVMInt64TypeInContext(E.lc);
  E.f16 = LLVMHalfTypeInContext(E.lc), E.f32 = LLVMFloatTypeInContext(E.lc), E.f64 = LLVMDoubleTypeInContext(E.lc);
  E.ptr = LLVMPointerTypeInContext(E.lc, 0);
  LLVMTypeRef params[UOPI_KERNEL_MAX_BUFS + 1];
  for (uint32_t i = 0; i <= k->nbufs; i++) params[i] = E.ptr;
  E.fn = LLVMAddFunction(m, name, LLVMFunctionType(LLVMVoidTypeInContext(E.lc), params, k->nbufs + 1, 0));
  uopi_jit_mark_kernel(E.fn);
  for (uint32_t i = 0; i < k->nbufs; i++) E.bufs[i] = LLVMGetParam(E.fn, i);
  E.status = LLVMGetParam(E.fn, k->nbufs);
  E.n = uopc_ctx_count(c);
  E.val = uopc_mem_alloc(c, (size_t)E.n * sizeof *E.val);
  E.depth = uopc_mem_alloc(c, (size_t)E.n * sizeof *E.depth);
  E.mask = uopc_mem_alloc(c, (size_t)E.n * sizeof *E.mask);
  int ok = E.val && E.depth && E.mask;
  if (ok) {
    memset(E.depth, 0xff, (size_t)E.n * sizeof *E.depth);
    E.b = LLVMCreateBuilderInContext(E.lc);
    LLVMPositionBuilderAtEnd(E.b, LLVMAppendBasicBlockInContext(E.lc, E.fn, "entry"));
    ok = effect(&E, k->root, 0);
    if (ok) LLVMBuildRetVoid(E.b);
    LLVMDisposeBuilder(E.b);
  }
  uopc_mem_free(c, E.val, (size_t)E.n * sizeof *E.val);
  uopc_mem_free(c, E.depth, (size_t)E.n * sizeof *E.depth);
  uopc_mem_free(c, E.mask, (size_t)E.n * sizeof *E.mask);
  uopc_mem_free(c, E.log, (size_t)E.caplog * sizeof *E.log);
  if (!ok) {
    uopi_jit_module_free(m);
    if (!uopc_ctx_error(c)) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory emitting a kernel");
    return uopc_ctx_error(c)->code;
  }
  *out = m;
  return UOPC_OK;
}
