/* uopc/uir.h - the .uir text form (docs/uir.md is the contract) and the
 * printing of values and numbers.
 */
#ifndef UOPC_UIR_H
#define UOPC_UIR_H

#include <stdio.h>

#include "uopc/tensor.h"
#include "uopc/uop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses .uir text of length len (need not be NUL-terminated; NUL bytes are
   an error) and returns its root (the node of the last line).  file names the
   source in errors.  On error returns NULL and fills *e with FILE, LINE, COL
   of the offending token and a message; nothing stays half-built that a
   caller could see.  Channel 1b (uopc.h): the error only in *e, the
   context's recorded error left as it was.  NULL c: UOPC_ERR_ARG; NULL
   text with len > 0: UOPC_ERR_SYNTAX "no text"; file may be NULL. */
UOPC_API uopc_node *uopc_uir_parse(uopc_ctx *c, const char *text, size_t len, const char *file,
                                   uopc_error *e);
/* Reads and parses a file (UOPC_ERR_IO when it cannot; NULL c or path:
   UOPC_ERR_ARG). */
UOPC_API uopc_node *uopc_uir_parse_file(uopc_ctx *c, const char *path, uopc_error *e);

/* Prints root as .uir: lines %0, %1, ... in toposort order, constants inline
   where literal typing gives their dtype back.  parse(print(g)) == g.
   Returns a NUL-terminated string from uopc_mem_alloc (free with
   uopc_mem_free(c, s, strlen(s) + 1)), or NULL on allocation failure (and
   with UOPC_ERR_ARG for a NULL or foreign root). */
UOPC_API char *uopc_uir_print(uopc_ctx *c, uopc_node *root);
/* The same text written to f as it is made, in pieces of about 64 KiB, so
   a graph of a million nodes prints without its 30 MB of text in memory.
   Returns 0, or -1 with the error in the context: UOPC_ERR_ARG (NULL or
   foreign root, NULL f), UOPC_ERR_NOMEM, UOPC_ERR_IO (a write to f failed).
   The tables are made before the first write, so out of memory leaves f
   untouched, except for a line longer than 64 KiB (a SINK of thousands of
   sources) whose buffer could not grow; after UOPC_ERR_IO, or that, f may
   hold part of the text.  f is not flushed or closed. */
UOPC_API int uopc_uir_write(uopc_ctx *c, uopc_node *root, FILE *f);

/* Writes the shortest decimal that reads back to the same double, in
   Python's repr layout (2.0, 0.1, 1e+16, 1e-05, inf, -inf, nan, -0.0).
   Returns the length.  buf must hold 32 bytes (NULL buf: 0). */
UOPC_API int uopc_fmt_double(double v, char *buf);
/* The same at a dtype's precision: the shortest digits that read back to the
   same f32 (or f16) value; for bool "True"/"False"; for i32 decimal; for
   an unknown dtype as uopc_fmt_double. */
UOPC_API int uopc_fmt_scalar(double v, uopc_dtype t, char *buf);

/* A value (a CONST, or a STACK tree of CONSTs) as a Python literal: nested
   lists, floats at their dtype's precision.  Returns a string from
   uopc_mem_alloc (free with uopc_mem_free(c, s, strlen(s) + 1)), or NULL
   with an error ("program did not evaluate to a value, stuck at OP") when
   u is not a value; UOPC_ERR_ARG for a NULL or foreign u. */
UOPC_API char *uopc_value_print(uopc_ctx *c, uopc_node *u);

/* The elements of t as `uopc run` prints a value of that dtype and shape
   (the same printer: nested lists, floats at their dtype's precision).
   Returns a string from uopc_mem_alloc (free with uopc_mem_free(c, s,
   strlen(s) + 1)), or NULL with UOPC_ERR_ARG (NULL t or data, a bad dtype or
   shape) or UOPC_ERR_NOMEM in c. */
UOPC_API char *uopc_tensor_print(uopc_ctx *c, const uopc_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
