/*
 * hist.c: bucket i >= 1 holds values in [LO*G^(i-1), LO*G^i); bucket 0 holds values
 * below LO (reported as 0). A quantile returns the geometric middle of its bucket,
 * clamped to the exact min and max, so its relative error is below (G-1)/2. An empty
 * histogram has no mean, quantile, minimum or maximum: they are NaN, never 0, so a
 * report cannot mistake "no value" for a value of 0.
 */
#include "base/hist.h"

#include "base/alloc.h"

#include <math.h>

#define LO 1e-6
#define GROWTH 1.001
#define NBUCKETS 40000 /* LO * GROWTH^NBUCKETS > 1e11 */

struct sim_hist {
    uint64_t count;
    double sum, min, max;
    double log_growth;
    uint64_t b[NBUCKETS + 1];
};

sim_hist *sim_hist_create(void)
{
    sim_hist *h = sim_calloc(1, sizeof *h);
    if (h) {
        h->log_growth = log(GROWTH);
        h->min = INFINITY;
    }
    return h;
}

void sim_hist_destroy(sim_hist *h)
{
    sim_free(h);
}

void sim_hist_add(sim_hist *h, double x)
{
    if (!(x > 0))
        x = 0;
    h->count++;
    h->sum += x;
    if (x < h->min)
        h->min = x;
    if (x > h->max)
        h->max = x;
    size_t i = 0;
    if (x >= LO) {
        double k = floor(log(x / LO) / h->log_growth) + 1;
        i = k >= NBUCKETS ? NBUCKETS : (size_t)k;
    }
    h->b[i]++;
}

uint64_t sim_hist_count(const sim_hist *h)
{
    return h->count;
}

double sim_hist_mean(const sim_hist *h)
{
    return h->count ? h->sum / (double)h->count : NAN;
}

double sim_hist_max(const sim_hist *h)
{
    return h->count ? h->max : NAN;
}

double sim_hist_min(const sim_hist *h)
{
    return h->count ? h->min : NAN;
}

double sim_hist_quantile(const sim_hist *h, double q)
{
    if (!h->count)
        return NAN;
    if (q <= 0)
        return h->min;
    if (q >= 1)
        return h->max;
    uint64_t rank = (uint64_t)ceil(q * (double)h->count);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i <= NBUCKETS; i++) {
        seen += h->b[i];
        if (seen < rank)
            continue;
        if (i == 0)
            return h->min < LO ? h->min : 0;
        double lo = LO * exp((double)(i - 1) * h->log_growth);
        double v = lo * sqrt(GROWTH);
        if (v < h->min)
            v = h->min;
        if (v > h->max)
            v = h->max;
        return v;
    }
    return h->max;
}
