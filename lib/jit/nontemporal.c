/* lib/jit/nontemporal.c - streaming (non-temporal) stores for kernels that
 * write more than the cache holds (docs/loops.md, "Streaming stores").
 *
 * A store that goes to memory through the cache first reads the line it
 * writes (write-allocate): a*b+a over 16M f32 moves four arrays' worth of
 * bytes for three.  x86's non-temporal vector stores (vmovntps) write whole
 * lines without reading them, and do not evict the cache for data nobody
 * reads again soon; they need an address aligned to the vector's size, and
 * an sfence before another thread may read what they wrote.
 *
 * The emitter (lib/codegen/emit.c) gives such a kernel two copies of its
 * loops: one entered when every buffer it stores to is 64-byte aligned,
 * which tells LLVM so (llvm.assume with an "align" bundle) and ends with an
 * sfence, and one for any other pointers.  After the IR passes (whose
 * alignment-from-assumptions pass carries the 64 to each vector store whose
 * address it can prove a multiple of it), uopi_jit_mark_nontemporal tags
 * every vector store whose proven alignment is at least its size: only
 * those, so a store LLVM cannot prove aligned stays an ordinary store (x86
 * has no unaligned non-temporal vector store: LLVM would split it into
 * narrow ones, slower than the ordinary store).  The aligned copy's
 * assumption is checked at run time, never taken on trust: a vmovntps at an
 * address that is not a multiple of its size faults.  Values never change:
 * a non-temporal store writes the same bytes.
 */
#include <llvm-c/Core.h>

#include "jit/jit_impl.h"

static const char stream_flag[] = "uopc.stream";

/* Only stores of a whole cache line are made non-temporal: a line written
   in parts (two 32-byte stores with a loop body between them) may leave
   the write-combining buffer half full, and a partial line costs a read at
   the memory controller: softmax's strict exp2 kernel (8 lanes, a libm
   branch in its loop) ran 1.8x slower with its ymm stores streamed. */
#define LINE 64

void uopi_jit_module_set_stream(LLVMModuleRef m) { uopi_jit_flag_set(m, stream_flag); }
int uopi_jit_module_stream(LLVMModuleRef m) { return uopi_jit_flag_has(m, stream_flag); }

/* The bytes a store of a value of type t writes, for a vector of scalars
   (0 for anything else). */
static unsigned long long vector_bytes(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return 0;
  LLVMTypeRef e = LLVMGetElementType(t);
  unsigned bits;
  switch (LLVMGetTypeKind(e)) {
  case LLVMIntegerTypeKind: bits = LLVMGetIntTypeWidth(e); break;
  case LLVMHalfTypeKind: bits = 16; break;
  case LLVMFloatTypeKind: bits = 32; break;
  case LLVMDoubleTypeKind: bits = 64; break;
  default: return 0;
  }
  if (bits % 8) return 0; /* i1 vectors: no */
  return (unsigned long long)LLVMGetVectorSize(t) * (bits / 8);
}

unsigned uopi_jit_mark_nontemporal(LLVMModuleRef m) {
  LLVMContextRef c = LLVMGetModuleContext(m);
  unsigned kind = LLVMGetMDKindIDInContext(c, "nontemporal", 11);
  LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0));
  LLVMValueRef node = LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, &one, 1));
  unsigned n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        if (LLVMGetInstructionOpcode(i) != LLVMStore || LLVMGetVolatile(i)) continue;
        unsigned long long size = vector_bytes(LLVMTypeOf(LLVMGetOperand(i, 0)));
        if (size < LINE || LLVMGetAlignment(i) < size) continue;
        LLVMSetMetadata(i, kind, node);
        n++;
      }
  return n;
}
