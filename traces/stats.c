/*
 * stats.c: trace statistics, accumulated one job at a time. Hours of day are taken
 * from the submit time modulo one day, so they are true times of day for formats whose
 * origin is a midnight (Philly, Helios) and relative ones otherwise. Quantiles are
 * type-7 sample quantiles (linear interpolation, as R's default) of the sorted
 * durations.
 */
#include "traces/stats.h"

#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double trace_stats_quantile_p[TRACE_STATS_QN] = {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99};

static const char *const field_names[TRACE_F_COUNT] = {
    "tenant", "model",       "qos",     "priority", "gpu_type", "ref_gpu_type", "replicas",
    "gpu_mem_mib", "cpu_milli", "mem_mib", "name", "command", "fractional_share"};

const char *trace_field_name(enum trace_field f)
{
    return (unsigned)f < TRACE_F_COUNT ? field_names[f] : "";
}

void trace_stats_init(trace_stats *s)
{
    memset(s, 0, sizeof *s);
}

void trace_stats_fini(trace_stats *s)
{
    sim_free(s->by_day);
    sim_free(s->durations);
    sim_free(s->tenant_gpu_s);
    sim_free(s->tenant_jobs);
    memset(s, 0, sizeof *s);
}

static int grow_u64(uint64_t **a, uint32_t *n, uint32_t need)
{
    if (need <= *n)
        return SIM_OK;
    uint32_t ncap = *n ? *n : 16;
    while (ncap < need)
        ncap *= 2;
    uint64_t *na = sim_reallocarray(*a, ncap, sizeof *na);
    if (!na)
        return SIM_ENOMEM;
    memset(na + *n, 0, (ncap - *n) * sizeof *na);
    *a = na;
    *n = ncap;
    return SIM_OK;
}

static int grow_tenants(trace_stats *s, uint32_t need)
{
    if (need <= s->n_tenants)
        return SIM_OK;
    uint32_t ncap = s->n_tenants ? s->n_tenants : 16;
    while (ncap < need)
        ncap *= 2;
    double *ng = sim_reallocarray(s->tenant_gpu_s, ncap, sizeof *ng);
    if (!ng)
        return SIM_ENOMEM;
    s->tenant_gpu_s = ng;
    uint64_t *nj = sim_reallocarray(s->tenant_jobs, ncap, sizeof *nj);
    if (!nj)
        return SIM_ENOMEM;
    s->tenant_jobs = nj;
    for (uint32_t i = s->n_tenants; i < ncap; i++) {
        ng[i] = 0;
        nj[i] = 0;
    }
    s->n_tenants = ncap;
    return SIM_OK;
}

int trace_stats_add(trace_stats *s, const job_spec *j)
{
    const sim_time day = 86400 * SIM_US_PER_S;
    if (s->jobs == 0 || j->submit_us < s->first_submit_us)
        s->first_submit_us = j->submit_us;
    if (s->jobs == 0 || j->submit_us > s->last_submit_us)
        s->last_submit_us = j->submit_us;
    sim_time t = j->submit_us < 0 ? 0 : j->submit_us;
    s->by_hour[(t % day) / (3600 * SIM_US_PER_S)]++;
    uint64_t dayno = (uint64_t)(t / day);
    if (dayno >= 100000)
        dayno = 99999;
    uint32_t ndays = s->n_days;
    if (grow_u64(&s->by_day, &ndays, (uint32_t)dayno + 1) != SIM_OK)
        return SIM_ENOMEM;
    s->n_days = ndays;
    s->by_day[dayno]++;
    if (s->n_dur == s->cap_dur) {
        size_t ncap = s->cap_dur ? s->cap_dur * 2 : 4096;
        double *nd = sim_reallocarray(s->durations, ncap, sizeof *nd);
        if (!nd)
            return SIM_ENOMEM;
        s->durations = nd;
        s->cap_dur = ncap;
    }
    s->durations[s->n_dur++] = j->work_s;
    if (j->num_gpus == 0) {
        s->cpu_only++;
    } else {
        uint32_t m = j->gpu_milli;
        s->milli_bins[m >= 1000 ? 10 : (m ? (m - 1) / 100 : 0)]++;
        if (m < 1000)
            s->fields |= 1u << TRACE_F_FRACTIONAL;
    }
    uint32_t k = 0;
    while (k < s->n_gpu_values && s->gpu_value[k] < j->num_gpus)
        k++;
    if (k < s->n_gpu_values && s->gpu_value[k] == j->num_gpus) {
        s->gpu_count[k]++;
    } else if (s->n_gpu_values < TRACE_STATS_GPU_BINS) {
        memmove(&s->gpu_value[k + 1], &s->gpu_value[k],
                (s->n_gpu_values - k) * sizeof s->gpu_value[0]);
        memmove(&s->gpu_count[k + 1], &s->gpu_count[k],
                (s->n_gpu_values - k) * sizeof s->gpu_count[0]);
        s->gpu_value[k] = j->num_gpus;
        s->gpu_count[k] = 1;
        s->n_gpu_values++;
    } else {
        s->gpu_other++;
    }
    double gs = j->num_gpus * (j->gpu_milli / 1000.0) * j->work_s;
    s->gpu_seconds += gs;
    if (grow_tenants(s, j->tenant + 1) != SIM_OK)
        return SIM_ENOMEM;
    s->tenant_gpu_s[j->tenant] += gs;
    s->tenant_jobs[j->tenant]++;
    uint64_t f = 0;
    if (j->tenant)
        f |= 1u << TRACE_F_TENANT;
    if (j->model)
        f |= 1u << TRACE_F_MODEL;
    if (j->qos != SIM_QOS_NONE)
        f |= 1u << TRACE_F_QOS;
    if (j->priority)
        f |= 1u << TRACE_F_PRIORITY;
    if (j->gpu_type_mask)
        f |= 1u << TRACE_F_GPU_TYPE;
    if (j->ref_gpu_type != SIM_GPU_TYPE_NONE)
        f |= 1u << TRACE_F_REF_GPU_TYPE;
    if (j->replicas)
        f |= 1u << TRACE_F_REPLICAS;
    if (j->gpu_mem_mib)
        f |= 1u << TRACE_F_GPU_MEM;
    if (j->cpu_milli)
        f |= 1u << TRACE_F_CPU;
    if (j->mem_mib)
        f |= 1u << TRACE_F_MEM;
    if (j->name && *j->name)
        f |= 1u << TRACE_F_NAME;
    if (j->command && *j->command)
        f |= 1u << TRACE_F_COMMAND;
    s->fields |= f;
    s->attrs |= j->attr_present;
    s->jobs++;
    return SIM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double trace_stats_duration_quantile(const trace_stats *s, double p)
{
    if (!s->n_dur)
        return 0;
    if (p <= 0)
        return s->durations[0];
    if (p >= 1)
        return s->durations[s->n_dur - 1];
    double h = p * (double)(s->n_dur - 1);
    size_t lo = (size_t)floor(h);
    double frac = h - (double)lo;
    if (lo + 1 >= s->n_dur)
        return s->durations[s->n_dur - 1];
    return s->durations[lo] + frac * (s->durations[lo + 1] - s->durations[lo]);
}

void trace_stats_finish(trace_stats *s)
{
    if (s->n_dur)
        qsort(s->durations, s->n_dur, sizeof *s->durations, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < s->n_dur; i++)
        sum += s->durations[i];
    s->dur_mean = s->n_dur ? sum / (double)s->n_dur : 0;
    s->dur_min = s->n_dur ? s->durations[0] : 0;
    s->dur_max = s->n_dur ? s->durations[s->n_dur - 1] : 0;
    for (int q = 0; q < TRACE_STATS_QN; q++)
        s->dur_q[q] = trace_stats_duration_quantile(s, trace_stats_quantile_p[q]);
    /* Trim the per-day table to the last day with an arrival. */
    uint32_t n = s->n_days;
    while (n && s->by_day[n - 1] == 0)
        n--;
    s->n_days = n;
}

double trace_stats_rate_h(const trace_stats *s)
{
    double span_h = (double)(s->last_submit_us - s->first_submit_us) / 3.6e9;
    return s->jobs >= 2 && span_h > 0 ? (double)(s->jobs - 1) / span_h : 0;
}
