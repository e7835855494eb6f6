/*
 * pollux.c: the workloads of the Pollux simulator (Qiao et al., OSDI'21;
 * github.com/petuum/adaptdl, simulator/workloads*): name,time,application,num_replicas,
 * batch_size, times in seconds, in submit order.
 *
 * A job's work is the iterations its application needs at its batch size (the
 * validation run's iterations to max_epochs, models/pollux.h) times the iteration
 * time with num_replicas trainers, on the profiles' GPU (T4, the reference type), so a
 * run at the trace's replica count replays the published job length; the scaling hook
 * of the run's rate model rescales the speed at other counts. Jobs are elastic:
 * min_replicas from the option min_replicas (default 1, at most num_replicas),
 * max_replicas = min(batch_size / the smallest profiled local batch, 64) as Pollux's
 * Optimus baseline bounds them (ncf: 1, as Pollux fixes it). Options: profiles=DIR
 * (default: the traces/ folder beside the workload's folder), min_replicas=K.
 */
#include "models/pollux.h"
#include "traces/trace_int.h"

#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_NAME, P_TIME, P_APP, P_REPLICAS, P_BATCH, P_COLS };

static const char *const names[P_COLS] = {"name", "time", "application", "num_replicas",
                                          "batch_size"};
static const bool required[P_COLS] = {true, true, true, true, true};
static const char *const pollux_options[] = {"profiles", "min_replicas", NULL};

typedef struct pollux_state {
    model_pollux *prof;
    uint16_t t4;
    uint32_t min_replicas;
} pollux_state;

static int pollux_open(trace_reader *r, sim_diag *d)
{
    pollux_state *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_diag_set(d, SIM_ENOMEM, r->path, 0, 0, "out of memory");
    r->state = s;
    uint32_t t = sim_intern_find(r->opt.gpu_types, "T4", 2);
    s->t4 = t == SIM_INTERN_NONE || t >= SIM_MAX_GPU_TYPES ? SIM_GPU_TYPE_NONE : (uint16_t)t;
    s->min_replicas = 1;
    const char *mr = trace__opt(r, "min_replicas");
    if (mr) {
        uint64_t v;
        if (!csvin_parse_u64(mr, strlen(mr), &v) || v < 1 || v > MODEL_POLLUX_MAX_REPLICAS)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "--trace-opt min_replicas=%s: expected an integer 1..%u", mr,
                                MODEL_POLLUX_MAX_REPLICAS);
        s->min_replicas = (uint32_t)v;
    }
    char dir[1100];
    const char *prof = trace__opt(r, "profiles");
    if (prof) {
        snprintf(dir, sizeof dir, "%s", prof);
    } else {
        /* <root>/workloads-X/workload-N.csv -> <root>/traces */
        snprintf(dir, sizeof dir, "%s", r->path);
        char *slash = strrchr(dir, '/');
        if (slash)
            snprintf(slash, sizeof dir - (size_t)(slash - dir), "/../traces");
        else
            snprintf(dir, sizeof dir, "../traces");
    }
    int st = model_pollux_load(&s->prof, dir, d);
    if (st == SIM_EIO && !prof)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "the pollux format needs the application profiles: none in %s; "
                            "give --trace-opt profiles=DIR (pollux_adaptdl/traces)",
                            dir);
    if (st != SIM_OK)
        return st;
    return trace__map_header(r, names, required, P_COLS,
                             "name,time,application,num_replicas,batch_size", d);
}

static int pollux_row(trace_reader *r, const csvin_row *row, job_spec *j, sim_diag *d)
{
    pollux_state *s = r->state;
    const csvin *in = r->in;
    const int32_t *c = r->col;
    int st;
    double submit;
    uint64_t n, b;
    r->submit_col = c[P_TIME];
    if ((st = trace__job_id(r, row, c[P_NAME], "name", j, d)) ||
        (st = csvin_double(in, row, c[P_TIME], "time", 0, SIM_TIME_LIMIT_S, &submit, d)) ||
        (st = csvin_u64(in, row, c[P_REPLICAS], "num_replicas", 1, MODEL_POLLUX_MAX_REPLICAS, &n,
                        d)) ||
        (st = csvin_u64(in, row, c[P_BATCH], "batch_size", 1, 1u << 24, &b, d)))
        return st;
    size_t len = row->len[c[P_APP]];
    const char *app = row->f[c[P_APP]];
    int a = model_pollux_app(s->prof, app, len);
    if (a < 0)
        return csvin_field_error(in, row, c[P_APP], "application",
                                 "an application with profiles (bert, cifar10, deepspeech2, "
                                 "imagenet, ncf, yolov3)",
                                 d);
    uint32_t bmin, bmax, lmin;
    model_pollux_batch_range(s->prof, a, &bmin, &bmax, &lmin);
    if (b < bmin || b > bmax) {
        char what[96];
        snprintf(what, sizeof what, "an integer %u..%u (the validated batch sizes of %.*s)", bmin,
                 bmax, (int)len, app);
        return csvin_field_error(in, row, c[P_BATCH], "batch_size", what, d);
    }
    if ((st = trace__intern(r, r->opt.models, row, c[P_APP], &j->model, d)))
        return st;
    double iters = model_pollux_iterations(s->prof, a, (double)b);
    double t = model_pollux_iter_time(s->prof, a, (uint32_t)n, (double)b);
    j->submit_us = (sim_time)llround(submit * 1e6);
    j->work_s = iters * t;
    j->num_gpus = (uint32_t)n;
    j->replicas = (uint32_t)n;
    j->gpu_milli = j->true_milli = SIM_MILLI_GPU;
    j->ref_gpu_type = s->t4;
    j->attr[SIM_ATTR_BATCH_SIZE] = (double)b;
    j->attr[SIM_ATTR_ITERATIONS] = iters;
    uint64_t hi = b / (lmin ? lmin : 1);
    if (hi > MODEL_POLLUX_MAX_REPLICAS)
        hi = MODEL_POLLUX_MAX_REPLICAS;
    if (len == 3 && memcmp(app, "ncf", 3) == 0)
        hi = 1;
    if (hi < n)
        hi = n;
    uint32_t lo = s->min_replicas < n ? s->min_replicas : (uint32_t)n;
    j->attr[SIM_ATTR_MIN_REPLICAS] = lo;
    j->attr[SIM_ATTR_MAX_REPLICAS] = (double)hi;
    j->attr_present |= (UINT64_C(1) << SIM_ATTR_BATCH_SIZE) | (UINT64_C(1) << SIM_ATTR_ITERATIONS) |
                       (UINT64_C(1) << SIM_ATTR_MIN_REPLICAS) |
                       (UINT64_C(1) << SIM_ATTR_MAX_REPLICAS);
    return 1;
}

static void pollux_close(trace_reader *r)
{
    pollux_state *s = r->state;
    if (!s)
        return;
    model_pollux_destroy(s->prof);
    sim_free(s);
    r->state = NULL;
}

const trace_format trace_format_pollux = {
    .name = "pollux",
    .summary = "Pollux simulator workload CSV name,time,application,num_replicas,batch_size "
               "(work from the application profiles)",
    .delim = ',',
    .open = pollux_open,
    .row = pollux_row,
    .close = pollux_close,
    .options = pollux_options,
};
