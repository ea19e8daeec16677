/* uopc/npy.h - reading and writing NumPy .npy files (format versions 1.0,
 * 2.0 and 3.0) for the dtypes kernels use.
 *
 *     dtype   descr   element
 *     bool    |b1     one byte (0 False, anything else True)
 *     i32     <i4     little-endian two's complement
 *     f32     <f4     little-endian IEEE binary32
 *     f16     <f2     little-endian IEEE binary16
 *
 * Only C order (fortran_order False) and little-endian data.  The header is
 * parsed strictly: a Python dict literal with exactly the keys 'descr',
 * 'fortran_order' and 'shape' (each once, in any order, quoted with ' or "),
 * a shape tuple of non-negative integers, then spaces and a final newline.
 * The data must be exactly the bytes the shape and dtype say: a short file is
 * "truncated", a longer one has "trailing bytes".  Malformed input of any
 * kind gives an error, never a crash.
 *
 * Errors: uopc_error with code UOPC_ERR_IO (the file cannot be opened, read
 * or written), UOPC_ERR_SYNTAX (not a valid .npy file) or UOPC_ERR_ARG
 * (a valid file of an unsupported kind: another dtype, big-endian, Fortran
 * order); e->file is the path (not copied), e->msg says what is wrong, e.g.
 * "dtype <f8 is not supported (bool |b1, i32 <i4, f32 <f4, f16 <f2)".
 */
#ifndef UOPC_NPY_H
#define UOPC_NPY_H

#include "uopc/uop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An array: dtype, shape, and the elements in C order. */
typedef struct uopc_npy {
  uopc_dtype dtype;
  uint32_t ndim;                  /* 0 for a scalar */
  int64_t shape[UOPC_LIMIT_DIMS];
  int64_t count;                  /* product of the shape (1 for a scalar) */
  void *data;                     /* count * uopc_dtype_size(dtype) bytes,
                                     64-byte aligned; NULL when count is 0 */
} uopc_npy;

/* Parses the .npy bytes buf[0..n) into *out (the data is copied into a new
   64-byte aligned block).  name is used as e->file.  Returns UOPC_OK, or an
   error with *out zeroed. */
UOPC_API uopc_status uopc_npy_parse(const void *buf, size_t n, const char *name, uopc_npy *out, uopc_error *e);

/* Reads and parses the file at path. */
UOPC_API uopc_status uopc_npy_read(const char *path, uopc_npy *out, uopc_error *e);

/* The .npy encoding of an array (version 1.0 when the header fits in 65535
   bytes, else 2.0; header padded with spaces to a multiple of 64 bytes, as
   NumPy writes it).  Returns a malloc'd block (caller frees) of *size bytes,
   or NULL with the error (UOPC_ERR_ARG for a bad dtype or shape, NOMEM). */
UOPC_API void *uopc_npy_encode(const uopc_npy *a, size_t *size, uopc_error *e);

/* Writes a to a new file next to path (path.tmp-PID-XXXXXX, created
   exclusively, mode 0666 less the umask) and returns its name in *tmp_path
   (malloc'd, caller frees); the caller renames it over path, or removes it.
   For writing several files all or none: write every temporary first, then
   rename them all.  On error nothing is left behind. */
UOPC_API uopc_status uopc_npy_save_temp(const char *path, const uopc_npy *a, char **tmp_path, uopc_error *e);

/* Writes a to path atomically: uopc_npy_save_temp, then rename over path.
   On any error path is left as it was.  (Atomic for readers and against
   failures of this process; the data is not fsynced.) */
UOPC_API uopc_status uopc_npy_save(const char *path, const uopc_npy *a, uopc_error *e);

/* Frees a->data and zeroes *a.  NULL is a no-op.

   Every call above that takes a uopc_error * reports through it only (e
   may be NULL); a NULL buffer, path, array or output pointer is
   UOPC_ERR_ARG, never a crash.  Any thread. */
UOPC_API void uopc_npy_free(uopc_npy *a);

/* The descr of a dtype ("<f4", ...), or NULL for VOID and unknown values. */
UOPC_API const char *uopc_npy_descr(uopc_dtype t);

#ifdef __cplusplus
}
#endif
#endif
