/*
 * gavel_lp.h: the linear program of Gavel's heterogeneity-aware max-min fairness
 * (Narayanan et al., OSDI'20, section 4.1; stanford-futuredata/gavel,
 * scheduler/policies/max_min_fairness.py, MaxMinFairnessPolicyWithPerf), solved with
 * GLPK's simplex:
 *   maximise t  subject to  t <= sum_j coef[i][j] x[i][j]   for every job i,
 *                           sum_j x[i][j] <= 1              for every job i,
 *                           sum_i scale[i] x[i][j] <= workers[j]  for every GPU type j,
 *                           0 <= x[i][j] <= 1.
 * x[i][j] is the fraction of time job i should spend on GPU type j. GLPK allocates its
 * problem internally on every solve; callers solve once per scheduling round, never per
 * event.
 */
#ifndef POLICIES_GAVEL_LP_H
#define POLICIES_GAVEL_LP_H

#include "sim/types.h"

/*
 * Solve for n jobs and m GPU types: coef and x are n x m row-major, scale has n entries,
 * workers m. On success x holds the allocation (clipped to [0, 1]) and *t the optimal
 * smallest weighted throughput. SIM_OK, SIM_EINVAL (n or m is 0), or SIM_ENOMEM /
 * SIM_EPOLICY when GLPK fails or finds no optimum.
 */
int gavel_lp_solve(uint32_t n, uint32_t m, const double *coef, const double *scale,
                   const double *workers, double *x, double *t);

/*
 * Gavel's full allocation (max_min_fairness_perf, normalised by its proportional
 * policy): each job's throughput under the proportional allocation, every type's time
 * in proportion to its GPUs, prop_i = sum_j tput[i][j] workers[j] / sum_j workers[j];
 * the LP above is then solved with coef[i][j] = tput[i][j] x scale[i] / (priority[i] x
 * prop_i). tput is n x m (0 = cannot run there); work is scratch of n x m doubles. Same
 * returns as above. With one GPU type (m = 1) and every coefficient positive, the LP is
 * solved in closed form, without GLPK: t* = min(min_i coef_i, workers / sum_i scale_i /
 * coef_i), x_i = t* / coef_i (the least optimal allocation, which is the simplex's).
 */
int gavel_allocation(uint32_t n, uint32_t m, const double *tput, const double *scale,
                     const double *priority, const double *workers, double *work, double *x);

#endif
