/* lib/schedule/schedule.c - a tensor program's schedule: CALLs inlined, the
 * buffers decided (realize.c), one kernel per computed buffer (lower.c), in
 * an order where every kernel runs after the kernels of the buffers it
 * reads (buffers are made sources first).  UOPC_DEBUG=schedule prints the
 * kernels and temporaries as they are decided.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "schedule/schedule.h"

uint32_t uopi_schedule_add_buf(uopi_schedule *s, uopi_pb_kind kind, uopc_dtype t, const int32_t *shape, uint32_t ndim,
                               uopc_node *node) {
  if (!uopi_grow(s->c, (void **)&s->bufs, &s->cap_bufs, s->nbufs + 1, sizeof *s->bufs)) return UINT32_MAX;
  uopi_pbuf *b = &s->bufs[s->nbufs];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->dtype = t;
  b->ndim = ndim;
  b->node = node;
  b->poison = UINT32_MAX;
  b->shape = uopi_arena(s->c, (ndim ? ndim : 1) * sizeof *b->shape);
  if (!b->shape) return UINT32_MAX;
  b->numel = 1;
  for (uint32_t i = 0; i < ndim; i++) b->shape[i] = shape[i], b->numel *= shape[i];
  return s->nbufs++;
}

uint32_t uopi_schedule_add_check(uopi_schedule *s, uopi_check_kind kind, uopc_op op, int64_t size, const uopc_node *at) {
  for (uint32_t i = 0; i < s->nchecks; i++) /* the same check of the same node: one code */
    if (s->checks[i].kind == kind && s->checks[i].at == at) return i + 1;
  if (!uopi_grow(s->c, (void **)&s->checks, &s->cap_checks, s->nchecks + 1, sizeof *s->checks)) return 0;
  s->checks[s->nchecks] = (uopi_scheck){kind, op, size, at, s->nkernels};
  return ++s->nchecks;
}

static const char *kind_name(uopi_pb_kind k) {
  switch (k) {
  case UOPI_PB_INPUT: return "input";
  case UOPI_PB_CONST: return "const";
  case UOPI_PB_TEMP: return "temp";
  case UOPI_PB_OUTPUT: return "output";
  case UOPI_PB_STATUS: case UOPI_PB_STATUSF: return "status";
  case UOPI_PB_POISON: return "poison";
  }
  return "?";
}

void uopi_schedule_describe(const uopi_schedule *s, uopi_sbuf *b, const char *prefix) {
  for (uint32_t i = 0; i < s->nbufs; i++) {
    const uopi_pbuf *pb = &s->bufs[i];
    char sh[128];
    uopc_shape_str(pb->shape, pb->ndim, sh, sizeof sh);
    uopi_sb_printf(b, "%sbuffer %u: %s %s%s%s\n", prefix, i, kind_name(pb->kind), uopc_dtype_name(pb->dtype), sh,
                   pb->node ? (pb->node->op == UOPC_OP_PARAM ? " (param)" : "") : "");
  }
  for (uint32_t k = 0; k < s->nkernels; k++) {
    const uopi_skernel *kk = &s->kernels[k];
    uopi_sb_printf(b, "%skernel %u: computes buffer %u (%s of %s), reads", prefix, k, kk->out,
                   kind_name(s->bufs[kk->out].kind), uopc_op_name((uopc_op)s->bufs[kk->out].node->op));
    for (uint32_t j = 0; j < kk->nbufs; j++)
      if (kk->map[j] != kk->out && s->bufs[kk->map[j]].kind != UOPI_PB_STATUS &&
          s->bufs[kk->map[j]].kind != UOPI_PB_STATUSF && s->bufs[kk->map[j]].kind != UOPI_PB_POISON)
        uopi_sb_printf(b, " %u", kk->map[j]);
    uopi_sb_printf(b, "%s, %u graph nodes\n", kk->status != UINT32_MAX ? ", checks undefined ops" : "",
                   uopc_graph_size(s->c, kk->root));
  }
  uopi_sb_printf(b, "%s%u kernel%s\n", prefix, s->nkernels, s->nkernels == 1 ? "" : "s");
}

static void debug_print(const uopi_schedule *s) {
  const char *d = getenv("UOPC_DEBUG");
  if (!d || !strstr(d, "schedule")) return;
  uopi_sbuf b;
  uopi_sb_init(&b, s->c);
  uopi_schedule_describe(s, &b, "uopc schedule: ");
  char *t = uopi_sb_finish(&b);
  if (t) fputs(t, stderr), uopc_mem_free(s->c, t, strlen(t) + 1);
}

uopc_status uopi_schedule_build(uopc_ctx *c, uopc_node *root, unsigned flags, unsigned vector_bits,
                                uopi_schedule *s) {
  memset(s, 0, sizeof *s);
  s->c = c;
  s->flags = flags;
  s->vector_bits = vector_bits >= 512 ? 512 : vector_bits >= 256 ? 256 : 128;
  if (!uopi_check_node(c, root, "plan")) return uopc_ctx_error(c)->code;
  if (uopi_op_flags(root->op) & UOPC_OPF_EFFECT)
    return uopi_fail_at(c, UOPC_ERR_TYPE, root, "a tensor program's root is a value, not %s (a kernel: use uopc_compile)",
                        uopc_op_name((uopc_op)root->op)),
           UOPC_ERR_TYPE;
  uopc_node *p = uopi_inline_calls(c, root);
  if (!p) return uopc_ctx_error(c)->code;
  s->program = p;
  uopi_realized r = {uopi_table_acquire(c)};
  if (!r.buf) return uopc_ctx_error(c)->code;
  uopc_status st = uopi_realize(s, &r);
  for (uint32_t b = 0; b < s->nbufs && st == UOPC_OK; b++)
    if ((s->bufs[b].kind == UOPI_PB_TEMP && !s->bufs[b].transposed) || s->bufs[b].kind == UOPI_PB_OUTPUT)
      st = uopi_lower_buffer(s, &r, b);
  uopi_table_release(c, r.buf);
  if (st == UOPC_OK) debug_print(s);
  return st;
}

void uopi_schedule_free(uopi_schedule *s) {
  if (!s || !s->c) return;
  for (uint32_t i = 0; i < s->nbufs; i++) free(s->bufs[i].data);
  uopc_mem_free(s->c, s->bufs, (size_t)s->cap_bufs * sizeof *s->bufs);
  uopc_mem_free(s->c, s->kernels, (size_t)s->cap_kernels * sizeof *s->kernels);
  uopc_mem_free(s->c, s->checks, (size_t)s->cap_checks * sizeof *s->checks);
  memset(s, 0, sizeof *s);
}
