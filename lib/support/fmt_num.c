/* lib/support/fmt_num.c - numbers as the shortest decimal that reads back to
 * the same value, in Python's repr layout.
 *
 * "Reads back" means what the rest of uopc does with a literal: the decimal
 * is read as the nearest double, then rounded to the dtype (f32: nearest
 * even; f16: nearest even from the double, uopc_round_f16).  For p
 * significant digits we try the correctly rounded p-digit decimal (printf's
 * %.*e, exact in glibc) and, when it misses, its neighbour on the other
 * side of the value: near a power of two the set of decimals that read back
 * is lopsided, and the nearest p-digit decimal can fall on the narrow side
 * while the other neighbour reads back.  The shortest p is found by
 * bisection over 1..17 (17 digits always read back to the same double).
 * Among decimals of that length the one nearest the value wins, as in
 * Python.  Neither direction depends on the locale: the decimals given to
 * strtod have no decimal point, and only digits are taken from printf.
 *
 * Layout (Python's float repr): fixed notation when the decimal exponent E
 * of the first digit is in -4 <= E < 16 (with ".0" for whole numbers),
 * otherwise d.ddde+XX with at least two exponent digits: 2.0, 0.0001,
 * 1e-05, 1.5e-07, 1e+16, 5e-324, inf, -inf, nan, -0.0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"
#include "uopc/algebra.h"
#include "uopc/uir.h"

typedef enum prec { P_F64, P_F32, P_F16 } prec;

static double read_back(double y, prec p) {
  switch (p) {
  case P_F32: return uopc_round_f32(y);
  case P_F16: return uopc_round_f16(y);
  default: return y;
  }
}

/* Does digits d[0..n) x 10^(E-n+1) read back to x (x > 0)?  *y gets the
   double the decimal reads as. */
static int reads_back(const char *d, int n, int E, double x, prec p, double *y) {
  char s[48];
  memcpy(s, d, (size_t)n);
  snprintf(s + n, sizeof s - (size_t)n, "e%d", E - n + 1);
  *y = strtod(s, NULL);
  return read_back(*y, p) == x;
}

/* The correctly rounded p-digit decimal of x > 0: digits into d, returns E. */
static int round_digits(double x, int p, char *d) {
  char s[64];
  snprintf(s, sizeof s, "%.*e", p - 1, x);
  int n = 0;
  const char *q = s;
  for (; *q && *q != 'e'; q++)
    if (*q >= '0' && *q <= '9') d[n++] = *q;
  return *q == 'e' ? atoi(q + 1) : 0;
}

/* d[0..n) plus (up) or minus one unit in the last place.  Returns the new
   digit count (n, or n - 1 when a leading 1 became 0), adjusting *E; 0 when
   nothing is left. */
static int step_digits(char *d, int n, int *E, int up) {
  int i = n - 1;
  if (up) {
    while (i >= 0 && d[i] == '9') d[i--] = '0';
    if (i >= 0) {
      d[i]++;
      return n;
    }
    d[0] = '1'; /* 99..9 + 1 = 100..0 */
    for (int j = 1; j < n; j++) d[j] = '0';
    ++*E;
    return n;
  }
  while (i >= 0 && d[i] == '0') d[i--] = '9';
  if (i < 0) return 0;
  d[i]--;
  if (d[0] != '0') return n;
  memmove(d, d + 1, (size_t)n - 1);
  --*E;
  return n - 1;
}

/* Python's repr layout of (neg ? -1 : 1) * 0.d[0..n) x 10^(E+1). */
static int layout(char *buf, int neg, const char *d, int n, int E) {
  int k = 0;
  while (n > 1 && d[n - 1] == '0') n--;
  if (neg) buf[k++] = '-';
  if (E < -4 || E >= 16) {
    buf[k++] = d[0];
    if (n > 1) {
      buf[k++] = '.';
      memcpy(buf + k, d + 1, (size_t)n - 1);
      k += n - 1;
    }
    k += snprintf(buf + k, 8, "e%c%02d", E < 0 ? '-' : '+', abs(E));
  } else if (E >= 0) {
    for (int i = 0; i <= E; i++) buf[k++] = i < n ? d[i] : '0';
    buf[k++] = '.';
    if (n > E + 1) {
      memcpy(buf + k, d + E + 1, (size_t)(n - E - 1));
      k += n - E - 1;
    } else {
      buf[k++] = '0';
    }
  } else {
    buf[k++] = '0';
    buf[k++] = '.';
    for (int i = 0; i < -E - 1; i++) buf[k++] = '0';
    memcpy(buf + k, d, (size_t)n);
    k += n;
  }
  buf[k] = 0;
  return k;
}

/* Is there a p-digit decimal that reads back to a > 0?  The nearest one,
   or else its neighbour on the other side of a; the digits go to d[0..*m)
   with first-digit exponent *E. */
static int try_digits(double a, int p, prec pr, char *d, int *m, int *E) {
  double y;
  *E = round_digits(a, p, d);
  *m = p;
  if (reads_back(d, p, *E, a, pr, &y)) return 1;
  *m = step_digits(d, p, E, y < a);
  return *m > 0 && reads_back(d, *m, *E, a, pr, &y);
}

/* x is already a value of precision p. */
static int fmt_float(double x, prec p, char *buf) {
  if (isnan(x)) return (int)(strcpy(buf, "nan"), 3);
  int neg = signbit(x) != 0;
  double a = fabs(x);
  if (isinf(x)) return neg ? (int)(strcpy(buf, "-inf"), 4) : (int)(strcpy(buf, "inf"), 3);
  if (a == 0) return neg ? (int)(strcpy(buf, "-0.0"), 4) : (int)(strcpy(buf, "0.0"), 3);
  /* Whole numbers below the precision's 2^mantissa: ulp <= 1, so no shorter
     decimal reads back and the integer's own digits are the answer. */
  double whole = p == P_F64 ? 0x1p53 : p == P_F32 ? 0x1p24 : 0x1p11;
  if (a < whole && a == floor(a)) return snprintf(buf, 32, "%s%.0f.0", neg ? "-" : "", a);
  /* A p-digit decimal reads back for every p from the shortest on (pad it
     with zeros), and try_digits answers exactly for each p, so the shortest
     p can be found by bisection; 17 digits always read back. */
  char d[24];
  int lo = 1, hi = 17, m, E;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (try_digits(a, mid, p, d, &m, &E)) hi = mid;
    else lo = mid + 1;
  }
  if (try_digits(a, hi, p, d, &m, &E)) return layout(buf, neg, d, m, E);
  /* not reached; keep a safe answer anyway */
  return snprintf(buf, 32, "%.17g", x);
}

int uopc_fmt_double(double v, char *buf) { return buf ? fmt_float(v, P_F64, buf) : 0; }

int uopc_fmt_scalar(double v, uopc_dtype t, char *buf) {
  if (!buf) return 0;
  switch (t) {
  case UOPC_DT_BOOL: return (int)(strcpy(buf, v != 0 ? "True" : "False"), v != 0 ? 4 : 5);
  case UOPC_DT_I32:
    if (v >= -9.2e18 && v <= 9.2e18) return snprintf(buf, 32, "%lld", (long long)v);
    return fmt_float(v, P_F64, buf);
  case UOPC_DT_F32: return fmt_float(uopc_round_f32(v), P_F32, buf);
  case UOPC_DT_F16: return fmt_float(uopc_round_f16(v), P_F16, buf);
  default: return fmt_float(v, P_F64, buf);
  }
}
