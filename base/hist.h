/*
 * hist.h: a fixed-size logarithmic histogram for quantiles of non-negative values
 * (job completion and waiting times). Buckets grow by a factor of 1.001 from 1e-6 to
 * 1e11, so any quantile is within 0.1 % of the exact order statistic; zero has a
 * bucket of its own and is exact. Count, sum, min and max are exact. Memory is fixed
 * (about 300 KiB), independent of how many values are added.
 */
#ifndef BASE_HIST_H
#define BASE_HIST_H

#include <stdint.h>

typedef struct sim_hist sim_hist;

sim_hist *sim_hist_create(void);
void sim_hist_destroy(sim_hist *h);
/* Add x (negative values count as 0). O(1). */
void sim_hist_add(sim_hist *h, double x);
uint64_t sim_hist_count(const sim_hist *h);
/* Mean, maximum and minimum: NaN when empty (an empty distribution has none; a caller
 * that writes JSON writes null, one that shows a table shows n/a). */
double sim_hist_mean(const sim_hist *h);
double sim_hist_max(const sim_hist *h);
double sim_hist_min(const sim_hist *h);
/* The q-quantile (0..1) by nearest rank, within 0.1 %; NaN when empty. */
double sim_hist_quantile(const sim_hist *h, double q);

#endif
