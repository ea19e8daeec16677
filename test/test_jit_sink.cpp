// lib/jit/sink.c: after the IR passes of the fast tier, instructions without
// side effects move down to their first use, and loads too, but never past
// an instruction that may write memory.
#if __has_include(<llvm-c/Core.h>)
#include <gtest/gtest.h>
#include <llvm-c/Core.h>

#include <string>
#include <vector>

#include "jit/jit_impl.h"

namespace {

// The names of f's instructions in order (unnamed ones as "-").
std::vector<std::string> Order(LLVMValueRef f) {
  std::vector<std::string> v;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      size_t n;
      const char *s = LLVMGetValueName2(i, &n);
      v.push_back(n ? std::string(s, n) : "-");
    }
  return v;
}

int At(const std::vector<std::string> &v, const char *name) {
  for (size_t k = 0; k < v.size(); k++)
    if (v[k] == name) return (int)k;
  return -1;
}

}  // namespace

TEST(JitSink, PureMovesToItsUseLoadsStopAtAStore) {
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("sink", c);
  LLVMTypeRef f32 = LLVMFloatTypeInContext(c), ptr = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef params[2] = {ptr, ptr};
  LLVMValueRef f = LLVMAddFunction(m, "f", LLVMFunctionType(LLVMVoidTypeInContext(c), params, 2, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, f, "entry"));
  LLVMValueRef p = LLVMGetParam(f, 0), q = LLVMGetParam(f, 1), one = LLVMConstInt(i64, 1, 0);
  LLVMValueRef a = LLVMBuildLoad2(b, f32, p, "a");
  LLVMValueRef p1 = LLVMBuildGEP2(b, f32, p, &one, 1, "p1");
  LLVMValueRef bv = LLVMBuildLoad2(b, f32, p1, "b");
  LLVMValueRef x = LLVMBuildFMul(b, a, LLVMConstReal(f32, 2.0), "x");
  LLVMValueRef z = LLVMBuildFAdd(b, a, LLVMConstReal(f32, 3.0), "z");
  LLVMBuildStore(b, LLVMConstReal(f32, 0.0), q);  // may alias p: a barrier for the loads
  LLVMValueRef y = LLVMBuildFAdd(b, x, bv, "y");
  LLVMValueRef q1 = LLVMBuildGEP2(b, f32, q, &one, 1, "q1");
  LLVMBuildStore(b, y, q1);
  LLVMBuildStore(b, z, q);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  std::vector<std::string> before = Order(f);
  uopi_jit_sink_to_uses(m);
  std::vector<std::string> after = Order(f);
  int store0 = At(after, "-");  // the first store
  EXPECT_LT(At(after, "a"), store0);
  EXPECT_LT(At(after, "b"), store0);                 // a load does not pass the store
  EXPECT_EQ(At(after, "x") + 1, At(after, "y"));     // pure: just before its use, past the store
  EXPECT_GT(At(after, "z"), At(after, "y"));         // its use is the last store
  EXPECT_EQ(before.size(), after.size());
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
}
#endif
