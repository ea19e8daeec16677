/* lib/support/support.h - the lowest layer: what every other folder may use.
 *
 *   sbuf.c     a growable string through the context's allocator, with an
 *              optional length cap ("..." when cut)
 *   fmt_num.c  shortest round-trip decimals (uopc_fmt_double, uopc_fmt_scalar)
 *   round.c    values into a dtype's value set (uopc_round_f32/_f16, the f16
 *              bit conversions, uopc_wrap_i32)
 *   env.c      the UOPC_* environment variables (uopc_env_check)
 *
 * The public functions are declared in include/uopc/ (uir.h, algebra.h);
 * the internal ones here.
 */
#ifndef UOPI_SUPPORT_H
#define UOPI_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* FNV-1a of s[0..len), 64 bits folded to 32: the hash of names (text/names.c)
   and of cache entry paths (kcache/disk.c). */
static inline uint32_t uopi_fnv1a(const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)s[i];
    h *= 0x100000001b3ull;
  }
  return (uint32_t)(h ^ (h >> 32));
}

/* uopc_wrap_i32, inline: the i32 of x's low 32 bits, without the
   implementation-defined uint32 -> int32 conversion (u >= 2^31 stands for
   u - 2^32 = -(0xffffffff - u) - 1). */
static inline int32_t uopi_wrap_i32(int64_t x) {
  uint32_t u = (uint32_t)(uint64_t)x; /* unsigned conversions are modular */
  return u <= 0x7fffffffu ? (int32_t)u : -(int32_t)(0xffffffffu - u) - 1;
}

/* A growing string.  After a failed allocation it stays failed (ok == 0)
   and every append is a no-op; the context's error says out of memory.
   With max set (uopi_sb_init_max), appends stop at max bytes and the text
   ends with "..." (cut is set). */
typedef struct uopi_sbuf {
  uopc_ctx *c;
  char *s;
  size_t n, cap;
  size_t max;  /* 0: no cap */
  int ok, cut;
} uopi_sbuf;

UOPI_FUNC void uopi_sb_init(uopi_sbuf *b, uopc_ctx *c);
UOPI_FUNC void uopi_sb_init_max(uopi_sbuf *b, uopc_ctx *c, size_t max);
UOPI_FUNC void uopi_sb_putn(uopi_sbuf *b, const char *s, size_t n);
UOPI_FUNC void uopi_sb_puts(uopi_sbuf *b, const char *s);
UOPI_FUNC void uopi_sb_putc(uopi_sbuf *b, char ch);
UOPI_FUNC void uopi_sb_printf(uopi_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The NUL-terminated string, allocated with exactly strlen + 1 bytes (so the
   caller frees it with uopc_mem_free(c, s, strlen(s) + 1)); NULL if any
   allocation failed.  The buffer is empty afterwards. */
UOPI_FUNC char *uopi_sb_finish(uopi_sbuf *b);
UOPI_FUNC void uopi_sb_free(uopi_sbuf *b);

/* A positive decimal integer from the environment variable name: 1 and *out,
   or 0 (unset or not a positive integer: the caller keeps its default). */
UOPI_FUNC int uopi_env_count(const char *name, uint64_t *out);

/* The environment variable name as a switch: 0 for 0, off, no, false; 1
   for 1, on, yes, true; -1 unset or anything else (the caller's default
   stands). */
UOPI_FUNC int uopi_env_onoff(const char *name);

/* The value of the environment variable name when it is one token of at
   most 200 characters, each a letter, a digit or one of extra (for instance
   "-_." for a CPU name); NULL when unset, empty or anything else (the
   caller keeps its default; uopc_env_check warns about the value). */
UOPI_FUNC const char *uopi_env_token(const char *name, const char *extra);

#endif
