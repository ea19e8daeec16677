/* lib/rewrite/graph_rewrite.c - the engine (seed 2.4).
 *
 * Bottom-up, memoized, iterative rewrite to a fixed point.  The seed's three
 * stages, on an explicit stack of small frames:
 *
 *   stage 0  schedule the sources: the frame keeps a cursor i; the first
 *            source (from i on) without a normal form is pushed, and the
 *            frame resumes at that source when it comes back.  A node is
 *            pushed only when it is reached and not done, so each node is
 *            pushed once per visit and the stack is as deep as the graph,
 *            not as long as its edge list.  The visit order is the seed's:
 *            sources left to right, post-order, which is uopc_toposort's.
 *   stage 1  (all sources done) rebuild the node from its sources' normal
 *            forms (only when one differs), count a step, try the rules;
 *            no rule: done[u] = n; the result m is done: done[u] = done[m];
 *            otherwise the frame becomes stage 2 and m is pushed.
 *   stage 2  m is normalized: done[u] = done[m].
 *
 * The node being worked on lives in locals; only the nodes that wait for it
 * (its users, and a node whose rule result it is) are frames on the stack.
 * A binary node whose sources changed is rebuilt by uopc_replace's fast path
 * inline, and the rules are tried by the step of step.h inline: the loop
 * makes no call on a node that no rule rewrites.
 *
 * `done` is a side table indexed by node id (uopi_table), fresh each call.
 * No recursion: a 1,000,000-deep chain needs a few dozen bytes of C stack.
 */
#include <string.h>

#include "core/fast.h"
#include "rewrite/rw.h"
#include "rewrite/step.h"
#include "uopc/rewrite.h"

typedef struct frame {
  uopc_node *u;         /* the node being rewritten */
  uopc_node *aux;       /* stage 2: the rule's result, being normalized */
  uint32_t i;           /* stage 0: the next source to look at */
  uint32_t stage : 2;   /* 0 or 2 (stage 1 runs when the cursor reaches the end) */
  uint32_t changed : 1; /* some source's normal form differs from the source */
  uint32_t chain : 29;  /* how many rule results in a row led to this node */
} frame;

#define CHAIN_MAX ((1u << 29) - 1)

/* A larger array for the stack or the sources: the first ones live on the
   C stack (small graphs need no allocation), the rest in context memory. */
static int grow_arr(uopc_ctx *c, void **p, void *local, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return 1;
  uint64_t ncap = (uint64_t)*cap * 2;
  while (ncap < need) ncap *= 2;
  if (ncap > UINT32_MAX || ncap * elem > SIZE_MAX / 2) {
    uopc_fail(c, UOPC_ERR_NOMEM, "out of memory (array of %u)", need);
    return 0;
  }
  void *q;
  if (*p == local) {
    q = uopc_mem_alloc(c, (size_t)ncap * elem);
    if (q) memcpy(q, local, (size_t)*cap * elem);
  } else {
    q = uopc_mem_realloc(c, *p, (size_t)*cap * elem, (size_t)ncap * elem);
  }
  if (!q) return 0;
  *p = q;
  *cap = (uint32_t)ncap;
  return 1;
}

/* The step limit was reached: 1 with *max raised when the limit grows with
   the work (steps_per_node per node of the input and per node the rules
   made), else 0 with the error.  *input is the input's size, 0 until it is
   needed (it is counted once). */
static __attribute__((noinline)) int more_steps(uopc_ctx *c, const uopc_rewrite_limits *lim, int fixed,
                                                uint64_t steps, uint32_t n0, uopc_node *root, uint64_t *input,
                                                uint64_t *max) {
  if (!fixed && !*input && !(*input = uopc_graph_size(c, root))) return 0; /* out of memory */
  uint64_t nodes = *input + (uopc_ctx_count(c) - n0);
  if (!fixed) {
    uint64_t want = nodes > UINT64_MAX / lim->steps_per_node ? UINT64_MAX : nodes * lim->steps_per_node;
    if (want >= steps) {
      *max = want;
      return 1;
    }
    uopc_fail(c, UOPC_ERR_REWRITE,
              "graph_rewrite did not converge: %llu rule steps for %llu nodes (the limit is %llu steps per node, "
              "at least %llu; a rule loops? raise it with UOPC_REWRITE_STEPS_PER_NODE or uopc_ctx_set_rewrite_limits)",
              (unsigned long long)steps - 1, (unsigned long long)nodes, (unsigned long long)lim->steps_per_node,
              (unsigned long long)lim->min_steps);
    return 0;
  }
  uopc_fail(c, UOPC_ERR_REWRITE,
            "graph_rewrite did not converge: %llu rule steps, the max_steps given (a rule loops?)",
            (unsigned long long)steps - 1);
  return 0;
}

static __attribute__((noinline)) void chain_error(uopc_ctx *c, uint32_t chain) {
  uopc_fail(c, UOPC_ERR_REWRITE,
            "graph_rewrite did not converge: a node was rewritten %u times in a row (a rule loops? raise the "
            "limit with UOPC_REWRITE_CHAIN or uopc_ctx_set_rewrite_limits)",
            chain);
}

#define LOCAL_FRAMES 128
#define LOCAL_SRCS 16

uopc_node *uopc_graph_rewrite(uopc_ctx *c, uopc_node *root, const uopc_matcher *m, void *ctx,
                              uint64_t max_steps) {
  if (!c) return NULL;
  if (!uopi_check_node(c, root, "graph_rewrite")) return NULL;
  if (!m) return uopc_fail(c, UOPC_ERR_ARG, "graph_rewrite: matcher is NULL");
  uopc_rewrite_limits lim = uopc_ctx_rewrite_limits(c);
  const int fixed = max_steps != 0;
  if (!fixed) max_steps = lim.min_steps;
  const uint32_t chain_max = lim.max_chain < CHAIN_MAX ? (uint32_t)lim.max_chain : CHAIN_MAX;
  const uint32_t n0 = uopc_ctx_count(c);
  uint64_t input = 0; /* nodes of the input, counted when first needed */
  uopi_rw_env env;
  uopi_rw_env_init(&env, c, m, ctx);
  uopi_table *done = uopi_table_acquire(c);
  if (!done) return NULL;
  /* a small context: room at once for the nodes the rewrite is likely to
     make (large ones grow the memo as usual, by doubling) */
  uint32_t nn = uopc_ctx_count(c);
  if (nn < 4096 && 2 * nn + 64 > done->cap && !uopi_table_set(c, done, 2 * nn + 63, NULL)) {
    uopi_table_release(c, done);
    return NULL;
  }

  if (c->trace_fn) {
    uopc_trace_event ev = {UOPC_TRACE_BEGIN, m->name, NULL, root, NULL, c->trace_depth};
    c->trace_fn(c->trace_ud, &ev);
  }
  c->trace_depth++;
  const uint32_t *start = m->start;
  frame stk_local[LOCAL_FRAMES];
  uopc_node *tmp_local[LOCAL_SRCS];
  frame *stk = stk_local;
  uopc_node **tmp = tmp_local;
  uint32_t cap = LOCAL_FRAMES, tcap = LOCAL_SRCS, sp = 0;
  uint64_t steps = 0;
  uopc_node *result = NULL;
  /* the memo, read through locals (stores into it cannot change them) */
  uopi_slot *te = done->e;
  uint32_t tn = done->cap, tgen = done->cur;
#define GET(id) ((id) < tn && te[id].gen == tgen ? (uopc_node *)te[id].val : NULL)
#define SET(id, v)                                                             \
  do {                                                                         \
    uint32_t id_ = (id);                                                       \
    if (__builtin_expect(id_ < tn, 1)) {                                       \
      te[id_].val = (v);                                                       \
      te[id_].gen = tgen;                                                      \
    } else {                                                                   \
      if (!uopi_table_set(c, done, id_, (v))) goto out;                        \
      te = done->e, tn = done->cap;                                            \
    }                                                                          \
  } while (0)
/* A node without sources whose op has no rules is its own normal form: it is
   finished where it is met (one step, as if it had been pushed). */
#define PLAIN_LEAF(x) ((x)->nsrc == 0 && start[(x)->op] == start[(x)->op + 1])
#define STEP()                                                                 \
  do {                                                                         \
    if (__builtin_expect(++steps > max_steps, 0) && !more_steps(c, &lim, fixed, steps, n0, root, &input, &max_steps)) \
      goto out;                                                                \
  } while (0)

  /* The node being worked on is u (chain: its frame's count), held in
     locals; the stack holds its suspended users (stage 0, with their
     cursor) and the nodes waiting for a rule's result (stage 2). */
  uopc_node *u = root;
  uint32_t chain = 0, i, ns;
  unsigned changed;
descend: /* u is new: its sources from the first */
  i = 0;
  changed = 0;
scan: /* stage 0: the next source without a normal form */
  ns = u->nsrc;
  for (; i < ns; i++) {
    uopc_node *s = u->src[i];
    uopc_node *r = GET(s->id);
    if (!r) {
      if (!PLAIN_LEAF(s)) break;
      STEP();
      SET(s->id, s);
      r = s;
    }
    changed |= r != s;
  }
  if (i < ns) {
    if (sp == cap && !grow_arr(c, (void **)&stk, stk_local, &cap, sp + 1, sizeof *stk)) goto out;
    stk[sp++] = (frame){u, NULL, i, 0, changed & 1u, chain};
    u = u->src[i];
    chain = 0;
    goto descend;
  }
  /* stage 1 (a rule's result may have finished u meanwhile: seed's skip) */
  if (GET(u->id)) goto pop;
  STEP();
  {
    uopc_node *n = u;
    if (changed) {
      if (ns == 2 && (uopi_op_flags(u->op) & UOPC_OPF_BINARY) && uopi_owns(c, u)) {
        /* uopc_replace's own fast path, without the call */
        uopc_node *a = GET(u->src[0]->id), *b = GET(u->src[1]->id);
        if (!uopi_fast_bin(c, (uopc_op)u->op, UOPC_DT_VOID, a, b, &n)) {
          uopc_node *ab[2] = {a, b};
          n = uopc_replace(c, u, ab, 2);
        }
      } else {
        if (ns > tcap && !grow_arr(c, (void **)&tmp, tmp_local, &tcap, ns, sizeof *tmp)) goto out;
        for (uint32_t j = 0; j < ns; j++) tmp[j] = GET(u->src[j]->id);
        n = uopc_replace(c, u, tmp, ns);
      }
      if (!n) goto out;
    }
    uopc_node *r = NULL;
    if (start[n->op] != start[n->op + 1] && uopi_step(&env, n, &r) < 0) goto out;
    if (r) {
      uopc_node *d = GET(r->id);
      if (!d && PLAIN_LEAF(r)) {
        STEP();
        SET(r->id, r);
        d = r;
      }
      if (!d) {
        /* stage 2: u waits while r is normalized */
        if (__builtin_expect(chain + 1 > chain_max, 0)) {
          chain_error(c, chain + 1);
          goto out;
        }
        if (sp == cap && !grow_arr(c, (void **)&stk, stk_local, &cap, sp + 1, sizeof *stk)) goto out;
        stk[sp++] = (frame){u, r, 0, 2, 0, chain};
        u = r;
        chain++;
        goto descend;
      }
      n = d;
    }
    SET(u->id, n);
  }
pop: /* u is done: back to the node that waits for it */
  while (sp) {
    frame *f = &stk[--sp];
    u = f->u;
    if (f->stage != 2) {
      i = f->i;
      changed = f->changed;
      chain = f->chain;
      goto scan;
    }
    uopc_node *r = GET(f->aux->id); /* stage 2: r is normalized */
    UOPI_ASSERT(r);
    SET(u->id, r);
  }
  result = GET(root->id);
#undef GET
#undef SET
out:
  if (stk != stk_local) uopc_mem_free(c, stk, cap * sizeof *stk);
  if (tmp != tmp_local) uopc_mem_free(c, tmp, tcap * sizeof *tmp);
  uopi_table_release(c, done);
  c->trace_depth--;
  if (c->trace_fn) {
    uopc_trace_event ev = {UOPC_TRACE_END, m->name, NULL, root, result, c->trace_depth};
    c->trace_fn(c->trace_ud, &ev);
  }
  return result;
}
