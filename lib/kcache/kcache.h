/* lib/kcache/kcache.h - the kernel cache: compiled kernels reused in memory
 * and across processes (docs/cache.md).
 *
 * A store, not a compiler: lib/compile.c asks it for an entry and, on a miss,
 * fills the entry itself.
 *
 *   compile.c ──raw key──▶ memory ──prepare, key──▶ memory ──miss──▶ disk entry ──miss──▶ compile.c
 *             (as given)   (alias)                  (entry)          (disk.c)             fills it
 *
 * The key (key.c) of a prepared kernel at a tier is
 *   - the environment: UOPI_KCACHE_FORMAT, the codegen id (a hash of the
 *     sources that decide the object code, made by the build),
 *     uopi_jit_target_id() (LLVM version, triple, CPU, features, cl::opts),
 *     the tier, the compile flags (UOPC_COMPILE_*: fast math changes the
 *     code) and the pipeline text;
 *   - the graph: a structural serialization of the prepared kernel (nodes in
 *     toposort order, sources by position, never pointers or ids).
 * Its hash is SipHash-2-4 (128-bit output) of the graph bytes keyed by a
 * SipHash of the environment.  The hash names entries (memory bucket, file
 * name); equality is always decided on the full key, so a collision can only
 * cost a miss, never run the wrong code.
 *
 * Threads: everything here may be called from any number of threads.  The
 * memory table has one mutex, held around table operations only, never
 * around LLVM or file I/O.
 */
#ifndef UOPI_KCACHE_KCACHE_H
#define UOPI_KCACHE_KCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "jit/jit.h"
#include "lower/kernel.h"
#include "uopc/cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cache format: bump it whenever the file layout, the key serialization
   or the kernel calling convention changes. */
#define UOPI_KCACHE_FORMAT 3u  /* 2: kernels take an array of buffer pointers (up to 64 buffers); 3: the object stored raw */
#define UOPI_KCACHE_MAGIC "UOPCKRN"     /* 8 bytes with its NUL */
#define UOPI_KCACHE_SUFFIX ".ukc"
#define UOPI_KCACHE_HASH 16             /* bytes of a key hash */
#define UOPI_KCACHE_NAME_MAX 64         /* a kernel symbol, NUL included */

/* ---- hashing (key.c) ---------------------------------------------- */

/* SipHash-2-4 with the 128-bit output of the reference implementation
   (veorq/SipHash, outlen 16): out = 16 bytes, little endian. */
UOPI_FUNC void uopi_siphash128(const uint8_t key[16], const void *data, size_t n, uint8_t out[16]);
/* MurmurHash3 x64_128 (Appleby's public-domain algorithm) with its two
   64-bit lanes started from the key (le64(key), le64(key + 8)) instead of
   both from a 32-bit seed; a key of le64 = seed in both halves gives the
   reference results.  out = h1 then h2, little endian.  About four times
   faster than SipHash here; it names the raw keys, which live in memory only
   and are compared byte for byte (docs/cache.md). */
UOPI_FUNC void uopi_murmur3_128(const uint8_t key[16], const void *data, size_t n, uint8_t out[16]);

/* ---- keys ------------------------------------------------------------------ */

/* What the object code depends on besides the graph.  Strings are static or
   owned by the engine (valid while it is initialized). */
typedef struct uopi_kenv {
  uint32_t format;        /* UOPI_KCACHE_FORMAT */
  uint32_t tier;          /* uopi_jit_tier */
  uint32_t flags;         /* the compile flags (uopc_compile_opts.flags, UOPC_COMPILE_*) */
  const char *codegen;    /* uopi_kcache_codegen_id() */
  const char *target;     /* uopi_jit_target_id() */
  const char *pipeline;   /* uopi_jit_tier_pipeline(tier) */
} uopi_kenv;

/* A key: the environment and the graph bytes.  graph is malloc'd (free with
   uopi_kkey_free) unless lent: then it belongs to a cache entry (see
   uopi_kcache_acquire) and uopi_kkey_free leaves it alone. */
typedef struct uopi_kkey {
  uopi_kenv env;
  uint8_t *graph;
  size_t graph_len;
  uint8_t hash[UOPI_KCACHE_HASH];
  int lent;
} uopi_kkey;

/* The build's codegen id: a hash of the library sources that decide a
   kernel's object code (cmake/CodegenId.cmake lists the folders). */
UOPI_FUNC const char *uopi_kcache_codegen_id(void);

/* The environment of tier t with compile flags `flags` (UOPC_COMPILE_*;
   initializes the engine).  UOPC_ERR_JIT/ARG with *e on failure. */
UOPI_FUNC uopc_status uopi_kenv_get(uopi_jit_tier t, unsigned flags, uopi_kenv *out, uopc_error *e);

/* The hash of a key with environment env and graph bytes g[0..n). */
UOPI_FUNC void uopi_kkey_hash(const uopi_kenv *env, const uint8_t *g, size_t n, uint8_t out[UOPI_KCACHE_HASH]);

/* The key of the prepared kernel k at tier t with compile flags `flags`
   (UOPC_COMPILE_*: kernels compiled with other flags never share an entry).
   Errors (out of memory, engine failure) go to the context. */
UOPI_FUNC uopc_status uopi_kkey_make(uopc_ctx *c, const uopi_kernel_ir *k, uopi_jit_tier t, unsigned flags,
                                     uopi_kkey *out);
/* The key of the graph at root as given, before preparing it (tagged apart
   from prepared keys): the memory cache's shortcut for graphs it has seen,
   valid because preparing is a deterministic function of the structure. */
UOPI_FUNC uopc_status uopi_kkey_raw(uopc_ctx *c, uopc_node *root, uopi_jit_tier t, unsigned flags, uopi_kkey *out);
UOPI_FUNC void uopi_kkey_free(uopi_kkey *k);
/* Makes k own its graph bytes: a copy when they are lent (the context's
   raw-key memo keeps the last few roots' bytes only, so a key kept across
   more uopi_kkey_raw calls must own them).  1, or 0 out of memory (k
   unchanged). */
UOPI_FUNC int uopi_kkey_own(uopi_kkey *k);

/* Lower-case hex of a hash (33 bytes with the NUL). */
UOPI_FUNC void uopi_kcache_hex(const uint8_t h[UOPI_KCACHE_HASH], char out[2 * UOPI_KCACHE_HASH + 1]);

/* ---- what a cached kernel is ------------------------------------------------ */

/* The buffers and entry symbol of a kernel: what rebuilds a uopc_kernel. */
typedef struct uopi_kmeta {
  uint32_t nbufs;
  uint8_t dtype[UOPI_KERNEL_MAX_BUFS];
  int64_t len[UOPI_KERNEL_MAX_BUFS];
  char name[UOPI_KCACHE_NAME_MAX];
} uopi_kmeta;

/* The metadata of a prepared kernel (name left empty). */
UOPI_FUNC void uopi_kmeta_of(const uopi_kernel_ir *k, uopi_kmeta *out);

/* ---- the store in memory (mem.c) ------------------------------------------
 * One entry per key: the code (loaded once, so the same object is never
 * linked twice) and how many handles hold it.  Entries no handle holds stay
 * in an LRU list, bounded by uopc_cache_set_memory_limit.
 *
 * The pending-entry protocol: a miss in memory inserts a *pending* entry and
 * makes the caller its filler, the only one for that key.  The filler fills
 * it (uopi_kcache_fill) or gives up (uopi_kcache_abandon); any other thread
 * asking for the key meanwhile waits on a condition variable and then gets
 * the filled entry, or, after an abandon, starts over (and may become the
 * filler itself).  No LLVM work and no file I/O happen under the store's
 * lock. */
typedef struct uopi_kentry uopi_kentry;

/* The ready entry that the graph-as-given key raw (uopi_kkey_raw) was
   remembered for, held once for the caller (a memory hit: counted), or NULL
   (never seen, forgotten, or pending).  raw is not consumed. */
UOPI_FUNC uopi_kentry *uopi_kcache_find_raw(const uopi_kkey *raw);

/* The entry of key, held once for the caller:
 *   UOPI_KCACHE_HIT:  ready (a memory hit: counted); key is unchanged;
 *   UOPI_KCACHE_FILL: a new pending entry, and the caller is its filler.
 *                     key->graph now belongs to the entry (key->lent is set:
 *                     uopi_kkey_free leaves it); it stays valid while the
 *                     caller holds the entry;
 *   UOPI_KCACHE_BUSY: (wait 0 only) the entry is pending, being filled by
 *                     another thread or by the caller itself; nothing held,
 *                     *out NULL, key unchanged;
 *   UOPI_KCACHE_NOMEM: out of memory (nothing held).
 * With wait 1 it blocks while another thread fills or frees the same key's
 * entry.  A caller that holds pending entries of its own must not wait (two
 * such callers could each wait for the other's fill, and a caller would
 * wait for itself on two equal kernels): it passes 0 and asks again, with
 * 1, once it has filled or abandoned them. */
enum { UOPI_KCACHE_NOMEM = -1, UOPI_KCACHE_FILL = 0, UOPI_KCACHE_HIT = 1, UOPI_KCACHE_BUSY = 2 };
UOPI_FUNC int uopi_kcache_acquire(uopi_kkey *key, int wait, uopi_kentry **out);

/* The filler's success: e becomes ready with code (owned by the entry from
   now on) and metadata m (copied); waiters wake up with it.  The filler
   keeps its hold. */
UOPI_FUNC void uopi_kcache_fill(uopi_kentry *e, uopi_jit_code *code, const uopi_kmeta *m);

/* The filler gives up: e leaves the table and the filler's hold is dropped
   (e is freed, or by the last waiter); waiters start over. */
UOPI_FUNC void uopi_kcache_abandon(uopi_kentry *e);

/* Remembers raw (the key of the graph as given that led to e, a held ready
   entry) so that uopi_kcache_find_raw finds e.  raw's graph bytes move into
   the store (raw->graph becomes NULL) unless another thread remembered the
   same key first; bytes lent by the context's raw-key memo are copied.  Out
   of memory only skips it. */
UOPI_FUNC void uopi_kcache_alias(uopi_kentry *e, uopi_kkey *raw);

/* The code and the buffers of a held ready entry (owned by the entry). */
UOPI_FUNC const uopi_jit_code *uopi_kentry_code(const uopi_kentry *e);
UOPI_FUNC const uopi_kmeta *uopi_kentry_meta(const uopi_kentry *e);
/* Drops one hold of a ready entry.  NULL is a no-op. */
UOPI_FUNC void uopi_kcache_release(uopi_kentry *e);

/* Frees the code of every entry no handle holds (the ordered shutdown,
   uopi_compile_shutdown, calls it first: cached code would otherwise keep
   the engine alive). */
UOPI_FUNC void uopi_kcache_drop_unheld(void);

/* Counters (mem.c owns them; disk.c and lib/compile.c add to them). */
typedef enum uopi_kstat {
  UOPI_KSTAT_MEM_HIT, UOPI_KSTAT_DISK_HIT, UOPI_KSTAT_MISS, UOPI_KSTAT_DISK_WRITE,
  UOPI_KSTAT_DISK_DAMAGED, UOPI_KSTAT_DISK_EVICTED, UOPI_KSTAT_COUNT
} uopi_kstat;
UOPI_FUNC void uopi_kstat_add(uopi_kstat s, uint64_t n);

/* One line "uopc cache: ..." on stderr when UOPC_DEBUG contains "cache". */
UOPI_FUNC void uopi_kcache_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the disk (disk.c) -------------------------------------------- */

/* Loads the entry of key from the cache directory: checks it completely
   (see uopi_kfile_decode), links it (uopi_jit_load) and marks it used.
   Returns 1 with *out (and the kernel's symbol in name) on a hit (counted),
   0 on a miss; a damaged entry is removed (one debug line) and is a miss. */
UOPI_FUNC int uopi_kdisk_load(const uopi_kkey *key, const uopi_kmeta *want, uopi_jit_code **out, char *name,
                              size_t name_size);
/* Writes the entry (temp file + rename) and applies UOPC_CACHE_MAX_MB.
   Failures only disable or skip the disk cache. */
UOPI_FUNC void uopi_kdisk_store(const uopi_kkey *key, const uopi_kmeta *m, const uopi_jit_code *code);

/* ---- the file format (disk.c) ------------------------------------------
 * A decoded entry: pointers into the file bytes. */
typedef struct uopi_kfile {
  uint32_t format, tier, flags;
  const char *codegen, *target, *pipeline; /* not NUL-terminated: see the lengths */
  size_t codegen_len, target_len, pipeline_len;
  uint8_t hash[UOPI_KCACHE_HASH];
  const uint8_t *graph;
  size_t graph_len;
  uopi_kmeta meta;      /* name NUL-terminated, checked to be a C identifier */
  const uint8_t *obj;   /* the object */
  size_t obj_size;
  size_t header_size, payload_size;
} uopi_kfile;

/* The bytes of an entry: header + object (malloc'd, *n bytes), or NULL when
   out of memory or a field does not fit the format. */
UOPI_FUNC uint8_t *uopi_kfile_encode(const uopi_kkey *key, const uopi_kmeta *m, const void *obj, size_t obj_size,
                                     size_t *n);

/* Checks an entry's bytes: size, magic, format version, header CRC-32,
   lengths, the object's size and CRC-32.  Returns NULL and fills *out (its
   pointers into p, which must outlive it), or a static string saying what
   is wrong.  Safe on any input. */
UOPI_FUNC const char *uopi_kfile_decode(const uint8_t *p, size_t n, uopi_kfile *out);

/* NULL when the decoded entry f is the one of key with metadata want (name
   aside), else what differs ("built for another target", ...). */
UOPI_FUNC const char *uopi_kfile_match(const uopi_kfile *f, const uopi_kkey *key, const uopi_kmeta *want);

/* The cache directory in use, resolved from the environment (UOPC_CACHE,
   UOPC_CACHE_DIR, XDG_CACHE_HOME, HOME) and uopc_cache_set_disk: 1 with the
   path in buf, or 0 when the disk cache is off.  Does not create it. */
UOPI_FUNC int uopi_kdisk_dir(char *buf, size_t n);

/* The file of a key in dir. */
UOPI_FUNC void uopi_kdisk_path(const char *dir, const uint8_t hash[UOPI_KCACHE_HASH], char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
