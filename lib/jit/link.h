/* lib/jit/link.h - linking kernel objects into the process (link.cpp).
 *
 * Each object is linked on its own by LLVM's JITLink into memory from the
 * engine's pool (pool_mm.h): its external references (memset, libm) are
 * resolved in the process with dlsym, its entry symbol is looked up in the
 * linked graph, and freeing it gives its memory back.  No ORC: no
 * ExecutionSession, JITDylib symbol table or ResourceTracker, so the
 * symbols of different kernels never meet (two objects may define the same
 * name), and a link costs what JITLink costs (docs/jit.md, "Linking without
 * ORC").  C interface for engine.c and code.c.
 */
#ifndef UOPI_JIT_LINK_H
#define UOPI_JIT_LINK_H

#include <stddef.h>

#include "uopc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uopi_jit_linker uopi_jit_linker;

/* A linker with its memory pool (uopi_jit_pool_make); NULL when no memory
   manager can be made or out of memory. */
__attribute__((visibility("hidden"))) uopi_jit_linker *uopi_jit_linker_new(void);

/* Frees the linker and its pool.  Every object it linked must have been
   unlinked.  NULL: nothing. */
__attribute__((visibility("hidden"))) void uopi_jit_linker_free(uopi_jit_linker *l);

/* The kind of memory of l ("dual-mapped", "mprotect", "default"). */
__attribute__((visibility("hidden"))) const char *uopi_jit_linker_memory(const uopi_jit_linker *l);

/* Links the object bytes obj[0 .. size) (read, not kept) and sets *fn to the
   address of its symbol `name` and *handle to what uopi_jit_unlink frees.
   UOPC_OK, or UOPC_ERR_JIT with the reason in *e (not an object, an
   undefined external symbol, no symbol `name`, a relocation JITLink
   refuses) and nothing linked, or UOPC_ERR_NOMEM.  Thread safe. */
__attribute__((visibility("hidden"))) uopc_status uopi_jit_link(uopi_jit_linker *l, const void *obj, size_t size,
                                                                const char *name, void **fn, void **handle,
                                                                uopc_error *e);

/* Frees the code of a handle uopi_jit_link gave (runs its deallocation
   actions, gives its memory back to the pool).  NULL: nothing.  Thread safe;
   the code must not be running. */
__attribute__((visibility("hidden"))) void uopi_jit_unlink(uopi_jit_linker *l, void *handle);

/* The kind of memory of the engine's linker (uopi_jit_linker_memory), or
   "none" before the first engine (engine.c). */
__attribute__((visibility("hidden"))) const char *uopi_jit_memory(void);

#ifdef __cplusplus
}
#endif
#endif
