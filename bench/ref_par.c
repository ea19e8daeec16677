/* ref_par: a loop body on several threads (pthreads), for the STREAM, FMA and
 * a*b+a references of bench_throughput (refs.h).  A thread per call: the
 * calls it serves take milliseconds, the start tens of microseconds. */
#include <pthread.h>

#include "refs.h"

enum { MAX_THREADS = 64 };

typedef struct {
  void (*fn)(void *arg, int t, int threads);
  void *arg;
  int t, threads;
} job;

static void *run_job(void *p) {
  job *j = p;
  j->fn(j->arg, j->t, j->threads);
  return 0;
}

void ref_par(int threads, void (*fn)(void *arg, int t, int threads), void *arg) {
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  pthread_t tid[MAX_THREADS];
  job jobs[MAX_THREADS];
  int started[MAX_THREADS] = {0};
  for (int t = 1; t < threads; t++) {
    jobs[t] = (job){fn, arg, t, threads};
    started[t] = pthread_create(&tid[t], 0, run_job, &jobs[t]) == 0;
  }
  fn(arg, 0, threads);
  for (int t = 1; t < threads; t++) {
    if (started[t]) pthread_join(tid[t], 0);
    else fn(arg, t, threads);
  }
}

void ref_share(long n, int t, int threads, long *lo, long *hi) {
  long blocks = (n + 63) / 64, per = blocks / threads, extra = blocks % threads;
  long b0 = t * per + (t < extra ? t : extra), b1 = b0 + per + (t < extra);
  *lo = b0 * 64 < n ? b0 * 64 : n;
  *hi = b1 * 64 < n ? b1 * 64 : n;
}
