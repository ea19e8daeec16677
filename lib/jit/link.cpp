/* lib/jit/link.cpp - linking kernel objects with JITLink, without ORC
 * (link.h has the contract; docs/jit.md, "Linking without ORC", why).
 *
 * A kernel object defines its entry and perhaps constants; it refers only
 * to functions of the process (memset, libm).  ORC's machinery around
 * JITLink (an ExecutionSession, a JITDylib's symbol table, a
 * MaterializationUnit and a ResourceTracker per kernel, the lookup that
 * drives the link) was half of the instructions of a disk-cache hit and
 * bought nothing here: the linker gives JITLink the object's graph, a
 * context that resolves external symbols with dlsym and finds the entry in
 * the graph, and the engine's memory pool.  The link runs to its end on the
 * calling thread (the pool and the lookup answer at once), so nothing of it
 * outlives uopi_jit_link but the finalized allocation.
 */
#include "jit/link.h"

#include <dlfcn.h>

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/Support/MemoryBuffer.h>

#include "jit/jit_impl.h"
#include "jit/pool_mm.h"

struct uopi_jit_linker {
  std::unique_ptr<llvm::jitlink::JITLinkMemoryManager> mm;
  const char *kind;
};

namespace {

using namespace llvm;
using namespace llvm::jitlink;

/* A one-shot completion: set once, waited for once.  JITLink's callbacks
   run before link() returns with the managers the pool makes, so the wait
   normally finds it set; it blocks only if a future manager answers later
   (uncontended, a mutex and a condition variable make no system call). */
class Done {
public:
  void set() {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
    cv_.notify_one();
  }
  void wait() {
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [this] { return done_; });
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

/* What one link produced. */
struct Result {
  const char *entry;
  orc::ExecutorAddr addr;
  JITLinkMemoryManager::FinalizedAlloc alloc;
  std::string error; /* the first error; empty: none */
  Done done;

  void fail(Error err) {
    if (error.empty()) error = toString(std::move(err));
    else consumeError(std::move(err));
  }
};

class Context final : public JITLinkContext {
public:
  Context(JITLinkMemoryManager &mm, Result &r) : JITLinkContext(nullptr), mm_(mm), r_(r) {}

  JITLinkMemoryManager &getMemoryManager() override { return mm_; }

  void notifyFailed(Error err) override {
    r_.fail(std::move(err));
    r_.done.set();
  }

  /* External symbols are the process's (dlsym): a required one that is not
     there fails the link, naming it; a weak one is left out (null). */
  void lookup(const LookupMap &syms, std::unique_ptr<JITLinkAsyncLookupContinuation> lc) override {
    AsyncLookupResult got;
    std::string missing;
    for (const auto &kv : syms) {
      std::string name = kv.first.str();
      void *p = dlsym(RTLD_DEFAULT, name.c_str());
      if (p)
        got[kv.first] = orc::ExecutorSymbolDef(orc::ExecutorAddr::fromPtr(p), JITSymbolFlags::Exported | JITSymbolFlags::Callable);
      else if (kv.second == SymbolLookupFlags::RequiredSymbol)
        missing += (missing.empty() ? "" : ", ") + name;
    }
    if (!missing.empty())
      return lc->run(make_error<StringError>("symbols not found in the process: " + missing, inconvertibleErrorCode()));
    lc->run(std::move(got));
  }

  Error notifyResolved(LinkGraph &g) override {
    for (Symbol *s : g.defined_symbols())
      if (s->hasName() && s->getName() == r_.entry) {
        r_.addr = s->getAddress();
        return Error::success();
      }
    return make_error<StringError>(std::string("the object defines no symbol ") + r_.entry, inconvertibleErrorCode());
  }

  void notifyFinalized(JITLinkMemoryManager::FinalizedAlloc a) override {
    r_.alloc = std::move(a);
    r_.done.set();
  }

  /* Nothing asks for the symbols (no lookup drives the link): all stay. */
  LinkGraphPassFunction getMarkLivePass(const Triple &) const override { return markAllSymbolsLive; }

private:
  JITLinkMemoryManager &mm_;
  Result &r_;
};

/* Gives a's memory back to the pool and runs its deallocation actions.
   The asynchronous deallocate: the blocking one waits on a std::promise,
   a futex system call per free (code.c says why that matters). */
void dealloc(JITLinkMemoryManager &mm, JITLinkMemoryManager::FinalizedAlloc a) {
  Done d;
  mm.deallocate(std::move(a), [&](Error err) {
    consumeError(std::move(err)); /* nothing to report it to: a free cannot fail */
    d.set();
  });
  d.wait();
}

}  // namespace

uopi_jit_linker *uopi_jit_linker_new(void) {
  auto *l = new (std::nothrow) uopi_jit_linker;
  if (!l) return nullptr;
  l->mm = uopi_jit_pool_make(&l->kind);
  if (!l->mm) {
    delete l;
    return nullptr;
  }
  return l;
}

void uopi_jit_linker_free(uopi_jit_linker *l) { delete l; }

const char *uopi_jit_linker_memory(const uopi_jit_linker *l) { return l ? l->kind : "none"; }

uopc_status uopi_jit_link(uopi_jit_linker *l, const void *obj, size_t size, const char *name, void **fn,
                          void **handle, uopc_error *e) {
  *fn = nullptr;
  *handle = nullptr;
  /* the graph points into the bytes until the link copies them: they outlive it */
  auto buf = MemoryBuffer::getMemBuffer(StringRef((const char *)obj, size), name, false);
  auto g = createLinkGraphFromObject(buf->getMemBufferRef());
  if (!g) {
    std::string msg = toString(g.takeError());
    return uopi_jit_fail(e, UOPC_ERR_JIT, "cannot link the kernel %s: %s", name, msg.c_str());
  }
  Result r;
  r.entry = name;
  link(std::move(*g), std::make_unique<Context>(*l->mm, r));
  r.done.wait();
  if (!r.error.empty()) {
    if (r.alloc) dealloc(*l->mm, std::move(r.alloc));
    return uopi_jit_fail(e, UOPC_ERR_JIT, "cannot link the kernel %s: %s", name, r.error.c_str());
  }
  auto *a = new (std::nothrow) JITLinkMemoryManager::FinalizedAlloc(std::move(r.alloc));
  if (!a) {
    dealloc(*l->mm, std::move(r.alloc));
    return uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  }
  *fn = r.addr.toPtr<void *>();
  *handle = a;
  return UOPC_OK;
}

void uopi_jit_unlink(uopi_jit_linker *l, void *handle) {
  if (!handle) return;
  std::unique_ptr<JITLinkMemoryManager::FinalizedAlloc> a(static_cast<JITLinkMemoryManager::FinalizedAlloc *>(handle));
  dealloc(*l->mm, std::move(*a));
}
