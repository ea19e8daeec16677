/* test/fuzz_cache.c - libFuzzer target for the kernel cache's entry loader
 * (uopi_kfile_decode, uopi_kfile_match: cache entries are untrusted input).
 *
 * The first input byte chooses how the rest is used:
 *   even: the bytes as they are (the CRCs stop almost everything early);
 *   odd:  the bytes with both CRC-32s recomputed first, so that mutations
 *         reach the length checks, the name check and the object size check.
 * An accepted entry must be self-consistent and must match the key it
 * describes, and no other.  Seeds: test/corpus_cache/ (entries written by
 * `uopc cache warm`).  Build with -DUOPC_FUZZ=ON -DCMAKE_C_COMPILER=clang-19,
 * then: fuzz_cache test/corpus_cache
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "kcache/kcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what) {
  fprintf(stderr, "fuzz_cache: %s\n", what);
  abort();
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_crcs(uint8_t *p, size_t n) {
  if (n < 76) return;
  uint32_t h = rd32(p + 12);
  if (h < 76 || h > n) return;
  wr32(p + 56, (uint32_t)crc32(crc32(0L, Z_NULL, 0), p + h, (uInt)(n - h)));
  wr32(p + h - 4, (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, h - 4));
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) die("out of memory");
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  int fix = data[0] & 1;
  size_t n = size - 1;
  uint8_t *p = malloc(n ? n : 1);
  if (!p) return 0;
  memcpy(p, data + 1, n);
  if (fix) fix_crcs(p, n);
  uopi_kfile f;
  const char *why = uopi_kfile_decode(p, n, &f);
  if (!why) {
    if (!f.obj || f.obj_size == 0) die("accepted without an object");
    if (f.header_size + f.payload_size != n) die("accepted with a size mismatch");
    if (f.meta.nbufs > UOPI_KERNEL_MAX_BUFS) die("accepted too many buffers");
    if (!f.meta.name[0] || strlen(f.meta.name) >= UOPI_KCACHE_NAME_MAX) die("accepted a bad name");
    /* the key the entry describes matches it; one byte of graph more does not */
    char *codegen = dup_n(f.codegen, f.codegen_len), *target = dup_n(f.target, f.target_len);
    char *pipeline = dup_n(f.pipeline, f.pipeline_len);
    uopi_kkey key = {{f.format, f.tier, f.flags, codegen, target, pipeline}, (uint8_t *)f.graph, f.graph_len, {0}};
    memcpy(key.hash, f.hash, UOPI_KCACHE_HASH);
    int clean = strlen(codegen) == f.codegen_len && strlen(target) == f.target_len && strlen(pipeline) == f.pipeline_len;
    if (clean && uopi_kfile_match(&f, &key, &f.meta)) die("an entry does not match its own key");
    uint8_t *longer = malloc(f.graph_len + 1);
    if (!longer) die("out of memory");
    memcpy(longer, f.graph, f.graph_len);
    longer[f.graph_len] = 0;
    key.graph = longer;
    key.graph_len = f.graph_len + 1;
    if (!uopi_kfile_match(&f, &key, &f.meta)) die("an entry matches another key");
    /* re-encoding gives an entry that decodes to the same fields */
    if (clean) {
      key.graph = (uint8_t *)f.graph;
      key.graph_len = f.graph_len;
      size_t m;
      uint8_t *again = uopi_kfile_encode(&key, &f.meta, f.obj, f.obj_size, &m);
      if (again) {
        uopi_kfile g;
        if (uopi_kfile_decode(again, m, &g)) die("a re-encoded entry does not decode");
        if (g.obj_size != f.obj_size || memcmp(g.obj, f.obj, f.obj_size) != 0) die("re-encoding changed the object");
        free(again);
      }
    }
    free(longer);
    free(codegen);
    free(target);
    free(pipeline);
  } else if (!why[0]) {
    die("rejected without a reason");
  }
  free(p);
  return 0;
}
