/*
 * test_hist.c: the quantile histogram — exact count, mean, min, max; quantiles within
 * 0.1 % of the exact order statistic of random heavy-tailed samples; zeros exact.
 */
#include "base/hist.h"

#include "check.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    sim_hist *h = sim_hist_create();
    CHECK_EQ_I64(sim_hist_count(h), 0);
    /* An empty distribution has no value: NaN, not 0 (summary.json writes null). */
    CHECK(isnan(sim_hist_quantile(h, 0.5)));
    CHECK(isnan(sim_hist_quantile(h, 0.0)));
    CHECK(isnan(sim_hist_quantile(h, 1.0)));
    CHECK(isnan(sim_hist_mean(h)));
    CHECK(isnan(sim_hist_max(h)));
    CHECK(isnan(sim_hist_min(h)));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    size_t n = 100000;
    double *x = malloc(n * sizeof *x);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = i % 10 == 0 ? 0 : gsl_ran_lognormal(r, 7.0, 2.5);
        sum += x[i];
        sim_hist_add(h, x[i]);
    }
    qsort(x, n, sizeof *x, cmp_double);
    CHECK_EQ_I64(sim_hist_count(h), n);
    CHECK_NEAR(sim_hist_mean(h), sum / (double)n, 1e-12);
    CHECK(sim_hist_max(h) == x[n - 1]);
    CHECK(sim_hist_min(h) == 0);
    const double qs[] = {0.05, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999};
    for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
        size_t rank = (size_t)ceil(qs[k] * (double)n);
        CHECK_NEAR(sim_hist_quantile(h, qs[k]), x[rank - 1], 1e-3);
    }
    /* The 5 % quantile lies among the zeros, which are exact. */
    CHECK(sim_hist_quantile(h, 0.05) == 0);
    CHECK(sim_hist_quantile(h, 1.0) == x[n - 1]);
    sim_hist *one = sim_hist_create();
    sim_hist_add(one, 2.385);
    CHECK(sim_hist_quantile(one, 0.5) == 2.385);
    CHECK(sim_hist_quantile(one, 0.99) == 2.385);
    sim_hist_destroy(one);
    sim_hist_destroy(h);
    gsl_rng_free(r);
    free(x);
    return check_done();
}
