/* uopc/cache.h - the kernel cache: compiled kernels reused in memory and
 * across processes.
 *
 * uopc_compile goes through the cache by itself; nothing here is needed to
 * use it.  A kernel is looked up by a key that changes whenever its code
 * would: the kernel graph (its structure after index simplification, not
 * pointers), the tier, the LLVM version, target triple, CPU and features,
 * and the library's cache format and code generator.
 *
 *  - In memory: compiling a kernel already compiled in this process returns
 *    a new handle on the same code (handles are counted; uopc_kernel_free of
 *    one never frees code another handle uses).  Kernels no handle holds are
 *    kept, least recently used first out, up to a bound.
 *  - On disk: the object code as generated, behind a checked header, one
 *    file per key in the cache directory, by default
 *        $UOPC_CACHE_DIR, else $XDG_CACHE_HOME/uopc (an absolute
 *        XDG_CACHE_HOME only), else $HOME/.cache/uopc,
 *    and no disk cache when none of them is set.  The directory is created
 *    (mode 0700) on the first write.  UOPC_CACHE=0 (or off, no, false)
 *    turns the disk cache off; UOPC_CACHE_MAX_MB (default 256, decimals
 *    allowed) bounds it, evicting the least recently used entries.
 *    From code: uopc_cache_set_disk(0) turns the disk cache off for the
 *    process, uopc_cache_dir() says where it is.  No call moves it; the
 *    variables are read at each disk access, so a host application moves it
 *    with setenv("UOPC_CACHE_DIR", dir, 1) before its first uopc_compile
 *    (setenv itself is not safe while other threads run).
 *    A damaged, truncated or foreign entry is removed and the kernel is
 *    compiled afresh; a directory that cannot be created or written means no
 *    disk cache, never an error.  UOPC_DEBUG=cache prints one line to stderr
 *    per disk event (hit, miss, write, removed entry).
 *
 * The cache directory holds machine code that is run: it must be writable
 * only by users trusted to run code in the process.
 *
 * Threads: every function here may be called from any thread at any time.
 * See docs/cache.md.
 */
#ifndef UOPC_CACHE_H
#define UOPC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "uopc/error.h"
#include "uopc/uop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This process's counters since start (or the last uopc_cache_reset_stats),
   and the memory cache's contents now. */
typedef struct uopc_cache_stats {
  uint64_t mem_hits;      /* uopc_compile answered from memory */
  uint64_t disk_hits;     /* uopc_compile answered by linking a cached object */
  uint64_t misses;        /* uopc_compile ran LLVM */
  uint64_t disk_writes;   /* entries written to the cache directory */
  uint64_t disk_damaged;  /* damaged or foreign entries found and removed */
  uint64_t disk_evicted;  /* entries removed to stay under UOPC_CACHE_MAX_MB */
  uint32_t mem_entries;   /* kernels in memory now, held or not */
  uint32_t mem_held;      /* of which held by at least one handle */
  uint64_t mem_bytes;     /* their object code and keys, in bytes */
} uopc_cache_stats;

/* Fills *s (NULL s: no-op). */
UOPC_API void uopc_cache_get_stats(uopc_cache_stats *s);
/* Sets the counters (not the contents) to zero. */
UOPC_API void uopc_cache_reset_stats(void);

/* Bounds the kernels kept in memory that no handle holds: at most
   max_entries of them and max_bytes of object code and keys (defaults 1024
   and 64 MiB).  0, 0 keeps none: a kernel is freed with its last handle.
   Held kernels are never dropped, and compiling a kernel that a handle
   still holds always returns that code. */
UOPC_API void uopc_cache_set_memory_limit(uint32_t max_entries, uint64_t max_bytes);

/* Frees every kernel in memory that no handle holds. */
UOPC_API void uopc_cache_clear_memory(void);

/* Turns the disk cache on (the default) or off for this process.  It is
   also off when UOPC_CACHE=0. */
UOPC_API void uopc_cache_set_disk(int on);

/* The cache directory in use: returns 1 and writes the path to buf (size
   n) when the disk cache is on, else 0 (buf gets ""); also 0 when buf is
   NULL or n too small for the path. */
UOPC_API int uopc_cache_dir(char *buf, size_t n);

/* The entries in the cache directory and their total size in bytes.  0 and
   0 with UOPC_OK when the directory does not exist (entries and bytes may
   each be NULL); UOPC_ERR_IO with *e
   (e may be NULL) when it cannot be read, UOPC_ERR_ARG when the disk cache
   is off. */
UOPC_API uopc_status uopc_cache_disk_usage(uint64_t *entries, uint64_t *bytes, uopc_error *e);

/* Removes every entry (and leftover temporary file) from the cache
   directory; *removed (may be NULL) gets how many entries went.  Kernels in
   memory are not affected.  UOPC_ERR_IO with *e when an entry cannot be
   removed, UOPC_ERR_ARG when the disk cache is off. */
UOPC_API uopc_status uopc_cache_clear_disk(uint64_t *removed, uopc_error *e);

#ifdef __cplusplus
}
#endif
#endif
