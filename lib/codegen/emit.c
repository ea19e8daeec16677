/* lib/codegen/emit.c - a linearized kernel (lib/lower/linearize.h) as LLVM
 * IR, one instruction at a time, in program order.  The emitter schedules
 * nothing: where each value is computed, and which values are reused, is
 * the program's decision.
 *
 * The kernel is in the JIT's convention (lib/jit/jit.h): void NAME(ptr %args)
 * over an array of nbufs + 1 pointers, the buffers by slot and then an i32
 * status word, 0 on entry, set to 1 + slot when an access falls outside
 * BUFFER slot.  Every load and store is tagged with the alias scope of the
 * pointer it goes through (uopi_jit_kernel_access).
 *
 *   VALUE    the op (ops.c); INDEX: the bounds check when the program says
 *            so, then the address; LOAD: a load at the element's alignment
 *   LOOP     a bottom-tested loop: guard `end > 0`, body block, i32 phi
 *            (a constant end of 1: no loop, the counter is 0; a serial
 *            reduction's counter runs from 1, its body sees counter - 1)
 *   ENDLOOP  the latch: next = i + 1 (nsw), branch back while next < end
 *            (a loop of more than VECTORIZE_MAX instructions, or one that
 *            moves an address through a modulo: marked not to be
 *            vectorized; a short row: interleaved; a serial reduction:
 *            unrolled, and what the unroll does not divide of a constant
 *            trip count runs after it in a loop of its own, its body
 *            emitted again)
 *   STORE    a store at the element's alignment (bool: one byte, 0 or 1)
 *
 * Side tables (the values of instructions, the open loops) are sized by the
 * program, not by the context.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/DebugInfo.h> /* temporary metadata nodes */

#include "codegen/cg.h"
#include "uopc/jit.h"

/* A loop whose body holds more program instructions than this is not
   vectorized (llvm.loop.vectorize.enable false on its latch): LLVM 19's
   loop vectorizer takes time quadratic in the loop's size (2 s for a body
   of 30,000 instructions, most of it in VPlan's destructor), and a body
   that large gains little from vector lanes next to its compile time. */
#define VECTORIZE_MAX 4096
#define SHORT_VECTORS 8

typedef struct loop {
  LLVMValueRef iv, end;
  LLVMBasicBlockRef body, after;
  uint32_t at; /* the LOOP instruction */
  int outer;   /* a loop opens inside it */
  int serial;  /* a serial reduction (serial_reduction), known when it opens */
  int from1;   /* its counter runs from 1 and the body sees counter - 1 */
} loop;

typedef struct em {
  uopi_cg g;
  const uopi_prog *p;
  LLVMValueRef *val; /* per instruction: its value (VALUE, LOOP) */
  uint64_t *dep;     /* per instruction: bit d set when it depends on the loop at depth d (min(d, 63)) */
  uint8_t *addr;     /* per instruction: ADDR_* bits */
  loop *loops;       /* open loops, innermost last */
  uint32_t nloops;
  /* the streaming copy of a peeled kernel (emit_peeled): */
  const struct peel *pl; /* the loop to split, or NULL */
  LLVMValueRef *q;       /* per slot: the stored buffer's aligned base in the main loop */
  LLVMValueRef j;        /* in the main loop: its counter (store addresses are q[slot] + j) */
  LLVMValueRef pok;      /* i1: the stored buffers can be aligned by a peel */
} em;

/* A loop the streaming copy splits (find_peel, emit_peeled). */
#define PEEL_MIN_BYTES 2048 /* a shorter run: the peel (up to 15 scalar iterations) would cost more
                              than streaming its few lines gains */
typedef struct peel {
  uint32_t loop;  /* the LOOP instruction */
  uint32_t end;   /* its ENDLOOP */
  uint32_t idx;   /* the index of every store */
  uint32_t x;     /* idx = counter + instruction x, or UINT32_MAX: idx is the counter */
  unsigned size;  /* bytes of a stored element */
  uopc_dtype dt;  /* the first stored buffer's dtype (every stored one has its size) */
  uint64_t stored; /* the slots stored to (bit slot) */
} peel;

#define ADDR_INDEX 1u /* the value flows into an address (an INDEX's index) */
#define ADDR_STORE 2u /* an INDEX a STORE writes through */

int uopi_cg_fail(uopi_cg *E, const char *fmt, ...) {
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

LLVMTypeRef uopi_cg_vtype(uopi_cg *E, uopc_dtype t) {
  switch (t) {
  case UOPC_DT_BOOL: return E->i1;
  case UOPC_DT_I32: return E->i32;
  case UOPC_DT_F16: return E->f16;
  default: return E->f32;
  }
}

LLVMTypeRef uopi_cg_mtype(uopi_cg *E, uopc_dtype t) { return t == UOPC_DT_BOOL ? E->i8 : uopi_cg_vtype(E, t); }

static unsigned align_of(uopc_dtype t) { return t == UOPC_DT_BOOL ? 1 : t == UOPC_DT_F16 ? 2 : 4; }

static LLVMValueRef i32c(uopi_cg *E, int64_t v) { return LLVMConstInt(E->i32, (unsigned long long)v, 1); }

/* A call of the intrinsic `name` (no overloaded types) with args; bundle:
   an operand bundle or NULL. */
static void call_intrinsic(uopi_cg *g, const char *name, LLVMValueRef *args, unsigned n, LLVMOperandBundleRef bundle) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(g->m, id, NULL, 0);
  LLVMTypeRef t = LLVMIntrinsicGetType(g->lc, id, NULL, 0);
  LLVMBuildCallWithOperandBundles(g->b, t, f, args, n, bundle ? &bundle : NULL, bundle ? 1 : 0, "");
}

/* A return; in the streaming copy after an sfence, so that its
   non-temporal stores are ordered before whatever follows the call. */
static void ret(uopi_cg *E) {
  if (E->sfence) call_intrinsic(E, "llvm.x86.sse.sfence", NULL, 0, NULL);
  LLVMBuildRetVoid(E->b);
}

/* ---- memory ------------------------------------------------------------------ */

/* The address of INDEX(buffer, idx), after the bounds check when guarded. */
static LLVMValueRef address(uopi_cg *E, const uopi_pinst *x, LLVMValueRef idx) {
  const uopc_node *buf = x->node->src[0];
  if (x->flags & UOPI_PF_GUARD) {
    LLVMValueRef ok = LLVMBuildICmp(E->b, LLVMIntULT, idx, i32c(E, buf->shape[0]), "inbounds");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(E->lc, E->fn, "oob");
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(E->lc, E->fn, "ok");
    LLVMBuildCondBr(E->b, ok, go, bad);
    LLVMPositionBuilderAtEnd(E->b, bad);
    uopi_jit_kernel_access(E->k, LLVMBuildStore(E->b, i32c(E, 1 + x->slot), E->status), E->nbufs);
    ret(E);
    LLVMPositionBuilderAtEnd(E->b, go);
  }
  LLVMValueRef i64 = LLVMBuildZExt(E->b, idx, E->i64, "i");
  LLVMSetNNeg(i64, 1);
  return LLVMBuildInBoundsGEP2(E->b, uopi_cg_mtype(E, (uopc_dtype)buf->dtype), uopi_jit_kernel_arg(E->k, (unsigned)x->slot),
                              &i64, 1, "p");
}

static LLVMValueRef load(uopi_cg *E, const uopi_pinst *x, LLVMValueRef p) {
  uopc_dtype t = (uopc_dtype)x->dtype;
  LLVMValueRef v = LLVMBuildLoad2(E->b, uopi_cg_mtype(E, t), p, "ld");
  LLVMSetAlignment(v, align_of(t));
  uopi_jit_kernel_access(E->k, v, (unsigned)x->slot);
  return t == UOPC_DT_BOOL ? LLVMBuildICmp(E->b, LLVMIntNE, v, LLVMConstInt(E->i8, 0, 0), "b") : v;
}

static void store(uopi_cg *E, const uopi_pinst *x, LLVMValueRef p, LLVMValueRef v) {
  uopc_dtype t = (uopc_dtype)x->dtype;
  if (t == UOPC_DT_BOOL) v = LLVMBuildZExt(E->b, v, E->i8, "");
  LLVMValueRef s = LLVMBuildStore(E->b, v, p);
  LLVMSetAlignment(s, align_of(t));
  uopi_jit_kernel_access(E->k, s, (unsigned)x->slot);
}

/* ---- loops ------------------------------------------------------------------------ */

/* The bit of E->dep for the loop at depth d (depths past 63 share bit 63). */
static uint64_t depth_bit(uint32_t d) { return 1ull << (d < 63 ? d : 63); }

/* The stores in the body of loop l (closed at instruction at): how many, or
   -1 when one's address depends on a loop in `moved` (E->dep bits) or, with
   floats_only, one stores a value that is not a float. */
static int fixed_stores(const em *E, const loop *l, uint32_t at, uint64_t moved, int floats_only) {
  int stores = 0;
  for (uint32_t i = l->at + 1; i < at; i++) {
    const uopi_pinst *x = &E->p->ins[i];
    if (x->kind != UOPI_P_STORE) continue;
    if ((E->dep[x->src[0]] & moved) || (floats_only && !uopi_dtype_is_float((uopc_dtype)x->dtype))) return -1;
    stores++;
  }
  return stores;
}

/* Whether loop l (closed at instruction at; parent: it is inside another
   loop) is a short row: innermost,
   inside another loop, of 2 to SHORT_VECTORS vectors of 32-bit lanes,
   storing only at addresses its parent loop does not move (an output row
   accumulated across the reduce loop around it, as attention's P V).
   Vectorized and interleaved by its whole length it becomes straight-line
   vector code, and LICM then keeps the row in registers across the parent
   loop (P V at N = 512 on Zen 2: 2.4 -> 1.1 ms a call, 1.7 ms more
   compile).  Stores the parent moves (a transpose's scatter) would make the
   interleaved loop costly to compile for nothing (the transposed copy of
   K: 2.6 -> 10.9 ms). */
static int short_row(const em *E, const loop *l, uint32_t at, int parent) {
  if (l->outer || !parent || !LLVMIsAConstantInt(l->end)) return 0;
  int64_t n = LLVMConstIntGetSExtValue(l->end), w = (int64_t)(uopi_jit_vector_bits() / 32);
  if (w < 2 || n % w || n / w < 2 || n / w > SHORT_VECTORS) return 0;
  return fixed_stores(E, l, at, depth_bit(E->p->ins[l->at].depth - 1), 0) > 0;
}

/* Whether loop l (closed at instruction at) is innermost, has an f16 value
   (loaded, computed, converted or stored) and computes no EXP2, LOG2 or SIN.
   Without AVX512-FP16 every f16 operation is one on f32 lanes between
   conversions (vcvtph2ps, vcvtps2ph), and LLVM 19's x86 cost model prices
   the conversions of 16 lanes as if scalarized (`fptrunc <16 x float> to
   <16 x half>`, `fpext <16 x half> to <16 x float>`: one instruction each),
   so a loop that converts explicitly (an f32 result cast to f16, an f16
   compare, which ops.c widens) is vectorized 4 lanes wide (xmm).  Given the
   width a loop of f16 arithmetic alone gets by itself (two vectors of f32
   lanes: llvm.loop.vectorize.width = vector bits / 16, 32 lanes on
   AVX-512) it runs a full vector per conversion: a*b, sqrt, recip and max
   cast to f16 over 64K elements 42.7 -> 9.3 us, f16 compares (docs/loops.md,
   "f16 loops").  With EXP2, LOG2 or SIN (strict mode's are long inline
   sequences or calls) the width doubled compile time for a 1.6x faster
   loop (cast(exp2(a)) to f16: 5.8 -> 11.7 ms), which pays back only on large
   arrays: left to the cost model; so is a loop that stores at an address it
   does not move (an accumulator, such as the check that an f16 converted to
   i32 fits: the vectorizer cannot follow the hint there).  The same
   operations on the same lanes: the same bits. */
static int f16_loop(const em *E, const loop *l, uint32_t at) {
  int found = 0;
  const uint64_t self = depth_bit(E->p->ins[l->at].depth);
  for (uint32_t i = l->at + 1; i < at; i++) {
    const uopi_pinst *x = &E->p->ins[i];
    if (x->kind == UOPI_P_LOOP) return 0;
    if (x->kind == UOPI_P_STORE && !(E->dep[x->src[0]] & self)) return 0; /* an accumulator: no vector loop */
    if (x->kind == UOPI_P_VALUE && (x->op == UOPC_OP_EXP2 || x->op == UOPC_OP_LOG2 || x->op == UOPC_OP_SIN)) return 0;
    if ((x->kind == UOPI_P_VALUE || x->kind == UOPI_P_STORE) && x->dtype == UOPC_DT_F16) found = 1;
  }
  return found;
}

/* Whether loop l, which short_body_end found innermost and of at most
   SERIAL_MAX instructions ending at instruction at, is a serial float
   reduction in strict mode: storing only float values at addresses it does
   not move (an accumulator).  Its adds
   stay in order, one dependent add an iteration, so the vectorizer leaves
   it and what bounds it is the add's latency next to the loop's own
   overhead: unrolled by SERIAL_UNROLL (llvm.loop.unroll.count; the same adds
   in the same order, so the same bits) its counter and compare are spread
   over more adds.  Measured on an Intel Xeon (sum of 16M f32, docs/loops.md):
   17.7 -> 16.4 ms against clang's 15.7 (clang unrolls it by 8 too); left
   unmarked, a loop is not unrolled (the pipeline unrolls only on request:
   matmul's register tile ran 8 % slower unrolled). */
#define SERIAL_MAX 32
#define SERIAL_UNROLL 8
static int serial_reduction(const em *E, const loop *l, uint32_t at) {
  return !E->g.fast && fixed_stores(E, l, at, depth_bit(E->p->ins[l->at].depth), 1) > 0;
}

/* The ENDLOOP of the loop opened at instruction at when its body holds no
   loop and at most SERIAL_MAX instructions (a candidate serial reduction,
   decided before its body is emitted), else 0. */
static uint32_t short_body_end(const uopi_prog *p, uint32_t at) {
  for (uint32_t i = at + 1; i < p->n && i - at <= SERIAL_MAX; i++) {
    if (p->ins[i].kind == UOPI_P_LOOP) return 0;
    if (p->ins[i].kind == UOPI_P_ENDLOOP) return i;
  }
  return 0;
}

/* Enters loop l from the builder's block: makes its body and after
   blocks, branches to the body, when guard is given only if it holds (else
   to after), and starts the counter phi at start.  The builder ends in the
   body. */
static void enter_loop(uopi_cg *g, loop *l, const char *body, LLVMValueRef guard, int32_t start) {
  l->body = LLVMAppendBasicBlockInContext(g->lc, g->fn, body);
  l->after = LLVMAppendBasicBlockInContext(g->lc, g->fn, "after");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  if (guard) LLVMBuildCondBr(g->b, guard, l->body, l->after);
  else LLVMBuildBr(g->b, l->body);
  LLVMPositionBuilderAtEnd(g->b, l->body);
  l->iv = LLVMBuildPhi(g->b, g->i32, "r");
  LLVMValueRef s = i32c(g, start);
  LLVMAddIncoming(l->iv, &s, &pre, 1);
}

/* A loop of one iteration (end is the constant 1) is its body once, with
   the counter 0: no blocks, no phi (deep nests of size-1 loops stay
   straight-line code for LLVM, whose loop passes and register allocator
   take time quadratic in the nesting depth). */
static LLVMValueRef open_loop(em *E, uint32_t at, LLVMValueRef end) {
  uopi_cg *g = &E->g;
  if (E->nloops) E->loops[E->nloops - 1].outer = 1;
  loop *l = &E->loops[E->nloops++];
  l->end = end;
  l->at = at;
  l->outer = l->serial = l->from1 = 0;
  int64_t t = LLVMIsAConstantInt(end) ? LLVMConstIntGetSExtValue(end) : 0;
  if (t == 1) {
    l->body = l->after = NULL;
    return l->iv = i32c(g, 0);
  }
  uint32_t z = short_body_end(E->p, at);
  l->serial = z && !short_row(E, l, z, E->nloops > 1) && serial_reduction(E, l, z);
  l->from1 = l->serial && t > 0 && t < INT32_MAX;
  enter_loop(g, l, "loop", LLVMBuildICmp(g->b, LLVMIntSGT, end, i32c(g, 0), "any"), l->from1);
  if (!l->from1) return l->iv;
  /* A serial reduction's body reads element counter + 1 (the first element
     starts the sum).  Counting from 0, the unrolled loop's last read and its
     latch share counter + 8, and FastISel's code keeps two counters, copying
     one to the other each iteration: the 16M sum ran 4 % slower on an Intel
     Xeon (docs/decisions.md, stop 27).  Counting from 1, the body sees
     counter - 1 and reads the counter itself; the latch alone adds 8. */
  LLVMValueRef r = LLVMBuildAdd(g->b, l->iv, i32c(g, -1), "r");
  LLVMSetNSW(r, 1);
  return r;
}

/* Marks the latch br: llvm.loop = distinct !{self, !{hint[k], value[k]}...}
   (llvm.loop.vectorize.enable i1 false, llvm.loop.interleave.count i32 n). */
static void loop_hint(uopi_cg *g, LLVMValueRef br, const char *const *hint, const LLVMValueRef *value, unsigned n) {
  LLVMMetadataRef ops[3];
  ops[0] = LLVMTemporaryMDNode(g->lc, NULL, 0);
  for (unsigned k = 0; k < n && k < 2; k++) {
    LLVMMetadataRef opt[2] = {LLVMMDStringInContext2(g->lc, hint[k], strlen(hint[k])), LLVMValueAsMetadata(value[k])};
    ops[k + 1] = LLVMMDNodeInContext2(g->lc, opt, 2);
  }
  LLVMMetadataRef tmp = ops[0];
  LLVMMetadataRef id = LLVMMDNodeInContext2(g->lc, ops, (n < 2 ? n : 2) + 1);
  LLVMMetadataReplaceAllUsesWith(tmp, id); /* operand 0 is the node itself (it becomes distinct) */
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(g->lc, "llvm.loop", 9), LLVMMetadataAsValue(g->lc, id));
}

/* Marks the latch br of a loop f16_loop accepts with its width: two vectors
   of f32 lanes (llvm.loop.vectorize.width = vector bits / 16). */
static void f16_width(uopi_cg *g, LLVMValueRef br) {
  static const char *const width[1] = {"llvm.loop.vectorize.width"};
  loop_hint(g, br, width, (LLVMValueRef[]){LLVMConstInt(g->i32, uopi_jit_vector_bits() / 16, 0)}, 1);
}

static void emit_inst(em *E, uint32_t i);
static LLVMValueRef rebased(em *E, const uopi_pinst *x);

/* The latch of loop l: next = iv + 1, back to the body while next < end,
   else to exit; the branch. */
static LLVMValueRef latch(em *E, loop *l, LLVMValueRef end, LLVMBasicBlockRef exit) {
  uopi_cg *g = &E->g;
  LLVMValueRef next = LLVMBuildAdd(g->b, l->iv, i32c(g, 1), "next");
  LLVMSetNSW(next, 1); /* iv < end <= INT32_MAX */
  LLVMBasicBlockRef at = LLVMGetInsertBlock(g->b);
  LLVMAddIncoming(l->iv, &next, &at, 1);
  return LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, next, end, "more"), l->body, exit);
}

/* A serial reduction whose constant trip count T the unroll does not
   divide: the loop runs T - T % SERIAL_UNROLL iterations (unrolled, with no
   exit between its copies), then a loop of the T % SERIAL_UNROLL left runs
   the body (instructions from + 1 .. at - 1, emitted again) with the
   counter base + j, base = T - T % SERIAL_UNROLL: the same iterations in
   the same order, so the same bits.  Left with the exit the unroller keeps
   for such a count (after the 7th add of 8 for the 2^24 - 1 adds of a 16M
   sum), the loop ran 2-5 % slower on an Intel Xeon (docs/decisions.md,
   stop 27).  Emitted at entry, the rest's own block; it leaves to after
   through a block of its own. */
static void emit_rest(em *E, uint32_t from, uint32_t at, int64_t base, int64_t rest, LLVMBasicBlockRef entry,
                      LLVMBasicBlockRef after) {
  uopi_cg *g = &E->g;
  LLVMPositionBuilderAtEnd(g->b, entry);
  loop r = {.at = from, .end = i32c(g, (int32_t)rest)};
  enter_loop(g, &r, "rest.loop", NULL, 0);
  LLVMValueRef iv = LLVMBuildAdd(g->b, r.iv, i32c(g, (int32_t)base), "r.rest");
  LLVMSetNSW(iv, 1);
  E->val[from] = iv;
  for (uint32_t i = from + 1; i < at && !g->failed; i++) emit_inst(E, i);
  if (g->failed) return;
  latch(E, &r, r.end, r.after);
  LLVMPositionBuilderAtEnd(g->b, r.after);
  LLVMBuildBr(g->b, after);
}

/* Whether loop l (closed at instruction at) moves an address LLVM 19's
   loop vectorizer gets wrong; such a loop is not vectorized (its other
   work runs scalar too).  Both kinds are gathers or loops that leave their
   buffer, which 512-bit vectors barely speed up.

   * An address computed by a modulo its counter moves: `B[(3 * r) % 16]`.
     The vectorizer reads `x % 2^k` through scalar evolution as a k-bit
     truncation, takes the truncated recurrence for a strided access under
     the predicate that it does not wrap, and when that predicate is
     provably false drops the check instead of the vector loop (upstream
     llvm/llvm-project pull request 225086): B[(3 * r) % 16] over 16
     iterations read B[18] and B[21], past a 16-element buffer, for r = 6
     and 7 (a wrong value and a read outside the buffer; docs/decisions.md,
     stop 31).  A freeze of the modulo hid it at the fast tier only: O2's
     instcombine folds the freeze into the loop's recurrence.
   * A checked address (an INDEX with UOPI_PF_GUARD: the bounds guard ends
     the kernel at the first iteration out of range).  LLVM turns the guard
     into a trip count (the iterations before the first out of range) and
     reads a strided access as one wide load of an interleave group, whose
     gap after the last lane it covers by keeping one iteration for the
     scalar loop: that iteration is the guard's exit, which loads nothing.
     B[7 * r + 65] over 32 iterations of a 256-element B, to be refused at
     r = 28, read B[256] on the way (a SIGSEGV where the buffer ends at a
     page: found by the kernel oracle under --guard-pages; docs/decisions.md,
     stop 32).  Seen only in kernels that are then refused (the same loops
     whose guard never fails read exactly their elements), but the read
     comes before the refusal. */
static int unsafe_address(const em *E, const loop *l, uint32_t at) {
  uint64_t moved = depth_bit(E->p->ins[l->at].depth);
  for (uint32_t i = l->at + 1; i < at; i++) {
    const uopi_pinst *x = &E->p->ins[i];
    if (x->kind != UOPI_P_VALUE || !(E->dep[i] & moved)) continue;
    if (x->op == UOPC_OP_FLOORMOD && (E->addr[i] & ADDR_INDEX)) return 1;
    if (x->op == UOPC_OP_INDEX && (x->flags & UOPI_PF_GUARD)) return 1;
  }
  return 0;
}

static void close_loop(em *E, uint32_t at) {
  uopi_cg *g = &E->g;
  loop *l = &E->loops[--E->nloops];
  if (!l->body) return; /* one iteration: nothing to close */
  int64_t t = l->from1 ? LLVMConstIntGetSExtValue(l->end) : 0; /* constant when from1 */
  int64_t rest = t > SERIAL_UNROLL ? t % SERIAL_UNROLL : 0;
  LLVMValueRef end = l->from1 ? i32c(g, (int32_t)(t - rest + 1)) : l->end; /* the counter from 1 */
  /* the unrolled loop leaves to the rest, which leaves to after */
  LLVMBasicBlockRef rest_entry = rest ? LLVMAppendBasicBlockInContext(g->lc, g->fn, "rest") : NULL;
  LLVMValueRef br = latch(E, l, end, rest ? rest_entry : l->after);
  int unsafe = unsafe_address(E, l, at);
  if (unsafe) uopi_jit_module_set_novec(g->m); /* the hint below alone did not hold (jit.h, "no vectorize") */
  if (at - l->at > VECTORIZE_MAX || unsafe) {
    static const char *const off[1] = {"llvm.loop.vectorize.enable"};
    loop_hint(g, br, off, (LLVMValueRef[]){LLVMConstInt(g->i1, 0, 0)}, 1);
  } else if (short_row(E, l, at, E->nloops > 0)) { /* interleaved by the row's vectors (forcing the width too
                                        made it compile 1.8 ms slower and run no faster) */
    static const char *const row[1] = {"llvm.loop.interleave.count"};
    int64_t n = LLVMConstIntGetSExtValue(l->end), w = (int64_t)(uopi_jit_vector_bits() / 32);
    loop_hint(g, br, row, (LLVMValueRef[]){LLVMConstInt(g->i32, (unsigned long long)(n / w), 0)}, 1);
  } else if (!l->serial && uopi_jit_vector_bits() >= 256 && f16_loop(E, l, at)) {
    f16_width(g, br);
  } else if (l->serial) {
    static const char *const unroll[1] = {"llvm.loop.unroll.count"};
    loop_hint(g, br, unroll, (LLVMValueRef[]){LLVMConstInt(g->i32, SERIAL_UNROLL, 0)}, 1);
  }
  if (!l->outer && !g->fast && fixed_stores(E, l, at, depth_bit(E->p->ins[l->at].depth), 1) >= 2)
    uopi_jit_module_set_tier0_ir(g->m); /* chains: not packed into gathers at TIER2 (jit.h) */
  if (rest) emit_rest(E, l->at, at, t - rest, rest, rest_entry, l->after);
  LLVMPositionBuilderAtEnd(g->b, l->after);
}

/* ---- the translation ------------------------------------------------------------------ */

/* Program instruction i (a serial reduction's rest emits its body's again). */
static void emit_inst(em *E, uint32_t i) {
  uopi_cg *g = &E->g;
  const uopi_pinst *x = &E->p->ins[i];
  LLVMValueRef s[3] = {0}, v = NULL;
  for (uint32_t j = 0; j < x->nsrc; j++) s[j] = E->val[x->src[j]];
  switch (x->kind) {
  case UOPI_P_LOOP: v = open_loop(E, i, s[0]); break;
  case UOPI_P_ENDLOOP: close_loop(E, i); break;
  case UOPI_P_STORE: store(g, x, s[0], s[1]); break;
  case UOPI_P_VALUE:
    switch (x->op) {
    case UOPC_OP_CONST: v = uopi_cg_const(g, x->node); break;
    case UOPC_OP_INDEX: v = E->j && (E->addr[i] & ADDR_STORE) ? rebased(E, x) : address(g, x, s[0]); break;
    case UOPC_OP_LOAD: v = load(g, x, s[0]); break;
    default: v = uopi_cg_alu(g, x->node, s); break;
    }
    break;
  default: uopi_cg_fail(g, "unknown program instruction kind %d", x->kind);
  }
  E->val[i] = v;
}

/* E->dep and E->addr for every instruction, before any is emitted (a loop
   is told a serial reduction when it opens, from its body's stores; that it
   computes an address by a modulo when it closes). */
static void deps(em *E) {
  const uopi_prog *p = E->p;
  for (uint32_t i = 0; i < p->n; i++) {
    const uopi_pinst *x = &p->ins[i];
    uint64_t dep = x->kind == UOPI_P_LOOP ? depth_bit(x->depth) : 0;
    for (uint32_t j = 0; j < x->nsrc; j++) dep |= E->dep[x->src[j]];
    E->dep[i] = dep;
    E->addr[i] = 0;
  }
  for (uint32_t i = p->n; i-- > 0;) { /* users come after their sources */
    const uopi_pinst *x = &p->ins[i];
    int into = x->kind == UOPI_P_VALUE && ((E->addr[i] & ADDR_INDEX) || x->op == UOPC_OP_INDEX);
    for (uint32_t j = 0; into && j < x->nsrc; j++) E->addr[x->src[j]] |= ADDR_INDEX;
    if (x->kind == UOPI_P_STORE) E->addr[x->src[0]] |= ADDR_STORE;
  }
}

static void emit_peeled(em *E);

/* The program; in a peeled streaming copy, its peeled loop split in two. */
static void emit_all(em *E) {
  for (uint32_t i = 0; i < E->p->n && !E->g.failed; i++) {
    if (E->pl && i == E->pl->loop) {
      emit_peeled(E);
      i = E->pl->end;
      continue;
    }
    emit_inst(E, i);
  }
}

/* ---- streaming stores (UOPI_EMIT_STREAM; lib/jit/nontemporal.c) ------------------------- */

/* llvm.assume(true) ["align"(ptr, 64)]: LLVM may take ptr as 64-byte aligned. */
static void assume_aligned(uopi_cg *g, LLVMValueRef ptr) {
  LLVMValueRef args[2] = {ptr, LLVMConstInt(g->i64, 64, 0)};
  LLVMOperandBundleRef align = LLVMCreateOperandBundle("align", 5, args, 2);
  LLVMValueRef yes = LLVMConstInt(g->i1, 1, 0);
  call_intrinsic(g, "llvm.assume", &yes, 1, align);
  LLVMDisposeOperandBundle(align);
}

/* A kernel whose stores are all in one innermost loop L, all through the
   same index, L's counter or counter + X with X fixed in L (a row start),
   into buffers of one element size: each run of L can be split where its
   stores reach a 64-byte boundary, so that it streams whatever the
   alignment of its outputs (glibc's malloc of a large block returns an
   address 16 bytes past a page).  Needs every stored buffer at the same
   address mod 64, a multiple of the element size (checked on entry).
   Loops that must not be vectorized (unsafe_address, VECTORIZE_MAX) or
   that get another hint (a short row) are not split.  (struct peel: above,
   beside em.) */

static int find_peel(const em *E, peel *pl) {
  const uopi_prog *p = E->p;
  uint32_t L = UINT32_MAX, idx = UINT32_MAX, open = UINT32_MAX;
  unsigned size = 0;
  uopc_dtype dt = UOPC_DT_F32;
  uint64_t stored = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    const uopi_pinst *x = &p->ins[i];
    if (x->kind == UOPI_P_LOOP) open = i;
    if (x->kind == UOPI_P_ENDLOOP) open = UINT32_MAX; /* a store after an inner loop closed: rejected below */
    if (x->kind != UOPI_P_STORE) continue;
    const uopi_pinst *a = &p->ins[x->src[0]];
    if (open == UINT32_MAX || (L != UINT32_MAX && open != L) || a->kind != UOPI_P_VALUE || a->op != UOPC_OP_INDEX ||
        (a->flags & UOPI_PF_GUARD) || a->slot < 0 || a->slot >= 64)
      return 0;
    unsigned s = align_of((uopc_dtype)a->node->src[0]->dtype);
    if (L != UINT32_MAX && (a->src[0] != idx || s != size)) return 0;
    if (L == UINT32_MAX) dt = (uopc_dtype)a->node->src[0]->dtype;
    L = open, idx = a->src[0], size = s;
    stored |= 1ull << a->slot;
  }
  if (L == UINT32_MAX) return 0;
  const uopi_pinst *l = &p->ins[L];
  const uopi_pinst *n = &p->ins[l->src[0]];
  /* 4-byte elements, and f16 ones in a loop given two vectors of f32 lanes
     (f16_loop: a whole line of f16 per store) that loads nothing wider
     (below).  The vectorizer stores bool results, and f16 results of other
     loops, as 32-byte vectors or narrower, which never stream
     (nontemporal.c): a peel would be compile time and scalar iterations for
     nothing */
  if ((size != 4 && size != 2) || l->depth >= 62 || n->kind != UOPI_P_VALUE || n->op != UOPC_OP_CONST ||
      n->node->arg.i * size < PEEL_MIN_BYTES)
    return 0;
  uint32_t end = L + 1;
  for (; end < p->n && p->ins[end].kind != UOPI_P_ENDLOOP; end++)
    if (p->ins[end].kind == UOPI_P_LOOP) return 0; /* not innermost */
    else if (p->ins[end].kind == UOPI_P_VALUE && p->ins[end].op == UOPC_OP_LOAD && ((stored >> p->ins[end].slot) & 1))
      return 0; /* reads what it writes (streaming never asks for that; checked anyway) */
    else if (p->ins[end].kind == UOPI_P_VALUE && p->ins[end].op == UOPC_OP_LOAD &&
             align_of((uopc_dtype)p->ins[end].dtype) > size)
      return 0; /* an f16 result of f32 or i32 loads: aligning the stores leaves the loads split, and
                   the stores are a fifth of the traffic: measured 7-20 % slower (docs/loops.md) */
  if (end == p->n || p->ins[end].src[0] != L || end - L > VECTORIZE_MAX) return 0;
  loop lp = {.at = L};
  if (unsafe_address(E, &lp, end) || (size == 2 && !f16_loop(E, &lp, end))) return 0;
  uint32_t x = UINT32_MAX;
  if (idx != L) {
    const uopi_pinst *ad = &p->ins[idx];
    if (ad->kind != UOPI_P_VALUE || ad->op != UOPC_OP_ADD || ad->nsrc != 2 || (ad->src[0] != L && ad->src[1] != L))
      return 0;
    x = ad->src[0] == L ? ad->src[1] : ad->src[0];
    if (x == L || (E->dep[x] & depth_bit(l->depth))) return 0;
  }
  /* a short row (its stores fixed across the loop around it) keeps its hint */
  if (l->depth > 0 && (x == UINT32_MAX || !(E->dep[x] & depth_bit(l->depth - 1)))) return 0;
  *pl = (peel){L, end, idx, x, size, dt, stored};
  return 1;
}

/* In the main loop of a peeled run: a store's address, its buffer's aligned
   base plus the main loop's counter (the same address as idx's). */
static LLVMValueRef rebased(em *E, const uopi_pinst *x) {
  uopi_cg *g = &E->g;
  LLVMValueRef j = LLVMBuildZExt(g->b, E->j, g->i64, "j");
  LLVMSetNNeg(j, 1);
  return LLVMBuildInBoundsGEP2(g->b, uopi_cg_mtype(g, (uopc_dtype)x->node->src[0]->dtype), E->q[x->slot], &j, 1, "p");
}

/* Iterations start .. start + count - 1 of the peeled loop, one at a time
   (a loop not vectorized: at most a line's worth, or what is left after
   the whole lines). */
static void scalar_run(em *E, LLVMValueRef start, LLVMValueRef count, const char *name) {
  uopi_cg *g = &E->g;
  const peel *pl = E->pl;
  loop a = {.at = pl->loop};
  enter_loop(g, &a, name, LLVMBuildICmp(g->b, LLVMIntSGT, count, i32c(g, 0), "any"), 0);
  LLVMValueRef r = a.iv;
  if (!LLVMIsAConstantInt(start) || LLVMConstIntGetSExtValue(start)) {
    r = LLVMBuildAdd(g->b, a.iv, start, "r");
    LLVMSetNSW(r, 1);
    LLVMSetNUW(r, 1);
  }
  E->val[pl->loop] = r;
  for (uint32_t i = pl->loop + 1; i < pl->end && !g->failed; i++) emit_inst(E, i);
  if (g->failed) return;
  static const char *const off[1] = {"llvm.loop.vectorize.enable"};
  loop_hint(g, latch(E, &a, count, a.after), off, (LLVMValueRef[]){LLVMConstInt(g->i1, 0, 0)}, 1);
  LLVMPositionBuilderAtEnd(g->b, a.after);
}

/* The peeled loop L (counter r, 0 .. T-1) as three loops doing its
   iterations in order: the peel, r < P, where P is the count of stores
   before the first address that is a multiple of 64 (0 .. 64/size - 1; T
   when the stored buffers cannot be aligned, E->pok); the main loop, r = P
   + j for j < M, a constant multiple of 64 with P + M <= T for any P of a
   line, whose stores go through base + (X + P) * size, which is 64-byte
   aligned and said so to LLVM: its vector stores are then proven aligned
   and stream; and the rest, r = P + M + t for t < T - M - P.  The peel and
   the rest run scalar (at most 15 + 78 iterations of f32, 31 + 94 of f16).  A constant
   trip count for the main loop keeps its compile time that of the loop it
   replaces: a runtime one (T - P) cost 1-1.5 ms more to compile for the
   vectorizer's checks and remainder loops (ew16M).  The same operations on
   the same elements in the same order. */
static void emit_peeled(em *E) {
  uopi_cg *g = &E->g;
  const peel *pl = E->pl;
  const uopi_prog *p = E->p;
  LLVMValueRef end = E->val[p->ins[pl->loop].src[0]];
  if (E->nloops) E->loops[E->nloops - 1].outer = 1; /* as open_loop says of the loop around it */
  /* P = ((64 - (base + X * size) % 64) % 64) / size, capped at T (any
     stored buffer's base: when pok holds they lie at one address mod 64) */
  LLVMValueRef at = LLVMBuildPtrToInt(g->b, uopi_jit_kernel_arg(g->k, (unsigned)__builtin_ctzll(pl->stored)), g->i64, "base");
  if (pl->x != UINT32_MAX)
    at = LLVMBuildAdd(g->b, at,
                      LLVMBuildMul(g->b, LLVMBuildSExt(g->b, E->val[pl->x], g->i64, "x"),
                                   LLVMConstInt(g->i64, pl->size, 0), "xb"), "row");
  LLVMValueRef off = LLVMBuildAnd(g->b, LLVMBuildSub(g->b, LLVMConstInt(g->i64, 64, 0), at, "to64"),
                                  LLVMConstInt(g->i64, 63, 0), "gap");
  LLVMValueRef pk = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, off, LLVMConstInt(g->i64, (unsigned)__builtin_ctz(pl->size), 0), "peel"),
                                   g->i32, "peel");
  LLVMValueRef P = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, pk, end, "short"), pk, end, "peel");
  P = LLVMBuildSelect(g->b, E->pok, P, end, "peel"); /* not peelable: every iteration in the peel */
  scalar_run(E, i32c(g, 0), P, "peel.loop");
  if (g->failed) return;
  /* the main loop: r = P + j, j in [0, M), M the constant that fits after
     any peel of a line (P + M <= T for P < 64 / size), a multiple of 64;
     entered when the peel was one (P <= T - M; the aligned base is then
     aligned, and only then said so) */
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  int64_t T = p->ins[p->ins[pl->loop].src[0]].node->arg.i, lanes = 64 / (int64_t)pl->size;
  int64_t M = (T - (lanes - 1)) / 64 * 64; /* > 0: find_peel asks T * size >= PEEL_MIN_BYTES */
  LLVMValueRef more = LLVMBuildICmp(g->b, LLVMIntSLE, P, i32c(g, T - M), "more");
  LLVMBasicBlockRef pre = LLVMAppendBasicBlockInContext(g->lc, g->fn, "main.pre");
  LLVMPositionBuilderAtEnd(g->b, pre);
  LLVMValueRef row = P;
  if (pl->x != UINT32_MAX) {
    row = LLVMBuildAdd(g->b, E->val[pl->x], P, "row");
    LLVMSetNSW(row, 1);
  }
  LLVMValueRef r64 = LLVMBuildZExt(g->b, row, g->i64, "row");
  LLVMSetNNeg(r64, 1);
  for (uint64_t m = pl->stored; m; m &= m - 1) {
    unsigned slot = (unsigned)__builtin_ctzll(m);
    E->q[slot] = LLVMBuildInBoundsGEP2(g->b, uopi_cg_mtype(g, pl->dt), uopi_jit_kernel_arg(g->k, slot), &r64, 1, "q");
    assume_aligned(g, E->q[slot]);
  }
  loop b = {.at = pl->loop};
  enter_loop(g, &b, "main.loop", NULL, 0);
  LLVMBasicBlockRef body = LLVMGetInsertBlock(g->b);
  LLVMPositionBuilderAtEnd(g->b, from);
  LLVMBuildCondBr(g->b, more, pre, b.after);
  LLVMPositionBuilderAtEnd(g->b, body);
  LLVMValueRef r = LLVMBuildAdd(g->b, b.iv, P, "r");
  LLVMSetNSW(r, 1);
  LLVMSetNUW(r, 1);
  E->val[pl->loop] = r;
  E->j = b.iv;
  for (uint32_t i = pl->loop + 1; i < pl->end && !g->failed; i++) emit_inst(E, i);
  E->j = NULL;
  if (g->failed) return;
  LLVMValueRef br = latch(E, &b, i32c(g, M), b.after);
  if (pl->size == 2) f16_width(g, br); /* f16: find_peel asked f16_loop */
  LLVMPositionBuilderAtEnd(g->b, b.after);
  /* the rest: r = P + M + t, t in [0, T - M - P) (none when the peel took every iteration) */
  LLVMValueRef base = LLVMBuildAdd(g->b, P, i32c(g, M), "done");
  LLVMValueRef rest = LLVMBuildSub(g->b, i32c(g, T - M), P, "rest");
  LLVMSetNSW(base, 1);
  LLVMSetNSW(rest, 1);
  scalar_run(E, base, rest, "rest.loop");
}

/* The kernel twice: entered at the first copy when every buffer it stores
   to is 64-byte aligned (LLVM told so by llvm.assume, so that its vector
   stores can be proven aligned and made non-temporal after the passes; an
   sfence at its end orders them before the kernel returns), else at the
   second, an ordinary copy.  The two compute the same values.  Every
   return of the first (its end, a failed bounds check's early return)
   fences.  A kernel find_peel accepts enters the first copy when its
   stored buffers share their address mod 64 (a multiple of the element
   size), aligned or not: its loop is split there (emit_peeled). */
static void emit_twice(em *E) {
  uopi_cg *g = &E->g;
  const uopi_prog *p = E->p;
  uint64_t stored = 0;
  for (uint32_t i = 0; i < p->n; i++)
    if (p->ins[i].kind == UOPI_P_STORE && p->ins[i].slot >= 0 && p->ins[i].slot < 64) stored |= 1ull << p->ins[i].slot;
  peel pl;
  if (stored && find_peel(E, &pl)) {
    /* one copy: its loop's peel aligns the stores wherever they are, when
       the stored buffers lie at one address mod 64, a multiple of the
       element size (else the whole loop runs as the peel, scalar) */
    LLVMValueRef ok = NULL, low0 = NULL;
    for (uint64_t m = pl.stored; m; m &= m - 1) {
      LLVMValueRef a = LLVMBuildPtrToInt(g->b, uopi_jit_kernel_arg(g->k, (unsigned)__builtin_ctzll(m)), g->i64, "addr");
      LLVMValueRef low = LLVMBuildAnd(g->b, a, LLVMConstInt(g->i64, 63, 0), "low");
      LLVMValueRef o = low0 ? LLVMBuildICmp(g->b, LLVMIntEQ, low, low0, "same")
                            : LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildAnd(g->b, low, LLVMConstInt(g->i64, pl.size - 1, 0), "elem"),
                                            LLVMConstInt(g->i64, 0, 0), "whole");
      if (!low0) low0 = low;
      ok = ok ? LLVMBuildAnd(g->b, ok, o, "peelable") : o;
    }
    E->pok = ok;
    g->sfence = 1;
    E->pl = &pl;
    emit_all(E);
    E->pl = NULL;
    if (!g->failed) ret(g);
    g->sfence = 0;
    return;
  }
  LLVMValueRef all = NULL;
  for (uint64_t m = stored; m; m &= m - 1) {
    LLVMValueRef a = LLVMBuildPtrToInt(g->b, uopi_jit_kernel_arg(g->k, (unsigned)__builtin_ctzll(m)), g->i64, "addr");
    LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildAnd(g->b, a, LLVMConstInt(g->i64, 63, 0), "low"),
                                    LLVMConstInt(g->i64, 0, 0), "aligned");
    all = all ? LLVMBuildAnd(g->b, all, ok, "aligned") : ok;
  }
  if (!all) { /* stores nothing: one copy */
    emit_all(E);
    if (!g->failed) LLVMBuildRetVoid(g->b);
    return;
  }
  LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(g->lc, g->fn, "streaming");
  LLVMBasicBlockRef any = LLVMAppendBasicBlockInContext(g->lc, g->fn, "unaligned");
  LLVMBuildCondBr(g->b, all, fast, any);
  LLVMPositionBuilderAtEnd(g->b, fast);
  for (uint64_t m = stored; m; m &= m - 1) assume_aligned(g, uopi_jit_kernel_arg(g->k, (unsigned)__builtin_ctzll(m)));
  g->sfence = 1;
  emit_all(E);
  if (!g->failed) ret(g);
  g->sfence = 0;
  if (g->failed) return;
  E->nloops = 0;
  LLVMPositionBuilderAtEnd(g->b, any);
  emit_all(E);
  if (!g->failed) LLVMBuildRetVoid(g->b);
}

uopc_status uopi_emit(uopc_ctx *c, const uopi_prog *p, const char *name, unsigned flags, LLVMModuleRef *out) {
  *out = NULL;
  LLVMModuleRef m;
  uopc_error je = {0};
  if (uopi_jit_module_new(name, &m, &je) != UOPC_OK) return uopc_fail(c, je.code, "%s", je.msg), je.code;
  em E = {.p = p};
  uopi_cg *g = &E.g;
  g->c = c, g->m = m, g->lc = LLVMGetModuleContext(m), g->nbufs = p->nbufs;
  g->fast = !!(flags & UOPC_COMPILE_FAST_MATH);
  if (g->fast) uopi_jit_module_set_fast(m);
  g->i1 = LLVMInt1TypeInContext(g->lc), g->i8 = LLVMInt8TypeInContext(g->lc), g->i16 = LLVMInt16TypeInContext(g->lc);
  g->i32 = LLVMInt32TypeInContext(g->lc), g->i64 = LLVMInt64TypeInContext(g->lc);
  g->f16 = LLVMHalfTypeInContext(g->lc), g->f32 = LLVMFloatTypeInContext(g->lc), g->f64 = LLVMDoubleTypeInContext(g->lc);
  g->ptr = LLVMPointerTypeInContext(g->lc, 0);
  size_t nparams = (size_t)p->nbufs + 1;
  E.val = uopc_mem_alloc(c, (size_t)(p->n ? p->n : 1) * sizeof *E.val);
  E.dep = uopc_mem_alloc(c, (size_t)(p->n ? p->n : 1) * sizeof *E.dep);
  E.addr = uopc_mem_alloc(c, (size_t)(p->n ? p->n : 1) * sizeof *E.addr);
  E.loops = uopc_mem_alloc(c, (size_t)(p->max_depth ? p->max_depth : 1) * sizeof *E.loops);
  E.q = uopc_mem_alloc(c, (size_t)(p->nbufs ? p->nbufs : 1) * sizeof *E.q);
  int ok = E.val && E.dep && E.addr && E.loops && E.q;
  if (ok) deps(&E);
  if (ok && uopi_jit_kernel_new(m, name, (unsigned)nparams, &g->k, &je) != UOPC_OK) {
    uopc_fail(c, je.code, "%s", je.msg);
    ok = 0;
  }
  if (ok) {
    g->fn = uopi_jit_kernel_fn(g->k);
    g->status = uopi_jit_kernel_arg(g->k, p->nbufs);
    g->b = LLVMCreateBuilderInContext(g->lc);
    LLVMPositionBuilderAtEnd(g->b, LLVMGetEntryBasicBlock(g->fn)); /* after the loads of the pointers */
    if (flags & UOPI_EMIT_STREAM) {
      uopi_jit_module_set_stream(m);
      emit_twice(&E);
    } else {
      emit_all(&E);
      if (!g->failed) LLVMBuildRetVoid(g->b);
    }
    ok = !g->failed;
    LLVMDisposeBuilder(g->b);
  }
  uopi_jit_kernel_free(g->k);
  uopc_mem_free(c, E.val, (size_t)(p->n ? p->n : 1) * sizeof *E.val);
  uopc_mem_free(c, E.dep, (size_t)(p->n ? p->n : 1) * sizeof *E.dep);
  uopc_mem_free(c, E.addr, (size_t)(p->n ? p->n : 1) * sizeof *E.addr);
  uopc_mem_free(c, E.loops, (size_t)(p->max_depth ? p->max_depth : 1) * sizeof *E.loops);
  uopc_mem_free(c, E.q, (size_t)(p->nbufs ? p->nbufs : 1) * sizeof *E.q);
  if (!ok) {
    uopi_jit_module_free(m);
    if (!uopc_ctx_error(c)) uopc_fail(c, UOPC_ERR_NOMEM, "out of memory emitting a kernel");
    return uopc_ctx_error(c)->code;
  }
  *out = m;
  return UOPC_OK;
}
