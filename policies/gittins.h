/*
 * gittins.h: the Gittins index of policies/gittins.c, exposed for its tests.
 */
#ifndef POLICIES_GITTINS_H
#define POLICIES_GITTINS_H

#include <stdint.h>

/* The Tiresias simulator's cal_r_gittins_index at attained service a (GPU-seconds) over
 * the m sorted samples data[0..m), with sum[i] = data[0] + ... + data[i-1] (m + 1
 * entries), and quantum delta: P x 10^6 / E (see gittins.c), 0 when a > data[m-1] - 1
 * or m = 0. O(log m). */
double policy_gittins_index(const double *data, const double *sum, uint32_t m, double delta,
                            double a);

#endif
