/* lib/lower/program.c - the linearized program's verifier and printer
 * (lib/lower/linearize.h): what UOPC_DEBUG=check runs after linearize, and
 * what UOPC_DEBUG=linearize prints.
 */
#include <string.h>

#include "lower/linearize.h"
#include "uopc/uir.h"

static uint64_t slot_bit(int64_t slot) { return 1ull << ((uint64_t)slot & 63); }

/* ---- the verifier ---------------------------------------------------------------- */

typedef struct check {
  const uopi_prog *p;
  uint8_t *live;      /* defined, and its loops still open */
  uint64_t *reads;    /* slot bits a value read, through its operands */
  uint64_t *body;     /* LOOP: slot bits its body stores */
  uint32_t *loops;    /* open LOOPs, innermost last */
  uint32_t *defs;     /* values defined, in order; a LOOP's mark is the count at its opening */
  uint32_t *mark;     /* per open loop: defs' count at its opening */
  uint32_t nloops, ndefs;
  int64_t barrier[64];/* the last STORE to the bit, or opening of a loop storing it */
} check;

#define BAD(msg) \
  do {           \
    *why = msg;  \
    *at = i;     \
    return 1;    \
  } while (0)

/* First pass: brackets, and the slots each loop's body stores. */
static int bodies(check *K, const char **why, uint32_t *at) {
  const uopi_prog *p = K->p;
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    const uopi_pinst *x = &p->ins[i];
    if (x->kind == UOPI_P_LOOP) {
      K->loops[n++] = i;
      K->body[i] = 0;
    } else if (x->kind == UOPI_P_ENDLOOP) {
      if (!n || x->nsrc != 1 || x->src[0] != K->loops[n - 1]) BAD("ENDLOOP does not close the innermost LOOP");
      uint64_t m = K->body[K->loops[--n]];
      if (n) K->body[K->loops[n - 1]] |= m;
    } else if (x->kind == UOPI_P_STORE) {
      if (n) K->body[K->loops[n - 1]] |= slot_bit(x->slot);
    } else if (x->kind != UOPI_P_VALUE) {
      BAD("unknown instruction kind");
    }
  }
  uint32_t i = p->n;
  if (n) BAD("a LOOP is never closed");
  return 0;
}

static int verify(check *K, const char **why, uint32_t *at) {
  const uopi_prog *p = K->p;
  int r = bodies(K, why, at);
  if (r) return r;
  for (int b = 0; b < 64; b++) K->barrier[b] = -1;
  for (uint32_t i = 0; i < p->n; i++) {
    const uopi_pinst *x = &p->ins[i];
    uint32_t d = K->nloops;
    if (x->nsrc > 3) BAD("more than 3 operands");
    if (x->depth != (x->kind == UOPI_P_ENDLOOP ? d - 1 : d)) BAD("depth is not the number of open loops");
    uint64_t reads = 0;
    for (uint32_t j = 0; j < x->nsrc; j++) {
      uint32_t s = x->src[j];
      if (s >= i) BAD("an operand is not an earlier instruction");
      if (x->kind == UOPI_P_ENDLOOP) continue;
      uint8_t k = p->ins[s].kind;
      if (k != UOPI_P_VALUE && k != UOPI_P_LOOP) BAD("an operand is not a value");
      if (!K->live[s]) BAD("an operand is used after the loop it was made in closed");
      for (uint64_t b = K->reads[s]; b; b &= b - 1)
        if (K->barrier[__builtin_ctzll(b)] > (int64_t)s) BAD("a value that read a buffer is used after a store to it");
      reads |= K->reads[s];
    }
    int addr = x->nsrc && p->ins[x->src[0]].kind == UOPI_P_VALUE && p->ins[x->src[0]].op == UOPC_OP_INDEX;
    switch (x->kind) {
    case UOPI_P_VALUE:
      if (x->op == UOPC_OP_INDEX && (x->nsrc != 1 || x->slot < 0 || (uint32_t)x->slot >= p->nbufs))
        BAD("INDEX: not one index into a buffer slot of the kernel");
      if (x->op == UOPC_OP_LOAD) {
        if (x->nsrc != 1 || !addr || p->ins[x->src[0]].slot != x->slot) BAD("LOAD: not through an INDEX of its slot");
        reads |= slot_bit(x->slot);
      }
      if (x->op == UOPC_OP_CONST && x->nsrc) BAD("CONST with operands");
      K->reads[i] = reads;
      K->live[i] = 1;
      K->defs[K->ndefs++] = i;
      break;
    case UOPI_P_LOOP:
      if (x->nsrc != 1 || x->op != UOPC_OP_RANGE || x->dtype != UOPC_DT_I32) BAD("LOOP: not an i32 RANGE with an end");
      K->mark[K->nloops] = K->ndefs;
      K->loops[K->nloops++] = i;
      for (uint64_t b = K->body[i]; b; b &= b - 1) K->barrier[__builtin_ctzll(b)] = i;
      K->reads[i] = 0;
      K->live[i] = 1;
      K->defs[K->ndefs++] = i; /* the counter lives inside the loop */
      break;
    case UOPI_P_ENDLOOP:
      K->nloops--;
      while (K->ndefs > K->mark[K->nloops]) K->live[K->defs[--K->ndefs]] = 0;
      break;
    case UOPI_P_STORE:
      if (x->nsrc != 2 || !addr || p->ins[x->src[0]].slot != x->slot) BAD("STORE: not through an INDEX of its slot");
      K->barrier[__builtin_ctzll(slot_bit(x->slot))] = i;
      break;
    }
  }
  return 0;
}

int uopi_prog_verify(const uopi_prog *p, const char **why, uint32_t *at) {
  uopc_ctx *c = p->c;
  size_t n = p->n ? p->n : 1;
  check K = {.p = p};
  K.live = uopc_mem_alloc(c, n);
  K.reads = uopc_mem_alloc(c, n * sizeof *K.reads);
  K.body = uopc_mem_alloc(c, n * sizeof *K.body);
  K.loops = uopc_mem_alloc(c, n * sizeof *K.loops);
  K.defs = uopc_mem_alloc(c, n * sizeof *K.defs);
  K.mark = uopc_mem_alloc(c, n * sizeof *K.mark);
  int r = -1;
  *why = NULL;
  *at = 0;
  if (K.live && K.reads && K.body && K.loops && K.defs && K.mark) {
    memset(K.live, 0, n);
    r = verify(&K, why, at);
  }
  uopc_mem_free(c, K.live, n);
  uopc_mem_free(c, K.reads, n * sizeof *K.reads);
  uopc_mem_free(c, K.body, n * sizeof *K.body);
  uopc_mem_free(c, K.loops, n * sizeof *K.loops);
  uopc_mem_free(c, K.defs, n * sizeof *K.defs);
  uopc_mem_free(c, K.mark, n * sizeof *K.mark);
  return r;
}

/* ---- the printer --------------------------------------------------------------------- */

static void operands(const uopi_pinst *x, FILE *f, uint32_t from) {
  for (uint32_t j = from; j < x->nsrc; j++) fprintf(f, "%s%%%u", j > from ? ", " : " ", x->src[j]);
}

void uopi_prog_print(const uopi_prog *p, FILE *f) {
  fprintf(f, "program: %u instructions, %u buffers, loops %u deep\n", p->n, p->nbufs, p->max_depth);
  for (uint32_t i = 0; i < p->n; i++) {
    const uopi_pinst *x = &p->ins[i];
    uint32_t indent = 2 * x->depth + 2;
    const char *dt = uopc_dtype_name((uopc_dtype)x->dtype);
    switch (x->kind) {
    case UOPI_P_LOOP:
      fprintf(f, "%*sloop %%%u < %%%u   ; range idx=%lld\n", (int)indent, "", i, x->src[0], (long long)x->node->arg.i);
      break;
    case UOPI_P_ENDLOOP: fprintf(f, "%*sendloop %%%u\n", (int)indent, "", x->src[0]); break;
    case UOPI_P_STORE: fprintf(f, "%*sstore %s %%%u, %%%u\n", (int)indent, "", dt, x->src[0], x->src[1]); break;
    default:
      fprintf(f, "%*s%%%u = %s %s", (int)indent, "", i, uopc_op_spelling((uopc_op)x->op), dt);
      if (x->op == UOPC_OP_CONST) {
        char num[40];
        uopc_dtype t = (uopc_dtype)x->dtype;
        uopc_fmt_scalar(uopc_dtype_is_float(t) ? x->node->arg.f : (double)x->node->arg.i, t, num);
        fprintf(f, " %s", num);
      } else if (x->op == UOPC_OP_INDEX) {
        fprintf(f, " slot=%d,", x->slot);
      }
      operands(x, f, 0);
      if (x->flags & UOPI_PF_GUARD) fprintf(f, "   ; checked");
      fputc('\n', f);
    }
  }
}
