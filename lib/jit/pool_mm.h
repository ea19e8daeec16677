/* lib/jit/pool_mm.h - JITLink with a pooled memory manager (pool_mm.cpp, the
 * one C++ file of the library, as PostgreSQL's llvmjit_wrap.cpp: LLVM 19's
 * C API has no hook for JITLink's memory manager).
 */
#ifndef UOPI_JIT_POOL_MM_H
#define UOPI_JIT_POOL_MM_H

#include <llvm-c/LLJIT.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the LLJIT that builder b creates link with JITLink (as it does by
   default on x86-64 ELF) through an ObjectLinkingLayer whose memory comes
   from a pool: LLVM's MapperJITLinkMemoryManager over an
   InProcessMemoryMapper, which reserves address space in slabs of
   UOPI_JIT_POOL_SLAB bytes, carves each object's segments out of them
   (page-aligned, each segment given its own protection: no page is ever
   writable and executable) and, when the object is removed, resets its
   pages to read-write and keeps them for the next object.  No mmap or
   munmap per object, no fresh pages to fault in; the slabs are unmapped
   when the LLJIT is disposed.  A link that fails after allocating gives
   its range back too (pool_mm.cpp works around LLVM 19 unmapping the slab
   there).  The pool has its own mutex.  .eh_frame
   sections are registered as the default layer does.  b stays owned by the
   caller (NULL: nothing).  If the pool cannot be created when the LLJIT is
   built, the default layer is used. */
__attribute__((visibility("hidden"))) void uopi_jit_pool_install(LLVMOrcLLJITBuilderRef b);

/* The slab size: 64 MiB of address space at a time (reserved, not
   resident: pages are touched only as objects use them). */
#define UOPI_JIT_POOL_SLAB ((size_t)64 << 20)

#ifdef __cplusplus
}
#endif

#endif
