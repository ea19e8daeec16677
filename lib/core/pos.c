/* lib/core/pos.c - where a node was written: the .uir file, line and column
 * of the line that defined it, recorded by the parser so that errors about a
 * node (run's "division by zero in FLOORDIV") can point at it.
 *
 * A side table by node id in the context, one packed word per node:
 * file index (16 bits) | line (32 bits) | column (16 bits), 0 for "not
 * known".  Nodes that rules create have no position.  The first definition
 * of a node wins (hash consing can make two lines the same node).
 */
#include <string.h>

#include "core/ctx.h"

static uint16_t file_index(uopc_ctx *c, const char *file) {
  if (!file) file = "<input>";
  for (uint32_t i = c->n_pos_files; i-- > 0;)
    if (strcmp(c->pos_files[i], file) == 0) return (uint16_t)(i + 1);
  if (c->n_pos_files == UINT16_MAX - 1) return 0;
  if (!uopi_grow(c, (void **)&c->pos_files, &c->cap_pos_files, c->n_pos_files + 1, sizeof *c->pos_files)) return 0;
  size_t len = strlen(file) + 1;
  char *copy = uopi_arena(c, len);
  if (!copy) return 0;
  memcpy(copy, file, len);
  c->pos_files[c->n_pos_files++] = copy;
  return (uint16_t)c->n_pos_files;
}

int uopi_pos_set(uopc_ctx *c, const uopc_node *u, const char *file, int line, int col) {
  if (line <= 0) return 1;
  if (u->id >= c->cap_pos) {
    uint32_t need = u->id + 1, cap = c->cap_pos;
    if (!uopi_grow(c, (void **)&c->pos, &cap, need, sizeof *c->pos)) return 0;
    memset(c->pos + c->cap_pos, 0, (size_t)(cap - c->cap_pos) * sizeof *c->pos);
    c->cap_pos = cap;
  }
  if (c->pos[u->id]) return 1;
  uint16_t f = file_index(c, file);
  if (!f) return 0;
  uint64_t cc = col < 0 ? 0 : col > 0xffff ? 0xffff : (uint64_t)col;
  c->pos[u->id] = ((uint64_t)f << 48) | ((uint64_t)(uint32_t)line << 16) | cc;
  return 1;
}

int uopc_node_pos(const uopc_ctx *c, const uopc_node *u, const char **file, int *line, int *col) {
  if (!c || !u || !uopi_owns(c, u) || u->id >= c->cap_pos || !c->pos[u->id]) return 0;
  uint64_t p = c->pos[u->id];
  if (file) *file = c->pos_files[(p >> 48) - 1];
  if (line) *line = (int)(uint32_t)(p >> 16);
  if (col) *col = (int)(p & 0xffff);
  return 1;
}
