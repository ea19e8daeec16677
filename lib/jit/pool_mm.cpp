/* lib/jit/pool_mm.cpp - the memory the linker (link.cpp) gives JITLink:
 * the double-mapped pool of dual_mm.cpp, or LLVM's mapper pool where that
 * cannot be had (pool_mm.h has the contract).  docs/jit.md, "Disk hits and
 * a pooled memory manager" and "Double-mapped code memory", says why.
 */
#include "jit/pool_mm.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/MapperJITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/MemoryMapper.h>

#include "jit/dual_mm.h"

namespace {

using namespace llvm;
using namespace llvm::orc;

/* LLVM 19's MapperJITLinkMemoryManager with one change: abandoning an
   allocation (a link that fails after allocating, e.g. on an undefined
   symbol).  The original calls Mapper->release(alloc address), and for the
   first allocation of a slab that address is the slab's own: the
   InProcessMemoryMapper unmaps the whole slab while the manager still hands
   out its free ranges, and the next link writes into unmapped memory.  Here
   the abandoned allocation is finalized without its actions (the segments
   get their protections, nothing runs) and deallocated at once, which puts
   its range back in the pool like any freed kernel's. */
class PoolMemoryManager final : public jitlink::JITLinkMemoryManager {
public:
  explicit PoolMemoryManager(std::unique_ptr<MapperJITLinkMemoryManager> in) : in_(std::move(in)) {}

  void allocate(const jitlink::JITLinkDylib *jd, jitlink::LinkGraph &g, OnAllocatedFunction done) override {
    in_->allocate(jd, g, [this, &g, done = std::move(done)](AllocResult r) mutable {
      if (!r) return done(r.takeError());
      done(std::make_unique<Alloc>(*in_, g, std::move(*r)));
    });
  }
  void deallocate(std::vector<FinalizedAlloc> allocs, OnDeallocatedFunction done) override {
    in_->deallocate(std::move(allocs), std::move(done));
  }
  using JITLinkMemoryManager::allocate;
  using JITLinkMemoryManager::deallocate;

private:
  class Alloc final : public InFlightAlloc {
  public:
    Alloc(MapperJITLinkMemoryManager &mm, jitlink::LinkGraph &g, std::unique_ptr<InFlightAlloc> in)
        : mm_(mm), g_(g), in_(std::move(in)) {}
    void finalize(OnFinalizedFunction done) override { in_->finalize(std::move(done)); }
    void abandon(OnAbandonedFunction done) override {
      g_.allocActions().clear(); /* a failed link's actions must not run */
      in_->finalize([this, done = std::move(done)](Expected<FinalizedAlloc> fa) mutable {
        if (!fa) return done(fa.takeError());
        std::vector<FinalizedAlloc> v;
        v.push_back(std::move(*fa));
        mm_.deallocate(std::move(v), std::move(done));
      });
    }

  private:
    MapperJITLinkMemoryManager &mm_;
    jitlink::LinkGraph &g_;
    std::unique_ptr<InFlightAlloc> in_;
  };

  std::unique_ptr<MapperJITLinkMemoryManager> in_;
};

/* UOPC_JIT_DUALMAP=0 (off, no, false) asks for the mprotect pool. */
bool dualmap_off() {
  const char *v = std::getenv("UOPC_JIT_DUALMAP");
  return v && (!std::strcmp(v, "0") || !std::strcmp(v, "off") || !std::strcmp(v, "no") || !std::strcmp(v, "false"));
}

/* Under valgrind without its header at build time, dual_mm.cpp cannot tell
   valgrind that a code range was replaced (its translations would go
   stale): the mprotect pool, whose mprotect valgrind sees, is used. */
bool valgrind_without_header() {
#if __has_include(<valgrind/valgrind.h>)
  return false;
#else
  const char *p = std::getenv("LD_PRELOAD");
  return p && std::strstr(p, "vgpreload");
#endif
}

}  // namespace

std::unique_ptr<jitlink::JITLinkMemoryManager> uopi_jit_pool_make(const char **kind) {
  if (!dualmap_off() && !valgrind_without_header()) {
    std::string why;
    if (auto dual = uopi_dual_mm_create(UOPI_JIT_POOL_SLAB, &why)) {
      *kind = "dual-mapped";
      return dual;
    }
  }
  if (auto mapper = InProcessMemoryMapper::Create()) {
    *kind = "mprotect";
    auto pool = std::make_unique<MapperJITLinkMemoryManager>(UOPI_JIT_POOL_SLAB, std::move(*mapper));
    return std::make_unique<PoolMemoryManager>(std::move(pool));
  } else {
    consumeError(mapper.takeError());
  }
  if (auto plain = jitlink::InProcessMemoryManager::Create()) {
    *kind = "default";
    return std::move(*plain);
  } else {
    consumeError(plain.takeError());
  }
  *kind = "none";
  return nullptr;
}
