/* lib/lower/nodemap.c - the nodes of one kernel, numbered densely in
 * post-order, with a hash table from node id to number sized by the kernel
 * (lib/lower/nodemap.h).
 */
#include <string.h>

#include "lower/nodemap.h"

static uint32_t hash_id(uint32_t id) { return id * 0x9E3779B1u; }

uint32_t uopi_nodemap_get(const uopi_nodemap *m, const uopc_node *u) {
  if (!m->slot) return UINT32_MAX;
  for (uint32_t h = hash_id(u->id) & m->mask;; h = (h + 1) & m->mask) {
    uint32_t v = m->slot[h];
    if (!v) return UINT32_MAX;
    if (m->node[v - 1] == u) return v - 1;
  }
}

/* Doubles the hash table and rehashes (0 on OOM, error set). */
static int grow_table(uopi_nodemap *m) {
  uint32_t nslots = m->slot ? 2 * (m->mask + 1) : 64;
  uint32_t *s = uopc_mem_alloc(m->c, (size_t)nslots * sizeof *s);
  if (!s) return 0;
  memset(s, 0, (size_t)nslots * sizeof *s);
  uint32_t mask = nslots - 1;
  for (uint32_t i = 0; i < m->n; i++) {
    uint32_t h = hash_id(m->node[i]->id) & mask;
    while (s[h]) h = (h + 1) & mask;
    s[h] = i + 1;
  }
  if (m->slot) uopc_mem_free(m->c, m->slot, (size_t)(m->mask + 1) * sizeof *m->slot);
  m->slot = s;
  m->mask = mask;
  return 1;
}

/* Numbers u (not yet in the map): 0 on OOM. */
static int add(uopi_nodemap *m, uopc_node *u) {
  if ((!m->slot || 2 * (m->n + 1) > m->mask + 1) && !grow_table(m)) return 0;
  if (!uopi_grow(m->c, (void **)&m->node, &m->cap, m->n + 1, sizeof *m->node)) return 0;
  m->node[m->n++] = u;
  uint32_t h = hash_id(u->id) & m->mask;
  while (m->slot[h]) h = (h + 1) & m->mask;
  m->slot[h] = m->n;
  return 1;
}

typedef struct frame {
  uopc_node *u;
  uint32_t next;
} frame;

/* The walk marks a node seen when it is first pushed (in a second map, in
   push order) and numbers it in m when it is popped, after its sources. */
uopc_status uopi_nodemap_build(uopc_ctx *c, uopc_node *root, uopi_nodemap *m) {
  memset(m, 0, sizeof *m);
  m->c = c;
  uopi_nodemap seen = {.c = c}; /* nodes pushed (numbered in push order) */
  frame *st = NULL;
  uint32_t cap = 0, sp = 0;
  int ok = add(&seen, root) && uopi_grow(c, (void **)&st, &cap, 1, sizeof *st);
  if (ok) st[sp++] = (frame){root, 0};
  while (ok && sp) {
    frame *f = &st[sp - 1];
    if (f->next < f->u->nsrc) {
      uopc_node *s = f->u->src[f->next++];
      if (uopi_nodemap_get(&seen, s) != UINT32_MAX) continue;
      ok = add(&seen, s) && uopi_grow(c, (void **)&st, &cap, sp + 1, sizeof *st);
      if (ok) st[sp++] = (frame){s, 0};
      continue;
    }
    ok = add(m, f->u);
    sp--;
  }
  uopc_mem_free(c, st, (size_t)cap * sizeof *st);
  uopi_nodemap_free(&seen);
  if (!ok) {
    uopi_nodemap_free(m);
    return UOPC_ERR_NOMEM;
  }
  return UOPC_OK;
}

void uopi_nodemap_free(uopi_nodemap *m) {
  if (!m || !m->c) return;
  uopc_mem_free(m->c, m->node, (size_t)m->cap * sizeof *m->node);
  if (m->slot) uopc_mem_free(m->c, m->slot, (size_t)(m->mask + 1) * sizeof *m->slot);
  m->node = NULL;
  m->slot = NULL;
  m->n = m->cap = m->mask = 0;
}
