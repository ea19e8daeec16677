/* uopc/error.h - status codes and the error object.
 *
 * The library never prints (except under the documented debug switches) and
 * never exits: every failure is a status code plus a uopc_error whose message
 * a user can act on.  For .uir text, file/line/col point at the offending
 * token (1-based).
 */
#ifndef UOPC_ERROR_H
#define UOPC_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum uopc_status {
  UOPC_OK = 0,
  UOPC_ERR_TYPE,      /* a node failed its dtype/shape/arg checks */
  UOPC_ERR_SYNTAX,    /* malformed .uir text */
  UOPC_ERR_NOMEM,     /* the allocator failed */
  UOPC_ERR_REWRITE,   /* graph_rewrite did not converge, or a rule failed */
  UOPC_ERR_EVAL,      /* run: stuck, out-of-bounds index, undefined op */
  UOPC_ERR_IO,        /* a file could not be read or written */
  UOPC_ERR_ARG,       /* a bad argument to an API call */
  UOPC_ERR_JIT,       /* LLVM failed */
} uopc_status;

typedef struct uopc_error {
  uopc_status code;
  const char *file;   /* NULL when no file applies (not owned) */
  int line, col;      /* 1-based; 0 when no position applies */
  char msg[256];
} uopc_error;

#ifdef __cplusplus
}
#endif
#endif
