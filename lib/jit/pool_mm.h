/* lib/jit/pool_mm.h - JITLink with a pooled memory manager (pool_mm.cpp and
 * dual_mm.cpp, the library's C++ files, as PostgreSQL's llvmjit_wrap.cpp:
 * LLVM 19's C API has no hook for JITLink's memory manager).
 */
#ifndef UOPI_JIT_POOL_MM_H
#define UOPI_JIT_POOL_MM_H

#include <llvm-c/LLJIT.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the LLJIT that builder b creates link with JITLink (as it does by
   default on x86-64 ELF) through an ObjectLinkingLayer whose memory comes
   from a pool, one of two kinds:
     - dual-mapped (dual_mm.h, preferred): code and constants are written
       through one mapping and run or read through another, each page with
       fixed protections: linking and freeing an object make no system
       call.  Regions of 3 x UOPI_JIT_POOL_SLAB bytes (code, read-only data,
       writable data), reserved not resident.
     - mprotect, when the system refuses executable shared memory, when
       UOPC_JIT_DUALMAP=0 (off, no, false) asks for it, or under valgrind
       when valgrind's header was not found at build time: LLVM's
       MapperJITLinkMemoryManager over an InProcessMemoryMapper, which
       reserves slabs of UOPI_JIT_POOL_SLAB bytes, carves each object's
       segments out of them page-aligned, gives each segment its protection
       at finalize and resets its pages to read-write when the object is
       removed (an mprotect per segment each way).  A link that fails after
       allocating gives its range back too (pool_mm.cpp works around LLVM 19
       unmapping the slab there).
   Either way no page is ever writable and executable, there is no mmap or
   munmap per object, the pool has its own mutex, and its memory is unmapped
   when the LLJIT is disposed.  .eh_frame sections are registered as the
   default layer does.  b stays owned by the caller (NULL: nothing).  If
   neither pool can be made when the LLJIT is built, the default layer is
   used. */
__attribute__((visibility("hidden"))) void uopi_jit_pool_install(LLVMOrcLLJITBuilderRef b);

/* The memory of the engine's current layer: "dual-mapped", "mprotect",
   "default" (LLVM's own manager), or "none" before the first engine. */
__attribute__((visibility("hidden"))) const char *uopi_jit_memory(void);

/* The slab size: 64 MiB of address space at a time (reserved, not
   resident: pages are touched only as objects use them); a dual-mapped
   region is three of them. */
#define UOPI_JIT_POOL_SLAB ((size_t)64 << 20)

#ifdef __cplusplus
}
#endif

#endif
