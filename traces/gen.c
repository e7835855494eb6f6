/*
 * gen.c: Poisson or diurnal arrivals (a piecewise-constant rate per hour of day: the
 * next arrival is drawn at the current hour's rate and redrawn at the hour's end,
 * which is exact for a Poisson process by memorylessness), lognormal or Pareto
 * durations, a GPU-count mix with fractional shares, Zipf-skewed tenants, an LS/BE
 * mix, and users who over-ask: a fractional job's true demand is its request divided
 * by a factor drawn around over_request. Names repeat per tenant ("t03-resnet50-2")
 * with a tenant- and model-specific duration scale, so duration predictors have history
 * to learn from. With `like`, the distributions are the empirical ones of a real trace.
 */
#include "traces/gen.h"

#include "base/alloc.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct trace_gen {
    trace_gen_config c;
    gsl_rng *rng;
    uint64_t emitted;
    double t_s;
    bool hourly;       /* rates differ by hour of day */
    double rate_h[24]; /* arrivals per hour at each hour of day */
    double *tenant_cdf;
    uint32_t *tenant_ids;
    uint32_t n_tenants;
    double gpu_cdf[TRACE_STATS_GPU_BINS]; /* like: num_gpus mix */
    double milli_cdf[11];                 /* like: gpu_milli bins */
    uint64_t group_no;   /* groups started so far */
    uint32_t group_left; /* jobs of the current group still to emit */
    sim_time group_submit_us;
    sim_intern *models; /* model-class names: the generator's and the annotator's */
    uint32_t model_ids[6];
    uint64_t type_ids[8];
    uint32_t n_types;
    char name[64];
    char command[128];
};

static const char *const model_names[6] = {"resnet50", "vgg16", "bert", "gpt2", "lstm", "dlrm"};

void trace_gen_config_default(trace_gen_config *c)
{
    memset(c, 0, sizeof *c);
    c->jobs = 1000;
    c->seed = 1;
    c->arrival_rate_h = 60;
    c->duration_median_s = 1800;
    c->duration_sigma = 1.5;
    c->frac_share = 0.4;
    c->frac_multi = 0.2;
    c->frac_cpu_only = 0.05;
    c->frac_ls = 0.3;
    c->over_request = 1.5;
    c->tenants = 8;
    c->gang_max = 64;
}

/* Seconds of [t0, t1) that fall in each hour of day. */
static void hour_exposure(double t0, double t1, double out[24])
{
    for (int h = 0; h < 24; h++)
        out[h] = 0;
    double t = t0;
    while (t < t1) {
        double hour_start = floor(t / 3600) * 3600;
        double next = hour_start + 3600;
        double end = next < t1 ? next : t1;
        int h = (int)fmod(hour_start / 3600, 24);
        out[h < 0 ? h + 24 : h] += end - t;
        t = end;
    }
}

static void fit_like(trace_gen *g, const trace_stats *s)
{
    double t0 = (double)s->first_submit_us / 1e6, t1 = (double)s->last_submit_us / 1e6;
    double expo[24];
    hour_exposure(t0, t1, expo);
    double mean = 0;
    for (int h = 0; h < 24; h++) {
        g->rate_h[h] = expo[h] > 0 ? (double)s->by_hour[h] / (expo[h] / 3600) : 0;
        mean += g->rate_h[h] / 24;
    }
    /* mean > 0: the first submission's hour has both exposure and a job. */
    if (g->c.like_rate_h > 0)
        for (int h = 0; h < 24; h++)
            g->rate_h[h] *= g->c.like_rate_h / mean;
    g->t_s = t0;
    double total = 0;
    for (uint32_t k = 0; k < s->n_gpu_values; k++) {
        total += (double)s->gpu_count[k];
        g->gpu_cdf[k] = total;
    }
    for (uint32_t k = 0; k < s->n_gpu_values; k++)
        g->gpu_cdf[k] /= total;
    total = 0;
    for (int k = 0; k < 11; k++) {
        total += (double)s->milli_bins[k];
        g->milli_cdf[k] = total;
    }
    for (int k = 0; k < 11; k++)
        g->milli_cdf[k] = total > 0 ? g->milli_cdf[k] / total : 1;
}

/* Index of the first cdf entry >= u (n entries). */
static uint32_t draw_cdf(const double *cdf, uint32_t n, double u)
{
    uint32_t k = 0;
    while (k + 1 < n && cdf[k] < u)
        k++;
    return k;
}

/* Advance g->t_s to the next arrival of the hour-of-day rate process. */
static void next_arrival(trace_gen *g)
{
    if (!g->hourly) {
        g->t_s += gsl_ran_exponential(g->rng, 3600.0 / g->c.arrival_rate_h);
        return;
    }
    /* Bounded: a rate that is zero at every hour was refused at creation, so at most
     * 24 empty hours are skipped per full day. */
    for (;;) {
        double hour_start = floor(g->t_s / 3600) * 3600;
        int h = (int)fmod(hour_start / 3600, 24);
        double rate = g->rate_h[h < 0 ? h + 24 : h];
        double next = hour_start + 3600;
        if (rate > 0) {
            double t = g->t_s + gsl_ran_exponential(g->rng, 3600.0 / rate);
            if (t < next) {
                g->t_s = t;
                return;
            }
        }
        g->t_s = next;
    }
}

/* The next arrival, for job g->emitted; SIM_ELIMIT past the time limit of the trace
 * readers, which would refuse the trace written. */
static int arrive(trace_gen *g, sim_diag *d)
{
    next_arrival(g);
    if (g->t_s <= SIM_TIME_LIMIT_S)
        return SIM_OK;
    return sim_diag_set(d, SIM_ELIMIT, NULL, 0, 0,
                        "job %llu would be submitted at %.6g s, beyond the 1e10 s the trace "
                        "readers accept: raise --rate or lower --jobs",
                        (unsigned long long)g->emitted + 1, g->t_s);
}

/* A parameter outside its range: named by the `trace gen` option that sets it. */
static int bad_param(sim_diag *d, const char *opt, const char *range, double got)
{
    return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "option %s: expected %s, got %g", opt, range,
                        got);
}

int trace_gen_create(trace_gen **out, const trace_gen_config *c, sim_intern *tenants,
                     sim_intern *models, const sim_intern *gpu_types, sim_diag *d)
{
    *out = NULL;
    if (c->tenants < 1 || c->tenants > 100000)
        return bad_param(d, "--tenants", "an integer 1..100000", c->tenants);
    if (!(c->arrival_rate_h > 0))
        return bad_param(d, "--rate", "a number of jobs per hour above 0", c->arrival_rate_h);
    if (c->like_rate_h < 0)
        return bad_param(d, "--rate", "a number of jobs per hour above 0", c->like_rate_h);
    /* Drawn durations are written in whole seconds, at least 1: a median below a second
     * would not be the median of the trace. */
    if (!(c->duration_median_s >= 1) || c->duration_median_s > SIM_TIME_LIMIT_S)
        return bad_param(d, "--duration-median",
                         "a duration from 1 s (durations are whole seconds) to 1e10 s",
                         c->duration_median_s);
    if (!(c->duration_sigma >= 0))
        return bad_param(d, "--duration-sigma", "a number at least 0", c->duration_sigma);
    if (!(c->duration_pareto >= 0))
        return bad_param(d, "--duration-pareto", "a shape above 0 (0: lognormal durations)",
                         c->duration_pareto);
    if (!(c->over_request >= 1))
        return bad_param(d, "--over-request", "a number at least 1", c->over_request);
    if (!(c->diurnal_amplitude >= 0 && c->diurnal_amplitude <= 1))
        return bad_param(d, "--diurnal", "a number in [0, 1]", c->diurnal_amplitude);
    if (!(c->frac_gang >= 0 && c->frac_gang <= 1))
        return bad_param(d, "--frac-gang", "a number in [0, 1]", c->frac_gang);
    if (c->gang_max < 2 || c->gang_max > 1024 || (c->gang_max & (c->gang_max - 1)))
        return bad_param(d, "--gang-max", "a power of two from 2 to 1024", c->gang_max);
    if (c->like && (c->like->jobs < 2 || c->like->last_submit_us <= c->like->first_submit_us ||
                    c->like->n_tenants == 0 || !c->like_tenants))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "--like needs a trace of at least 2 jobs spread over time");
    trace_gen *g = sim_calloc(1, sizeof *g);
    if (!g)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    g->c = *c;
    g->n_tenants = c->like ? c->like->n_tenants : c->tenants;
    g->rng = gsl_rng_alloc(gsl_rng_mt19937);
    g->tenant_cdf = sim_calloc(g->n_tenants, sizeof *g->tenant_cdf);
    g->tenant_ids = sim_calloc(g->n_tenants, sizeof *g->tenant_ids);
    if (!g->rng || !g->tenant_cdf || !g->tenant_ids) {
        trace_gen_destroy(g);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    gsl_rng_set(g->rng, c->seed);
    double total = 0;
    for (uint32_t i = 0; i < g->n_tenants; i++) {
        char name[16];
        const char *tn = name;
        if (c->like) {
            total += (double)c->like->tenant_jobs[i];
            tn = i < sim_intern_count(c->like_tenants) ? sim_intern_name(c->like_tenants, i) : "";
        } else {
            total += 1.0 / pow(i + 1.0, 1.2);
            snprintf(name, sizeof name, "t%02u", i);
        }
        g->tenant_cdf[i] = total;
        g->tenant_ids[i] = sim_intern_add(tenants, tn, strlen(tn), 0);
        if (g->tenant_ids[i] == SIM_INTERN_NONE) {
            trace_gen_destroy(g);
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
    }
    for (uint32_t i = 0; i < g->n_tenants; i++)
        g->tenant_cdf[i] /= total;
    if (c->like)
        fit_like(g, c->like);
    else
        for (int h = 0; h < 24; h++)
            g->rate_h[h] = c->arrival_rate_h *
                           (1 + c->diurnal_amplitude *
                                    cos(2 * 3.14159265358979323846 * (h + 0.5 - c->diurnal_peak_h) / 24));
    g->hourly = c->like || c->diurnal_amplitude > 0;
    g->models = models;
    for (int m = 0; m < 6; m++) {
        g->model_ids[m] = sim_intern_add(models, model_names[m], strlen(model_names[m]), 0);
        if (g->model_ids[m] == SIM_INTERN_NONE) {
            trace_gen_destroy(g);
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
    }
    if (c->gpu_types) {
        const char *s = c->gpu_types;
        for (;;) {
            const char *bar = strchr(s, '|');
            size_t len = bar ? (size_t)(bar - s) : strlen(s);
            if (g->n_types == 8) {
                trace_gen_destroy(g);
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                    "at most 8 GPU types for type constraints");
            }
            uint32_t t = gpu_types ? sim_intern_find(gpu_types, s, len) : SIM_INTERN_NONE;
            if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES) {
                trace_gen_destroy(g);
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "unknown GPU type '%.*s'",
                                    (int)len, s);
            }
            g->type_ids[g->n_types++] = UINT64_C(1) << t;
            if (!bar)
                break;
            s = bar + 1;
        }
    }
    *out = g;
    return SIM_OK;
}

void trace_gen_destroy(trace_gen *g)
{
    if (!g)
        return;
    if (g->rng)
        gsl_rng_free(g->rng);
    sim_free(g->tenant_cdf);
    sim_free(g->tenant_ids);
    sim_free(g);
}

int trace_gen_next(trace_gen *g, job_spec *j, sim_diag *d)
{
    if (g->emitted >= g->c.jobs)
        return 0;
    gsl_rng *r = g->rng;
    int st;
    memset(j, 0, sizeof *j);
    j->ref_gpu_type = SIM_GPU_TYPE_NONE;
    if (g->c.group_max >= 2) {
        if (g->group_left == 0) {
            if ((st = arrive(g, d)) != SIM_OK)
                return st;
            g->group_submit_us = (sim_time)llround(g->t_s * 1e6);
            g->group_left = 2 + (uint32_t)gsl_rng_uniform_int(r, g->c.group_max - 1);
            g->group_no++;
        }
        g->group_left--;
        j->submit_us = g->group_submit_us;
        snprintf(j->group, sizeof j->group, "grp-%06llu",
                 (unsigned long long)(g->group_no - 1));
    } else {
        if ((st = arrive(g, d)) != SIM_OK)
            return st;
        j->submit_us = (sim_time)llround(g->t_s * 1e6);
    }
    snprintf(j->id, sizeof j->id, "job-%07llu", (unsigned long long)g->emitted);
    double u = gsl_rng_uniform(r);
    uint32_t tenant = draw_cdf(g->tenant_cdf, g->n_tenants, u);
    j->tenant = g->tenant_ids[tenant];
    uint32_t m = (uint32_t)gsl_rng_uniform_int(r, 6);
    j->model = g->model_ids[m];
    /* Each tenant has a characteristic duration per model, so names predict duration. */
    double tenant_scale = exp(0.5 * sin(1.7 * tenant + 0.9 * m));
    double dur;
    if (g->c.like)
        dur = trace_stats_duration_quantile(g->c.like, gsl_rng_uniform(r));
    else if (g->c.duration_pareto > 0)
        dur = gsl_ran_pareto(r, g->c.duration_pareto,
                             g->c.duration_median_s * tenant_scale /
                                 pow(2, 1 / g->c.duration_pareto));
    else
        dur = g->c.duration_median_s * tenant_scale *
              exp(gsl_ran_gaussian(r, g->c.duration_sigma));
    /* A draw from the tail beyond the readers' limit is written at the limit. */
    if (dur > SIM_TIME_LIMIT_S)
        dur = SIM_TIME_LIMIT_S;
    j->work_s = g->c.like ? dur : round(dur < 1 ? 1 : dur);
    double kind = gsl_rng_uniform(r);
    if (g->c.like) {
        const trace_stats *s = g->c.like;
        j->num_gpus = s->gpu_value[draw_cdf(g->gpu_cdf, s->n_gpu_values, kind)];
        j->gpu_milli = j->num_gpus ? SIM_MILLI_GPU : 0;
        if (j->num_gpus) {
            uint32_t b = draw_cdf(g->milli_cdf, 11, gsl_rng_uniform(r));
            if (b < 10)
                j->gpu_milli = 100 * b + 1 + (uint32_t)gsl_rng_uniform_int(r, b == 9 ? 99 : 100);
        }
    } else if (kind < g->c.frac_cpu_only) {
        j->num_gpus = 0;
        j->gpu_milli = 0;
    } else if (kind < g->c.frac_cpu_only + g->c.frac_multi) {
        static const uint32_t multi[3] = {2, 4, 8};
        j->num_gpus = multi[gsl_rng_uniform_int(r, 3)];
        j->gpu_milli = SIM_MILLI_GPU;
    } else {
        j->num_gpus = 1;
        j->gpu_milli = SIM_MILLI_GPU;
        if (gsl_rng_uniform(r) < g->c.frac_share / (1 - g->c.frac_cpu_only - g->c.frac_multi))
            j->gpu_milli = 100 * (1 + (uint32_t)gsl_rng_uniform_int(r, 9));
    }
    j->true_milli = j->gpu_milli;
    if (j->num_gpus) {
        double over = 1 + gsl_ran_exponential(r, g->c.over_request - 1 + 1e-9);
        uint32_t t = (uint32_t)lround(j->gpu_milli / over);
        j->true_milli = t < 50 ? 50 : t;
        if (j->true_milli > j->gpu_milli)
            j->true_milli = j->gpu_milli;
        if (g->n_types && gsl_rng_uniform(r) < g->c.frac_constrained)
            j->gpu_type_mask = g->type_ids[gsl_rng_uniform_int(r, g->n_types)];
    }
    if (j->group[0]) {
        /* A member of a co-trained group holds one whole GPU. */
        j->num_gpus = 1;
        j->gpu_milli = j->true_milli = SIM_MILLI_GPU;
        j->attr[SIM_ATTR_EPOCHS] = (double)(1 + gsl_rng_uniform_int(r, 5));
        j->attr_present |= UINT64_C(1) << SIM_ATTR_EPOCHS;
    }
    /* Drawn only when asked for, so traces without gangs keep their draws. */
    if (g->c.frac_gang > 0 && j->num_gpus && !j->group[0] && gsl_rng_uniform(r) < g->c.frac_gang) {
        uint32_t powers = 0; /* 2, 4, ..., gang_max */
        while ((2u << powers) <= g->c.gang_max)
            powers++;
        j->replicas = 2u << gsl_rng_uniform_int(r, powers);
        j->num_gpus *= j->replicas;
    }
    j->cpu_milli = 4000 * (j->num_gpus ? j->num_gpus : 1);
    j->mem_mib = 16384 * (j->num_gpus ? j->num_gpus : 1);
    j->qos = gsl_rng_uniform(r) < g->c.frac_ls ? SIM_QOS_LS : SIM_QOS_BE;
    unsigned variant = (unsigned)gsl_rng_uniform_int(r, 4);
    /* The batch size of the command is an execution feature too. */
    j->attr[SIM_ATTR_BATCH_SIZE] = 32u << gsl_rng_uniform_int(r, 4);
    j->attr_present |= UINT64_C(1) << SIM_ATTR_BATCH_SIZE;
    if (g->c.annotate)
        g->c.annotate(g->c.annotate_ctx, j, r);
    /* Name and command are written last, from the model class and batch size the row
     * carries: an annotator may have replaced both (the zoo picks its own class). */
    const char *model = sim_intern_name(g->models, j->model);
    snprintf(g->name, sizeof g->name, "t%02u-%s-%u", tenant, model, variant);
    snprintf(g->command, sizeof g->command, "python train.py --model %s --batch %.0f", model,
             j->attr[SIM_ATTR_BATCH_SIZE]);
    j->name = g->name;
    j->command = g->command;
    g->emitted++;
    return 1;
}
