/* lib/jit/dual_mm.h - JITLink memory mapped twice (dual_mm.cpp): the linker
 * writes code and constants through one mapping while they run and are read
 * through another, so linking or freeing an object makes no system call.
 * C++ only: pool_mm.cpp makes it for the linker (link.cpp).
 */
#ifndef UOPI_JIT_DUAL_MM_H
#define UOPI_JIT_DUAL_MM_H

#include <memory>
#include <string>

#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>

/* A JITLink memory manager over double-mapped regions (dual_mm.cpp says how
   they are laid out, and what happens across fork()).  Each region is part
   bytes of code, part of read-only data and part of writable data, reserved
   not resident; more regions are made as objects need them.  NULL with *why
   (what the system refused) when no region can be made here: a kernel that
   forbids executable shared memory (some SELinux policies), no memfd_create.
   The manager may be shared by any number of threads; it must outlive every
   allocation it handed out (the ObjectLinkingLayer that owns it does). */
__attribute__((visibility("hidden"))) std::unique_ptr<llvm::jitlink::JITLinkMemoryManager>
uopi_dual_mm_create(size_t part, std::string *why);

#endif
