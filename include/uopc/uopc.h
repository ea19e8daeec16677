/* uopc/uopc.h - everything, and the conventions every header follows.
 *
 * THE API CONVENTION (docs/decisions.md, "API convention", says why)
 *
 * 1. Errors: two channels, one per kind of call.
 *
 *    a. Calls that build or transform graphs inside a context and take no
 *       uopc_error * (the constructors of uop.h, uopc_replace, substitute,
 *       toposort, call_params, show; matcher_rewrite, graph_rewrite; vmin,
 *       vmax, simplify, run, inline_call; uir_print, uir_write (-1),
 *       value_print, tensor_print, dot) report through the CONTEXT: they
 *       return NULL (or the sentinel their header names) and record the
 *       error in c, which keeps the FIRST error recorded since the last
 *       uopc_ctx_clear_error (uopc_ctx_error).  A later failure never
 *       overwrites it.
 *       Given a NULL node operand (what a failed inner constructor
 *       returned), they return NULL and add no message of their own when
 *       an error is already recorded; so in
 *           uopc_sink1(c, uopc_store1(c, B, i, uopc_add(c, x, bad)))
 *       one check of the final result suffices, and uopc_ctx_error(c) is
 *       the innermost failure.  (With no error recorded, a NULL operand is
 *       recorded as UOPC_ERR_ARG "... NULL ...".)
 *
 *    b. Calls that take a uopc_error *e (uopc_compile, uopc_emit_llvm/asm,
 *       uopc_plan_compile/emit/schedule, uopc_uir_parse(_file),
 *       uopc_kernel_call(_checked), uopc_plan_call, uopc_pattern_parse,
 *       uopc_matcher_new, the npy and cache calls) report through *e ONLY:
 *       the return value (NULL, or a status other than UOPC_OK) says it
 *       failed, and *e holds THIS call's error, never one recorded by an
 *       earlier call.  e may be NULL (the message is dropped).  *e is set
 *       on failure; on success it is cleared (code UOPC_OK, empty msg, no
 *       file) or left alone, so read it only after a failure.  When such a
 *       call also takes a context, the context's recorded error is the
 *       same after the call as before it: neither set, nor cleared, nor
 *       read.  So a constructor error earlier
 *       in the context, then uopc_compile of a non-SINK root, gives
 *       "a kernel's root must be a SINK ..." in *e, and uopc_ctx_error(c)
 *       still holds the constructor's error.
 *
 * 2. Bad arguments are never a crash.  A NULL pointer where an object is
 *    needed, an op or dtype value outside its enum (999), a tier that is
 *    not a uopc_tier (7), a count that does not fit, a node of ANOTHER
 *    context: UOPC_ERR_ARG with a message naming the call (or, for shape
 *    and type problems of a node, UOPC_ERR_TYPE naming the op), through
 *    the call's channel (1a or 1b).  A call that has neither channel
 *    returns a documented sentinel: 0, NULL, -1, "?", UOPC_DT_VOID, or a
 *    no-op for a void function (each header says which).  NULL c:
 *    constructors and queries return NULL / 0, void calls do nothing; 1b
 *    calls return UOPC_ERR_ARG in *e.  Nodes never cross contexts: every
 *    call that takes a context and nodes checks each node it is given (O(1):
 *    uopc_node_in), at construction and at every entry point that takes a
 *    root (simplify, run, compile, print, plan_compile, ...).
 *
 * 3. Who frees what, with which one function:
 *    - objects have their own free, which takes NULL: uopc_ctx_free,
 *      uopc_kernel_free, uopc_plan_free, uopc_pattern_free,
 *      uopc_matcher_free, uopc_npy_free (its data);
 *    - nodes, and strings the context keeps (uopc_node_pos's file), belong
 *      to the context: never freed one by one, gone with uopc_ctx_free;
 *    - memory handed back by a CONTEXT call (1a: uopc_show, uopc_uir_print,
 *      uopc_value_print, uopc_tensor_print, uopc_dot strings; the
 *      uopc_toposort and uopc_call_params arrays) comes from the context's
 *      allocator (uopc_alloc) and is freed with uopc_mem_free(c, p, size),
 *      size being what the block holds: strlen(s) + 1 for a string,
 *      n * sizeof(uopc_node *) for an array of n nodes;
 *    - memory handed back by an ERROR-OUT call (1b: uopc_emit_llvm/asm,
 *      uopc_plan_emit, uopc_plan_schedule's array and text,
 *      uopc_npy_encode, uopc_npy_save_temp's path) comes from malloc and
 *      is freed with free(): it does not belong to a context;
 *    - static strings (op, dtype, rule class names, uopc_version, npy
 *      descrs) and the built-in matchers (uopc_rules_*) are never freed.
 *
 * 4. Threads:
 *    - a context, and its nodes (their bounds and simplify caches fill
 *      lazily), is used by one thread at a time; different contexts are
 *      independent and may be used on different threads at once;
 *    - compiled kernels (uopc_kernel) and plans (uopc_plan) are immutable
 *      and may be called from any number of threads at once; compiling may
 *      run on many threads, each with its own context;
 *    - matchers (built-in or from uopc_matcher_new) and patterns are
 *      read-only after they are built: shared by every thread and context;
 *    - the kernel cache (cache.h), uopc_version, the op/dtype tables and
 *      the npy calls may be used from any thread at any time.
 */
#ifndef UOPC_UOPC_H
#define UOPC_UOPC_H
#include "uopc/version.h"
#include "uopc/error.h"
#include "uopc/ops.h"
#include "uopc/uop.h"
#include "uopc/rewrite.h"
#include "uopc/uir.h"
#include "uopc/viz.h"
#include "uopc/algebra.h"
#include "uopc/eval.h"
#include "uopc/jit.h"
#include "uopc/npy.h"
#include "uopc/cache.h"
#include "uopc/tensor.h"
#include "uopc/plan.h"
#endif
