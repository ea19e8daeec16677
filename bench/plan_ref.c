/* The C references of bench_plans: each workload of bench/data/ (the .uir files) written
 * as plain loops with the same ops in the same order as the program (no FMA:
 * compiled by clang-19 -O3 -march=native -ffp-contract=off; sums left to
 * right from the first element; exp2 as libm's double exp2 rounded to f32;
 * a divide as a multiply by recip), so the outputs are bit-identical to the
 * plan's.  matmul_ikj is the usual fast C loop (c[i][j] += a[i][k]*b[k][j]
 * from zero), a different order, for reference only; matmul_ikj_seq is the
 * same i-k-j loop started from the k = 0 products, so that each c[i][j] sees
 * the adds of matmul_ijk in the same order (bit-identical to it, at the
 * i-k-j loop's speed). */
#include <math.h>

void ref_ew(float *restrict o, const float *restrict a, const float *restrict b, long n);
float ref_sum(const float *restrict a, long n);
void ref_matmul_ijk(float *restrict c, const float *restrict a, const float *restrict b, long n);
void ref_matmul_ikj(float *restrict c, const float *restrict a, const float *restrict b, long n);
void ref_matmul_ikj_seq(float *restrict c, const float *restrict a, const float *restrict b, long n);
void ref_softmax(float *restrict y, float *restrict e, const float *restrict x, long rows, long n);
void ref_attention(float *restrict o, float *restrict s, float *restrict p, const float *restrict q,
                   const float *restrict k, const float *restrict v, long n, long d);

void ref_ew(float *restrict o, const float *restrict a, const float *restrict b, long n) {
  for (long i = 0; i < n; i++) o[i] = a[i] * b[i] + a[i];
}

float ref_sum(const float *restrict a, long n) {
  float acc = a[0];
  for (long i = 1; i < n; i++) acc = acc + a[i];
  return acc;
}

void ref_matmul_ijk(float *restrict c, const float *restrict a, const float *restrict b, long n) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      float acc = a[i * n] * b[j];
      for (long k = 1; k < n; k++) acc = acc + a[i * n + k] * b[k * n + j];
      c[i * n + j] = acc;
    }
}

void ref_matmul_ikj(float *restrict c, const float *restrict a, const float *restrict b, long n) {
  for (long i = 0; i < n * n; i++) c[i] = 0;
  for (long i = 0; i < n; i++)
    for (long k = 0; k < n; k++) {
      float x = a[i * n + k];
      for (long j = 0; j < n; j++) c[i * n + j] += x * b[k * n + j];
    }
}

void ref_matmul_ikj_seq(float *restrict c, const float *restrict a, const float *restrict b, long n) {
  for (long i = 0; i < n; i++) {
    float x = a[i * n];
    for (long j = 0; j < n; j++) c[i * n + j] = x * b[j];
    for (long k = 1; k < n; k++) {
      x = a[i * n + k];
      for (long j = 0; j < n; j++) c[i * n + j] = c[i * n + j] + x * b[k * n + j];
    }
  }
}

static float f_exp2(float x) { return (float)exp2((double)x); }

void ref_softmax(float *restrict y, float *restrict e, const float *restrict x, long rows, long n) {
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * n;
    float m = xr[0];
    for (long i = 1; i < n; i++) m = xr[i] > m ? xr[i] : m;
    float nm = m * -1.0f;
    for (long i = 0; i < n; i++) e[r * n + i] = f_exp2((xr[i] + nm) * 1.4426950408889634f);
    float s = e[r * n];
    for (long i = 1; i < n; i++) s = s + e[r * n + i];
    float rs = 1.0f / s;
    for (long i = 0; i < n; i++) y[r * n + i] = e[r * n + i] * rs;
  }
}

void ref_attention(float *restrict o, float *restrict s, float *restrict p, const float *restrict q,
                   const float *restrict k, const float *restrict v, long n, long d) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      float acc = q[i * d] * k[j * d];
      for (long t = 1; t < d; t++) acc = acc + q[i * d + t] * k[j * d + t];
      s[i * n + j] = acc * 0.125f;
    }
  for (long i = 0; i < n; i++) {
    float m = s[i * n];
    for (long j = 1; j < n; j++) m = s[i * n + j] > m ? s[i * n + j] : m;
    float nm = m * -1.0f;
    for (long j = 0; j < n; j++) p[i * n + j] = f_exp2((s[i * n + j] + nm) * 1.4426950408889634f);
    float z = p[i * n];
    for (long j = 1; j < n; j++) z = z + p[i * n + j];
    float rz = 1.0f / z;
    for (long j = 0; j < n; j++) p[i * n + j] = p[i * n + j] * rz;
  }
  for (long i = 0; i < n; i++)
    for (long t = 0; t < d; t++) {
      float acc = p[i * n] * v[t];
      for (long j = 1; j < n; j++) acc = acc + p[i * n + j] * v[j * d + t];
      o[i * d + t] = acc;
    }
}
