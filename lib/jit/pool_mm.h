/* lib/jit/pool_mm.h - the memory JITLink links kernels into (pool_mm.cpp,
 * dual_mm.cpp; C++, for link.cpp).  LLVM's C API has no hook for JITLink's
 * memory manager, so the linker is C++ (as PostgreSQL's llvmjit_wrap.cpp).
 */
#ifndef UOPI_JIT_POOL_MM_H
#define UOPI_JIT_POOL_MM_H

#include <memory>

#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>

/* The slab size: 64 MiB of address space at a time (reserved, not
   resident: pages are touched only as objects use them); a dual-mapped
   region is three of them. */
#define UOPI_JIT_POOL_SLAB ((size_t)64 << 20)

/* A pooled memory manager for the linker, the first of these that can be
   made (*kind names it, a static string):
     "dual-mapped" (dual_mm.h, preferred): code and constants are written
       through one mapping and run or read through another, each page with
       fixed protections: linking and freeing an object make no system
       call.  Regions of 3 x UOPI_JIT_POOL_SLAB bytes (code, read-only data,
       writable data), reserved not resident.
     "mprotect", when the system refuses executable shared memory, when
       UOPC_JIT_DUALMAP=0 (off, no, false) asks for it, or under valgrind
       when valgrind's header was not found at build time: LLVM's
       MapperJITLinkMemoryManager over an InProcessMemoryMapper, which
       reserves slabs of UOPI_JIT_POOL_SLAB bytes, carves each object's
       segments out of them page-aligned, gives each segment its protection
       at finalize and resets its pages to read-write when the object is
       freed (an mprotect per segment each way).  A link that fails after
       allocating gives its range back too (pool_mm.cpp works around LLVM 19
       unmapping the slab there).
     "default": LLVM's InProcessMemoryManager (an mmap per object).
   Either way no page is ever writable and executable.  NULL with *kind
   "none" when none can be made.  The manager is thread safe; it must
   outlive every allocation it made. */
__attribute__((visibility("hidden"))) std::unique_ptr<llvm::jitlink::JITLinkMemoryManager>
uopi_jit_pool_make(const char **kind);

#endif
