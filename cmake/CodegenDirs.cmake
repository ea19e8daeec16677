# The lib/ folders whose sources decide a kernel's object code, for the kernel
# cache's codegen id (cmake/CodegenId.cmake, docs/cache.md).  Every folder of
# lib/ is in exactly one of the two lists (scripts/check_codegen_id.sh checks
# it; a new folder fails the check until it is listed).  The files directly in
# lib/ (compile.c, kernel.c, the shared headers) are always covered.
set(UOPC_CODEGEN_DIRS support core rewrite algebra eval lower codegen jit kcache)
# Folders that cannot change generated code, each with its reason:
#   text  the .uir parser and the printers: a kernel is compiled from a graph,
#         and its key is the graph's structure, however the graph was built
#   schedule  rangeify builds kernel graphs from tensor programs: each kernel is
#         keyed by its own graph, so a change here changes keys, not what a
#         key's object code is
set(UOPC_CODEGEN_EXCLUDED text schedule)
