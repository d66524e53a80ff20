/* Plain C loop of exact single-class MVA: the near-physical-limit reference
 * of the qmodels benchmarks (compiled at bench time with `cc -O2` into
 * benchmarks/_build/, never committed).
 *
 * Recursion (Reiser & Lavenberg 1980; Lazowska et al., QSP 1984, Alg. 6.1),
 * fixed-rate queueing stations plus a think time Z:
 *     R_k(n) = D_k (1 + Q_k(n-1)),  X(n) = n / (Z + sum_k R_k(n)),
 *     Q_k(n) = X(n) R_k(n).
 *
 * Input on stdin (whitespace separated):
 *     single K N Z reps  D_1 .. D_K
 *     batch  B K N reps  D[b][k] (B*K values, row by row)  Z_1 .. Z_B
 * Output on stdout:
 *     time <seconds>             one line per timed repetition (one solve
 *                                 of the model, or of the whole batch)
 *     X <throughput>             single: then one "Q <q_k>" line per station
 *     X <x_b>                    batch: one line per configuration
 * Every repetition solves from scratch; a volatile sink keeps the compiler
 * from dropping repeated solves.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile double sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One solve; Q (length K) is overwritten with Q_k(N); returns X(N). */
static double mva(const double *D, int K, long N, double Z, double *Q, double *R)
{
    double X = 0.0;
    for (int k = 0; k < K; k++)
        Q[k] = 0.0;
    for (long n = 1; n <= N; n++) {
        double tot = Z;
        for (int k = 0; k < K; k++) {
            R[k] = D[k] * (1.0 + Q[k]);
            tot += R[k];
        }
        X = (double)n / tot;
        for (int k = 0; k < K; k++)
            Q[k] = X * R[k];
    }
    return X;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static void read_doubles(double *a, long n)
{
    for (long i = 0; i < n; i++)
        if (scanf("%lf", &a[i]) != 1) {
            fprintf(stderr, "short input\n");
            exit(2);
        }
}

int main(void)
{
    char mode[16];
    if (scanf("%15s", mode) != 1) {
        fprintf(stderr, "usage: see the comment at the top of mva.c\n");
        return 2;
    }
    if (strcmp(mode, "single") == 0) {
        int K, reps;
        long N;
        double Z;
        if (scanf("%d %ld %lf %d", &K, &N, &Z, &reps) != 4 || K < 1 || N < 0 || reps < 1) {
            fprintf(stderr, "bad header\n");
            return 2;
        }
        double *D = xmalloc(sizeof(double) * K), *Q = xmalloc(sizeof(double) * K),
               *R = xmalloc(sizeof(double) * K);
        read_doubles(D, K);
        double X = mva(D, K, N, Z, Q, R); /* warm-up */
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            X = mva(D, K, N, Z, Q, R);
            double t1 = now();
            sink = X;
            printf("time %.9g\n", t1 - t0);
        }
        printf("X %.17g\n", X);
        for (int k = 0; k < K; k++)
            printf("Q %.17g\n", Q[k]);
        return 0;
    }
    if (strcmp(mode, "batch") == 0) {
        long B;
        int K, reps;
        long N;
        if (scanf("%ld %d %ld %d", &B, &K, &N, &reps) != 4 || B < 1 || K < 1 || N < 0 || reps < 1) {
            fprintf(stderr, "bad header\n");
            return 2;
        }
        double *D = xmalloc(sizeof(double) * B * K), *Z = xmalloc(sizeof(double) * B),
               *X = xmalloc(sizeof(double) * B), *Q = xmalloc(sizeof(double) * K),
               *R = xmalloc(sizeof(double) * K);
        read_doubles(D, B * K);
        read_doubles(Z, B);
        for (int r = 0; r <= reps; r++) { /* r == 0: warm-up */
            double t0 = now();
            for (long b = 0; b < B; b++)
                X[b] = mva(D + b * K, K, N, Z[b], Q, R);
            double t1 = now();
            sink = X[B - 1];
            if (r > 0)
                printf("time %.9g\n", t1 - t0);
        }
        for (long b = 0; b < B; b++)
            printf("X %.17g\n", X[b]);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
