/* lib/jit/dual_mm.cpp - JITLink memory with no system call per object.
 *
 * A region is one reservation of address space in three parts of P bytes:
 *
 *   [0, P)     code            memfd bytes [0, P),  mapped read + execute
 *   [P, 2P)    read-only data  memfd bytes [P, 2P), mapped read-only
 *   [2P, 3P)   writable data   private anonymous,   mapped read + write
 *
 * and one more mapping of memfd bytes [0, 2P), read + write, elsewhere: the
 * alias, through which the linker writes code and constants.  No page is
 * ever writable and executable through one mapping, and no protection ever
 * changes: placing an object is a search of a free list and a memset, its
 * relocations are written through the alias, and freeing it gives its
 * ranges back.  Before, every link paid an mprotect per segment and every
 * free another (to reset the pages), each mprotect that takes a permission
 * away a TLB shootdown across CPUs: most of a disk-cache hit's time
 * (docs/jit.md, "Disk hits").  The segments of one object come from one
 * region, so they lie within 3P bytes of each other, well inside the small
 * code model's +-2 GiB.
 *
 * Ranges are handed out in 64-byte grains, first fit in address order, with
 * the segment's alignment (up to a page); a freed code range is filled with
 * int3 (0xCC) so that a call through a stale pointer traps instead of
 * running whatever comes next.  On x86-64 the instruction cache is coherent
 * with writes through another mapping of the same page; elsewhere LLVM's
 * InvalidateInstructionCache runs on the code range at finalize.
 *
 * fork(): the memfd pages are shared with a child, so after a fork neither
 * process may write into a range the other may still run.  Both sides count
 * forks (pthread_atfork): an object placed before the latest fork keeps its
 * range when freed (a leak of what was live at the fork, never a reuse),
 * and a child places nothing in the regions it inherited.  Kernels compiled
 * before a fork keep running in both processes.
 *
 * valgrind caches translations of code by address: a freed code range is
 * reported with VALGRIND_DISCARD_TRANSLATIONS where valgrind's header was
 * found at build time (pool_mm.cpp keeps the mprotect manager under
 * valgrind otherwise).
 */
#include "jit/dual_mm.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/Shared/AllocationActions.h>
#include <llvm/Support/Memory.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define DISCARD_TRANSLATIONS(p, n) VALGRIND_DISCARD_TRANSLATIONS(p, n)
#else
#define DISCARD_TRANSLATIONS(p, n) ((void)(p), (void)(n))
#endif

namespace {

using namespace llvm;
using namespace llvm::jitlink;
using orc::MemProt;

constexpr size_t kGrain = 64;
constexpr size_t kPage = 4096;
enum PartKind { CODE, RODATA, DATA, NPARTS };

/* One mutex for every manager's regions, and the forks this process has
   seen, as parent or child, and as child only.  fork() takes the mutex
   first (pthread_atfork), so a fork never splits a placement or a release,
   and a child never inherits it locked. */
std::mutex pool_mu;
unsigned g_forks, g_child_forks;

void on_fork_prepare() { pool_mu.lock(); }
void on_fork_parent() {
  g_forks++;
  pool_mu.unlock();
}
void on_fork_child() {
  g_forks++;
  g_child_forks++;
  pool_mu.unlock();
}

/* One part of a region: where its bytes run (or are read), where they are
   written, and its free ranges (offset -> length, coalesced). */
class Part {
public:
  char *run = nullptr, *write = nullptr;

  void init(char *r, char *w, size_t size) {
    run = r, write = w;
    free_[0] = size;
  }
  /* An n-byte range (n a multiple of kGrain) at an offset aligned to align
     (a power of two, at most a page; run is page aligned). */
  bool take(size_t n, size_t align, size_t *off) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      size_t lo = it->first, len = it->second, at = (lo + align - 1) & ~(align - 1);
      if (at - lo > len || len - (at - lo) < n) continue;
      free_.erase(it);
      if (at > lo) free_[lo] = at - lo;
      if (at + n < lo + len) free_[at + n] = lo + len - (at + n);
      *off = at;
      return true;
    }
    return false;
  }
  void give(size_t off, size_t n) {
    auto next = free_.lower_bound(off);
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        off = prev->first, n += prev->second;
        free_.erase(prev);
      }
    }
    if (next != free_.end() && off + n == next->first) {
      n += next->second;
      free_.erase(next);
    }
    free_[off] = n;
  }

private:
  std::map<size_t, size_t> free_;
};

struct Region {
  char *base = nullptr, *alias = nullptr;
  size_t part = 0;
  int fd = -1;
  unsigned child_forks = 0; /* g_child_forks when it was made: usable while equal */
  Part parts[NPARTS];

  Region() = default;
  Region(const Region &) = delete;
  Region &operator=(const Region &) = delete;
  ~Region() {
    if (alias) munmap(alias, 2 * part);
    if (base) munmap(base, 3 * part);
    if (fd >= 0) close(fd);
  }
};

/* A region of three parts of part bytes (a multiple of the page); NULL with
   *why when the system refuses.  Under pool_mu. */
std::unique_ptr<Region> make_region(size_t part, std::string *why) {
  auto r = std::make_unique<Region>();
  r->part = part;
  const char *step = "memfd_create";
  void *p;
  if ((r->fd = memfd_create("uopc-jit", MFD_CLOEXEC)) < 0) goto fail;
  step = "ftruncate";
  if (ftruncate(r->fd, (off_t)(2 * part)) != 0) goto fail;
  step = "mmap (reserve)";
  p = mmap(nullptr, 3 * part, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) goto fail;
  r->base = (char *)p;
  step = "mmap (code, read+execute)";
  if (mmap(r->base, part, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, r->fd, 0) == MAP_FAILED) goto fail;
  step = "mmap (read-only data)";
  if (mmap(r->base + part, part, PROT_READ, MAP_SHARED | MAP_FIXED, r->fd, (off_t)part) == MAP_FAILED) goto fail;
  step = "mmap (writable data)";
  if (mmap(r->base + 2 * part, part, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
           -1, 0) == MAP_FAILED)
    goto fail;
  step = "mmap (alias, read+write)";
  p = mmap(nullptr, 2 * part, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
  if (p == MAP_FAILED) goto fail;
  r->alias = (char *)p;
  r->parts[CODE].init(r->base, r->alias, part);
  r->parts[RODATA].init(r->base + part, r->alias + part, part);
  r->parts[DATA].init(r->base + 2 * part, r->base + 2 * part, part);
  r->child_forks = g_child_forks;
  return r;
fail:
  if (why) *why = std::string(step) + ": " + std::strerror(errno);
  return nullptr;
}

/* One placed segment. */
struct Seg {
  PartKind kind;
  bool finalize_only; /* MemLifetime::Finalize: given back after finalize */
  size_t align, size; /* align: the segment's, at least a grain */
  size_t off;         /* in its part, once placed */
};

/* One object's memory: what FinalizedAlloc's address points to. */
struct Record {
  Region *region = nullptr;
  unsigned forks = 0; /* g_forks when placed: its ranges are reused only if no fork came since */
  std::vector<Seg> segs;
  std::vector<orc::shared::WrapperFunctionCall> dealloc;
};

PartKind kind_of(MemProt p) {
  if (p == (MemProt::Read | MemProt::Exec)) return CODE;
  if (p == MemProt::Read) return RODATA;
  if (p == (MemProt::Read | MemProt::Write)) return DATA;
  return NPARTS;
}

class DualMapManager final : public JITLinkMemoryManager {
public:
  DualMapManager(size_t part, std::unique_ptr<Region> first) : part_(part) { regions_.push_back(std::move(first)); }

  void allocate(const JITLinkDylib *jd, LinkGraph &g, OnAllocatedFunction done) override;
  void deallocate(std::vector<FinalizedAlloc> allocs, OnDeallocatedFunction done) override;
  using JITLinkMemoryManager::allocate;
  using JITLinkMemoryManager::deallocate;

  /* Gives rec's ranges back (only its finalize-lifetime ones when
     finalize_only), unless a fork came since it was placed. */
  void release(Record &rec, bool finalize_only);

private:
  class InFlight;
  bool place(Record &rec, std::string *why);

  size_t part_;
  std::vector<std::unique_ptr<Region>> regions_;
};

class DualMapManager::InFlight final : public InFlightAlloc {
public:
  InFlight(DualMapManager &mm, LinkGraph &g, std::unique_ptr<Record> rec) : mm_(mm), g_(g), rec_(std::move(rec)) {}
  ~InFlight() override {
    if (rec_) mm_.release(*rec_, false); /* neither finalized nor abandoned */
  }

  void finalize(OnFinalizedFunction done) override {
    auto dealloc = orc::shared::runFinalizeActions(g_.allocActions());
    if (!dealloc) return done(dealloc.takeError()); /* ~InFlight gives the ranges back */
    for (const Seg &s : rec_->segs)
      if (s.kind == CODE) sys::Memory::InvalidateInstructionCache(rec_->region->parts[CODE].run + s.off, s.size);
    mm_.release(*rec_, true);
    rec_->dealloc = std::move(*dealloc);
    done(FinalizedAlloc(orc::ExecutorAddr::fromPtr(rec_.release())));
  }
  void abandon(OnAbandonedFunction done) override {
    mm_.release(*rec_, false);
    rec_.reset();
    done(Error::success());
  }

private:
  DualMapManager &mm_;
  LinkGraph &g_;
  std::unique_ptr<Record> rec_;
};

bool DualMapManager::place(Record &rec, std::string *why) {
  std::lock_guard<std::mutex> lock(pool_mu);
  rec.forks = g_forks;
  for (auto &r : regions_) {
    if (r->child_forks != g_child_forks) continue; /* inherited from the parent: its pages are shared */
    size_t k = 0;
    for (; k < rec.segs.size(); k++) {
      Seg &s = rec.segs[k];
      if (!r->parts[s.kind].take(s.size, s.align, &s.off)) break;
    }
    if (k == rec.segs.size()) {
      rec.region = r.get();
      return true;
    }
    while (k--) r->parts[rec.segs[k].kind].give(rec.segs[k].off, rec.segs[k].size);
  }
  /* a new region, large enough for this object in any case */
  size_t need[NPARTS] = {0, 0, 0}, part = part_;
  for (const Seg &s : rec.segs) need[s.kind] += s.size + s.align;
  for (size_t n : need) part = std::max(part, (n + kPage - 1) & ~(kPage - 1));
  auto r = make_region(part, why);
  if (!r) return false;
  for (Seg &s : rec.segs)
    if (!r->parts[s.kind].take(s.size, s.align, &s.off)) {
      if (why) *why = "a new region does not hold the object";
      return false;
    }
  rec.region = r.get();
  regions_.push_back(std::move(r));
  return true;
}

void DualMapManager::release(Record &rec, bool finalize_only) {
  if (!rec.region) return;
  std::lock_guard<std::mutex> lock(pool_mu);
  const bool reuse = rec.forks == g_forks && rec.region->child_forks == g_child_forks;
  for (const Seg &s : rec.segs) {
    if (finalize_only && !s.finalize_only) continue;
    if (!reuse) continue;
    Part &p = rec.region->parts[s.kind];
    if (s.kind == CODE) {
      std::memset(p.write + s.off, 0xCC, s.size); /* int3: a stale call traps */
      DISCARD_TRANSLATIONS(p.run + s.off, s.size);
    }
    p.give(s.off, s.size);
  }
  if (finalize_only)
    rec.segs.erase(std::remove_if(rec.segs.begin(), rec.segs.end(), [](const Seg &s) { return s.finalize_only; }),
                   rec.segs.end());
  else
    rec.region = nullptr;
}

void DualMapManager::allocate(const JITLinkDylib *jd, LinkGraph &g, OnAllocatedFunction done) {
  (void)jd;
  BasicLayout bl(g);
  auto rec = std::make_unique<Record>();
  for (auto &kv : bl.segments()) {
    const orc::AllocGroup &ag = kv.first;
    const BasicLayout::Segment &seg = kv.second;
    PartKind kind = kind_of(ag.getMemProt());
    if (kind == NPARTS) {
      std::string p;
      raw_string_ostream os(p);
      os << ag.getMemProt();
      return done(make_error<JITLinkError>("uopc's JIT memory has no place for a segment with protections " +
                                           os.str() + " in " + g.getName()));
    }
    if (seg.Alignment.value() > kPage)
      return done(make_error<JITLinkError>("segment alignment above a page in " + g.getName()));
    uint64_t bytes = seg.ContentSize + seg.ZeroFillSize;
    if (bytes > (uint64_t)1 << 40) return done(make_error<JITLinkError>("segment too large in " + g.getName()));
    size_t size = std::max<size_t>(kGrain, ((size_t)bytes + kGrain - 1) & ~(kGrain - 1));
    rec->segs.push_back(Seg{kind, ag.getMemLifetime() == orc::MemLifetime::Finalize,
                            std::max(kGrain, (size_t)seg.Alignment.value()), size, 0});
  }
  std::string why;
  if (!place(*rec, &why)) return done(make_error<JITLinkError>("cannot map JIT memory: " + why));
  size_t i = 0;
  for (auto &kv : bl.segments()) {
    BasicLayout::Segment &seg = kv.second;
    const Seg &s = rec->segs[i++];
    Part &p = rec->region->parts[s.kind];
    std::memset(p.write + s.off, 0, s.size); /* zero fill and the padding between blocks */
    seg.WorkingMem = p.write + s.off;
    seg.Addr = orc::ExecutorAddr::fromPtr(p.run + s.off);
  }
  if (Error err = bl.apply()) {
    release(*rec, false);
    return done(std::move(err));
  }
  done(std::make_unique<InFlight>(*this, g, std::move(rec)));
}

void DualMapManager::deallocate(std::vector<FinalizedAlloc> allocs, OnDeallocatedFunction done) {
  Error err = Error::success();
  while (!allocs.empty()) { /* the last first, as LLVM's own managers do */
    std::unique_ptr<Record> rec(allocs.back().release().toPtr<Record *>());
    allocs.pop_back();
    while (!rec->dealloc.empty()) {
      if (Error e = rec->dealloc.back().runWithSPSRetErrorMerged()) err = joinErrors(std::move(err), std::move(e));
      rec->dealloc.pop_back();
    }
    release(*rec, false);
  }
  done(std::move(err));
}

pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
int atfork_failed;
void register_atfork() { atfork_failed = pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child) != 0; }

}  // namespace

std::unique_ptr<JITLinkMemoryManager> uopi_dual_mm_create(size_t part, std::string *why) {
  part = std::max(kPage, (part + kPage - 1) & ~(kPage - 1));
  pthread_once(&atfork_once, register_atfork);
  if (atfork_failed) {
    if (why) *why = "pthread_atfork failed";
    return nullptr;
  }
  std::unique_ptr<Region> first;
  {
    std::lock_guard<std::mutex> lock(pool_mu);
    first = make_region(part, why);
  }
  if (!first) return nullptr;
  return std::make_unique<DualMapManager>(part, std::move(first));
}
