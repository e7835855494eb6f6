/*
 * runner.c: one simulation run end to end — catalog, cluster, trace (or generator),
 * policy, engine, and the four outputs (jobs.csv, timeseries.csv, summary.json,
 * run.json, plus tenants.csv), each written under a temporary name and renamed only
 * when the run succeeded.
 */
#include "study/fragmentation.h"
#include "policies/registry.h"

#include "study/paths.h"
#include "study/prefetch.h"
#include "study/quotas.h"
#include "models/catalog.h"
#include "models/predictor.h"
#include "models/zoo.h"
#include "models/pollux.h"
#include "models/rate.h"
#include "base/alloc.h"
#include "base/textout.h"
#include "base/csvin.h"
#include "traces/cluster.h"
#include "traces/curves.h"
#include "traces/failures.h"
#include "traces/trace.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void run_args_default(run_args *a)
{
    memset(a, 0, sizeof *a);
    a->policy = "binpack";
    a->seed = 1;
    a->prefetch = true;
    a->frag_probe = true;
    a->sample_interval_s = 600;
    a->stall_limit = 1000000;
    a->zoo_over = 1.5;
    a->zoo_slo = 2;
    a->amdahl = NAN;
}

typedef struct source_ctx {
    trace_reader *reader;
    trace_gen *gen;
    model_zoo_annotator *ann; /* --zoo: annotate jobs that lack features */
    gsl_rng *ann_rng;
    study_frag *online; /* counts each job read into the workload (no first pass) */
    prefetch *ahead;  /* reads the trace on a thread of its own, or NULL */
} source_ctx;

/* The trace or the generator itself (what the prefetcher runs on its thread). */
static int raw_next(void *ctx, job_spec *job, sim_diag *d)
{
    source_ctx *s = ctx;
    return s->reader ? trace_reader_next(s->reader, job, d) : trace_gen_next(s->gen, job, d);
}

static int source_next(void *ctx, job_spec *job, sim_diag *d)
{
    source_ctx *s = ctx;
    int st = s->ahead ? prefetch_next(s->ahead, job, d) : raw_next(s, job, d);
    if (st == 1 && s->ann)
        model_zoo_annotate(s->ann, job, s->ann_rng);
    if (st == 1 && s->online && study_frag_add_job(s->online, job, d) != SIM_OK)
        return SIM_ENOMEM;
    return st;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct progress_ctx {
    double t0;
} progress_ctx;

static void show_progress(void *ctx, const sim_progress *p)
{
    progress_ctx *pc = ctx;
    double el = wall_now() - pc->t0;
    fprintf(stderr, "\r  t=%.0f s  jobs arrived %llu  ended %llu  pending %llu  running %llu  "
                    "%.0f events/s   ",
            (double)p->now / 1e6, (unsigned long long)p->jobs_arrived,
            (unsigned long long)p->jobs_ended, (unsigned long long)p->pending,
            (unsigned long long)p->running, el > 0 ? (double)p->events / el : 0);
}

/* An output write failed (the engine saw a stream in error): name the file and the
 * system's reason instead of the engine's "cannot write jobs.csv". */
static void write_error(study_outfile *const *outs, size_t n, sim_diag *d)
{
    for (size_t i = 0; i < n; i++)
        if (outs[i]->f && ferror(outs[i]->f)) {
            sim_outfile_close(&outs[i]->o, true, 0, d);
            outs[i]->f = NULL;
            return;
        }
}

static int add_failure(void *ctx, uint32_t node, sim_time down_us, sim_time up_us, sim_diag *d)
{
    return sim_engine_add_failure(ctx, node, down_us, up_us, d);
}

/* Notes on quotas that are probably mistakes: tenants of the quota file none of whose
 * jobs arrived (a typo?), a quota file that names no tenant, and the quota policy run
 * without any quota. A horizon that left jobs unread may have cut the tenants' jobs off:
 * the note then says only that none arrived before it. */
static void quota_notes(run_result *res, const run_args *a, const study_quotas *qs,
                        const sim_intern *tenants, const sim_engine *e, const policy_ops *pol)
{
    size_t o = strlen(res->notes), cap = sizeof res->notes;
    bool quota_pol = strcmp(pol->name, "quota") == 0;
    if (!qs->n && a->quotas && o < cap)
        o += (size_t)snprintf(res->notes + o, cap - o,
                              "--quotas %s names no tenant: no tenant "
                              "has a quota%s\n",
                              a->quotas, quota_pol ? ", so every job ran as a borrower" : "");
    else if (!qs->n && quota_pol && o < cap)
        o += (size_t)snprintf(res->notes + o, cap - o,
                              "policy quota without --quotas or --quota-share: no tenant has "
                              "a quota, so every job ran as a borrower\n");
    uint32_t absent = 0;
    char names[256] = "";
    size_t no = 0;
    for (uint32_t i = 0; i < qs->n; i++)
        if (sim_engine_tenant_jobs(e, qs->q[i].tenant) == 0 && absent++ < 5 &&
            no < sizeof names)
            no += (size_t)snprintf(names + no, sizeof names - no, "%s'%s'", no ? ", " : "",
                                   sim_intern_name(tenants, qs->q[i].tenant));
    if (absent && o < cap)
        snprintf(res->notes + o, cap - o,
                 "%u of the %u tenants given a quota %s (%s%s); check "
                 "their names\n",
                 absent, qs->n,
                 res->sum.jobs_not_arrived ? "have no job that arrived before the horizon"
                                           : "never appear in the trace",
                 names, absent > 5 ? ", ..." : "");
}

/* An input's size and checksum for run.json. The trace's is taken on a thread of its
 * own while the run goes on (read again at the end, a large trace would add its time
 * to the run's); the other inputs are small and read when run.json is written. */
typedef struct input_crc {
    const char *path;
    pthread_t th;
    bool started, ok;
    atomic_bool stop; /* a failed run does not wait for the whole file */
    uint32_t crc;
    uint64_t bytes;
} input_crc;

static void *input_crc_main(void *arg)
{
    input_crc *c = arg;
    c->ok = study_file_crc(c->path, &c->crc, &c->bytes, &c->stop);
    return NULL;
}

static void input_crc_start(input_crc *c, const char *path)
{
    c->path = path;
    c->started = pthread_create(&c->th, NULL, input_crc_main, c) == 0;
    if (!c->started)
        input_crc_main(c);
}

/* The result: the thread's, once it is done (also when nothing asks for it). */
static const input_crc *input_crc_finish(input_crc *c)
{
    if (c->started) {
        pthread_join(c->th, NULL);
        c->started = false;
    }
    return c;
}

static void write_input(FILE *f, const char *role, const char *path, const input_crc *pre,
                        bool *first)
{
    uint32_t crc = 0;
    uint64_t bytes = 0;
    bool ok = pre ? pre->ok : study_file_crc(path, &crc, &bytes, NULL);
    if (pre) {
        crc = pre->crc;
        bytes = pre->bytes;
    }
    fprintf(f, "%s\n    {\"role\": \"%s\", \"path\": ", *first ? "" : ",", role);
    sim_json_put_string(f, path);
    if (ok)
        fprintf(f, ", \"bytes\": %llu, \"crc32\": \"%08x\"}", (unsigned long long)bytes, crc);
    else
        fputs("}", f);
    *first = false;
}

/* One file the run reads: its role in run.json, its path, what it is and how the user
 * named it (for messages). */
typedef void (*input_fn)(void *ctx, const char *role, const char *path, const char *noun,
                         const char *what);

/* How a given option named an input ("--trace t.csv"), or where the shipped one is. */
static const char *named(char *buf, size_t size, const char *opt, const char *given,
                         const char *path)
{
    if (given)
        snprintf(buf, size, "%s %s", opt, given);
    else
        snprintf(buf, size, "the shipped %s", path ? path : "file");
    return buf;
}

/* Every file the run reads, in run.json's order: the trace, the cluster file, the
 * catalog, failures, demand curves, the GPU model tables, the files the policy's
 * options name (given, or the shipped default of a model option; not those it writes,
 * policy_ops.output_options), quotas. */
static void each_input(const run_args *a, input_fn fn, void *ctx)
{
    char what[1300], path[1200];
    if (a->trace)
        fn(ctx, "trace", a->trace, "the trace",
           named(what, sizeof what, "--trace", a->trace, NULL));
    if (a->cluster && access(a->cluster, R_OK) == 0)
        fn(ctx, "cluster", a->cluster, "the cluster file",
           named(what, sizeof what, "--cluster", a->cluster, NULL));
    const char *cat = a->catalog ? a->catalog : model_catalog_default_path();
    fn(ctx, "catalog", cat, "the GPU catalog",
       named(what, sizeof what, "--catalog", a->catalog, cat));
    if (a->failures)
        fn(ctx, "failures", a->failures, "the failures file",
           named(what, sizeof what, "--failures", a->failures, NULL));
    if (a->demand)
        fn(ctx, "demand", a->demand, "the demand curves",
           named(what, sizeof what, "--demand", a->demand, NULL));
    if (a->interference && access(a->interference, R_OK) == 0)
        fn(ctx, "interference", a->interference, "the interference table",
           named(what, sizeof what, "--interference", a->interference, NULL));
    /* The model tables the rate model read. */
    const char *tp = a->throughput;
    if (!tp || strcmp(tp, "measured") == 0) {
        static const char *const tables[] = {"gavel_steps.csv", "pollux_steps.csv"};
        for (size_t k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "%s/models/data/%s", model_data_dir(), tables[k]);
            fn(ctx, "throughput", path, "a throughput table",
               named(what, sizeof what, NULL, NULL, path));
        }
    } else if (strcmp(tp, "none") != 0) {
        for (const char *p = tp; *p;) {
            size_t len = strcspn(p, ",");
            snprintf(path, sizeof path, "%.*s", (int)len, p);
            fn(ctx, "throughput", path, "a throughput table",
               named(what, sizeof what, "--throughput", tp, NULL));
            p += len + (p[len] == ',');
        }
    }
    if (a->interference && (!strcmp(a->interference, "measured") ||
                            !strcmp(a->interference, "model"))) {
        snprintf(path, sizeof path, "%s/models/data/gavel_pairs.csv", model_data_dir());
        fn(ctx, "interference", path, "the interference table",
           named(what, sizeof what, NULL, NULL, path));
    }
    /* Files a policy option names (given, or the shipped default of a model option). */
    const policy_ops *pol = policy_find(a->policy);
    for (const policy_option *o = pol ? pol->options : NULL; o && o->name; o++) {
        if (policy_option_writes(pol, o->name, strlen(o->name)))
            continue;
        const char *v = policy_config_get(&a->pcfg, pol->options, o->name);
        bool given = v && *v;
        model_kind k;
        char kind[32];
        size_t klen = strlen(o->name);
        if (!given && klen > 6 && klen < sizeof kind && strcmp(o->name + klen - 6, "_model") == 0) {
            snprintf(kind, sizeof kind, "%.*s", (int)(klen - 6), o->name);
            if (model_kind_parse(kind, &k))
                v = model_kind_default_path(k);
        }
        if (v && *v && access(v, R_OK) == 0) {
            char role[80], noun[120];
            snprintf(role, sizeof role, "policy %s", o->name);
            snprintf(noun, sizeof noun, "the file of policy option '%s'", o->name);
            if (given)
                snprintf(what, sizeof what, "--policy-opt %s=%s", o->name, v);
            else
                named(what, sizeof what, NULL, NULL, v);
            fn(ctx, role, v, noun, what);
        }
    }
    if (a->quotas)
        fn(ctx, "quotas", a->quotas, "the quotas file",
           named(what, sizeof what, "--quotas", a->quotas, NULL));
    if (a->quota_share) {
        /* FILE:COLUMN names the file without its column. */
        snprintf(path, sizeof path, "%s", a->quota_share);
        char *colon = strrchr(path, ':');
        if (colon && access(path, F_OK) != 0)
            *colon = '\0';
        fn(ctx, "quota_share", path, "the quota-share file",
           named(what, sizeof what, "--quota-share", a->quota_share, NULL));
    }
}

/* run.json's inputs, each with its size and checksum. */
typedef struct run_json_inputs {
    FILE *f;
    bool first;
    input_crc *trace_crc; /* the trace's, taken during the run */
} run_json_inputs;

static void put_input(void *ctx, const char *role, const char *path, const char *noun,
                      const char *what)
{
    (void)noun;
    (void)what;
    run_json_inputs *ri = ctx;
    bool trace = strcmp(role, "trace") == 0;
    write_input(ri->f, role, path, trace ? input_crc_finish(ri->trace_crc) : NULL, &ri->first);
}

static void write_run_json(FILE *f, const run_args *a, const run_result *r, input_crc *trace_crc)
{
    fputs("{\n  \"command\": [", f);
    for (int i = 0; i < a->argc; i++) {
        if (i)
            fputs(", ", f);
        sim_json_put_string(f, a->argv[i]);
    }
    fprintf(f, "],\n  \"version\": \"%s\",\n  \"seed\": %llu,\n  \"policy\": ", STUDY_VERSION,
            (unsigned long long)a->seed);
    sim_json_put_string(f, a->policy);
    fputs(",\n  \"policy_options\": {", f);
    for (uint32_t i = 0; i < a->pcfg.n; i++) {
        fputs(i ? ", " : "", f);
        sim_json_put_string(f, a->pcfg.key[i]);
        fputs(": ", f);
        sim_json_put_string(f, a->pcfg.value[i]);
    }
    fputs("},\n  \"format\": ", f);
    sim_json_put_string(f, a->format ? a->format : (a->trace ? "native" : "generated"));
    fputs(",\n  \"trace_options\": [", f);
    for (uint32_t i = 0; i < a->n_trace_opts; i++) {
        fputs(i ? ", " : "", f);
        sim_json_put_string(f, a->trace_opts[i]);
    }
    fputs("],\n  \"inputs\": [", f);
    run_json_inputs ri = {.f = f, .first = true, .trace_crc = trace_crc};
    each_input(a, put_input, &ri);
    fputs("\n  ],\n  \"cluster\": ", f);
    sim_json_put_string(f, a->cluster ? a->cluster : "");
    /* The report reads tenants.csv by it: in "changed" mode a missing row means the
     * tenant's figures did not change, in "all" mode that the tenant was idle. */
    fprintf(f, ",\n  \"tenant_rows\": \"%s\"", a->tenant_rows_changed ? "changed" : "all");
    if (a->gen)
        fprintf(f, ",\n  \"generator\": {\"jobs\": %llu, \"seed\": %llu}",
                (unsigned long long)a->gen->jobs, (unsigned long long)a->gen->seed);
    double eps = r->wall_s > 0 ? (double)r->sum.events / r->wall_s : 0;
    fprintf(f, ",\n  \"wall_s\": %.3f,\n  \"events\": %llu,\n  \"events_per_s\": %.0f,\n"
               "  \"jobs_per_s\": %.0f\n}\n",
            r->wall_s, (unsigned long long)r->sum.events, eps,
            r->wall_s > 0 ? (double)r->sum.jobs_arrived / r->wall_s : 0);
}

static void paths_input(void *ctx, const char *role, const char *path, const char *noun,
                        const char *what)
{
    (void)role;
    study_paths_input(ctx, noun, what, path); /* out of memory: study_paths_check says so */
}

/* Refuse, before anything is written, an output that is one of the run's inputs or
 * another of its outputs: the five files under --out and the files the policy's output
 * options name (written by rename, each would replace what is at its path). */
static int check_paths(const run_args *a, const policy_ops *pol, sim_diag *d)
{
    study_paths *p = study_paths_create();
    if (!p)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    char what[1300], path[1100];
    each_input(a, paths_input, p);
    /* Files the trace format's options name (a task table, a steps table). */
    for (uint32_t i = 0; i < a->n_trace_opts; i++) {
        const char *eq = strchr(a->trace_opts[i], '=');
        if (!eq)
            continue;
        snprintf(what, sizeof what, "--trace-opt %s", a->trace_opts[i]);
        char noun[120];
        snprintf(noun, sizeof noun, "the file of trace option '%.*s'", (int)(eq - a->trace_opts[i]),
                 a->trace_opts[i]);
        study_paths_input(p, noun, what, eq + 1);
    }
    static const char *const run_outputs[] = {"jobs.csv", "timeseries.csv", "tenants.csv",
                                              "summary.json", "run.json"};
    snprintf(what, sizeof what, "--out %s", a->out_dir ? a->out_dir : "");
    for (size_t k = 0; a->out_dir && k < sizeof run_outputs / sizeof *run_outputs; k++) {
        size_t len = strlen(a->out_dir);
        snprintf(path, sizeof path, "%s%s%s", a->out_dir,
                 len && a->out_dir[len - 1] == '/' ? "" : "/", run_outputs[k]);
        study_paths_output(p, what, path);
    }
    for (const char *const *o = pol->output_options; o && *o; o++) {
        const char *v = policy_config_get(&a->pcfg, pol->options, *o);
        snprintf(what, sizeof what, "--policy-opt %s=%s", *o, v ? v : "");
        study_paths_output(p, what, v);
    }
    int st = study_paths_check(p, d);
    study_paths_destroy(p);
    return st;
}

/* The scaling curve of elastic jobs: with the pollux format (its profiles) or --amdahl,
 * the run's rate model is wrapped with a scaling hook; otherwise nothing changes. */
static int scaling_setup(const run_args *a, const sim_intern *models, model_pollux **pollux,
                         model_scaling **scaling, sim_rate_model *tab, sim_world *world,
                         sim_diag *d)
{
    bool is_pollux = a->format && strcmp(a->format, "pollux") == 0 && a->trace;
    if (!is_pollux && isnan(a->amdahl) && !a->pollux_profiles)
        return SIM_OK;
    if (is_pollux || a->pollux_profiles) {
        char dir[1100];
        const char *prof = a->pollux_profiles;
        for (uint32_t i = 0; i < a->n_trace_opts; i++)
            if (strncmp(a->trace_opts[i], "profiles=", 9) == 0)
                prof = a->trace_opts[i] + 9;
        if (prof) {
            snprintf(dir, sizeof dir, "%s", prof);
        } else {
            snprintf(dir, sizeof dir, "%s", a->trace);
            char *slash = strrchr(dir, '/');
            if (slash)
                snprintf(slash, sizeof dir - (size_t)(slash - dir), "/../traces");
            else
                snprintf(dir, sizeof dir, "../traces");
        }
        int st = model_pollux_load(pollux, dir, d);
        if (st != SIM_OK)
            return st;
    }
    *scaling = sim_malloc(sizeof **scaling);
    if (!*scaling)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    model_scaling_init(*scaling, *pollux, models, isnan(a->amdahl) ? 0.95 : a->amdahl, world->rate,
                       tab);
    world->rate = tab;
    return SIM_OK;
}

int study_run(const run_args *a, run_result *res, sim_diag *d)
{
    memset(res, 0, sizeof *res);
    double t0 = wall_now();
    model_catalog *cat = NULL;
    cluster_spec *cl = NULL;
    sim_intern *tenants = NULL, *models = NULL;
    source_ctx src = {0};
    sim_engine *e = NULL;
    study_outfile jobs = {0}, ts = {0}, tn = {0}, sum = {0}, runj = {0};
    uint64_t *type_mem = NULL;
    model_zoo *zoo = NULL;
    model_zoo_annotator ann;
    model_zoo_rate zrate;
    sim_rate_model zoo_rate_model;
    model_rate *rate = NULL;
    sim_rate_model rate_tab;
    model_pollux *pollux = NULL;
    model_scaling *scaling = NULL;
    sim_curves curves = {0};
    sim_rate_model scaling_tab;
    study_frag frag = {0}, pfrag = {0}; /* the policy's workload, the probe's own */
    study_quotas quotas = {0};
    tenant_probe tprobe;
    char *extra = NULL;
    int st;
    input_crc trace_crc = {0};
    study_tenant_probe_init(&tprobe);

    const policy_ops *pol = policy_find(a->policy);
    if (!pol) {
        char known[512];
        policy_known_names(known, sizeof known);
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "unknown policy '%s' (known: %s)",
                            a->policy, known);
    }
    if ((st = check_paths(a, pol, d)) != SIM_OK)
        goto out;
    if ((st = model_catalog_load(&cat, a->catalog ? a->catalog : model_catalog_default_path(),
                                 d)) != SIM_OK)
        goto out;
    uint32_t ntypes = model_catalog_count(cat);
    type_mem = sim_calloc(ntypes, sizeof *type_mem);
    if (!type_mem) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (uint16_t t = 1; t < ntypes; t++)
        type_mem[t] = model_catalog_type(cat, t)->memory_mib;
    if (!a->cluster) {
        st = sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "no cluster given (--cluster FILE or SPEC)");
        goto out;
    }
    char cl_ignored[512];
    if ((st = cluster_spec_load_ignoring(&cl, a->cluster, model_catalog_names(cat),
                                         a->cluster_gpu_type, cl_ignored, sizeof cl_ignored, d)) !=
        SIM_OK)
        goto out;
    if (*cl_ignored)
        fprintf(stderr,
                "clustersim: warning: %s: ignoring column(s) the cluster format does not "
                "use: %s\n",
                a->cluster, cl_ignored);
    tenants = sim_intern_create(false);
    models = sim_intern_create(false);
    if (!tenants || !models) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    /* Quota files name tenants before the trace does: their ids come first. */
    if (a->quotas && (st = study_quotas_read(&quotas, a->quotas, tenants, d)) != SIM_OK)
        goto out;
    if (a->quota_share && (st = study_quota_share_read(&quotas, a->quota_share, tenants,
                                                       cluster_spec_gpus(cl), d)) != SIM_OK)
        goto out;
    if (a->zoo && (a->throughput || a->interference)) {
        st = sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                          "--zoo takes the speed and demand of each job from the model zoo; it "
                          "cannot be combined with --throughput or --interference");
        goto out;
    }
    if (a->zoo) {
        const char *ref = a->zoo_ref ? a->zoo_ref : "V100M16";
        uint32_t rt = sim_intern_find(model_catalog_names(cat), ref, strlen(ref));
        if (rt == SIM_INTERN_NONE || rt == 0) {
            st = sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--zoo-ref: unknown GPU type '%s'", ref);
            goto out;
        }
        if ((st = model_zoo_create(&zoo, cat, d)) != SIM_OK)
            goto out;
        src.ann_rng = gsl_rng_alloc(gsl_rng_mt19937);
        if (!src.ann_rng) {
            st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto out;
        }
        gsl_rng_set(src.ann_rng, a->seed);
        ann = (model_zoo_annotator){.zoo = zoo,
                                    .models = models,
                                    .ref_type = (uint16_t)rt,
                                    .draw_over = true,
                                    .over_request = a->zoo_over,
                                    .slo_factor = a->zoo_slo};
        src.ann = &ann;
        model_zoo_rate_init(&zrate, zoo, models, (uint16_t)rt, &zoo_rate_model);
    }
    /* The target workloads. The probe's is the jobs read so far (each job read is
     * counted) unless the caller asked for the trace's; a policy that needs one (fgd)
     * gets the trace's, by a first pass over it, unless the caller asked for the jobs
     * read so far. Where the trace can be read only once (standard input, a pipe), or
     * nothing runs (--check), both are the jobs read so far. Two different ones are
     * two workloads; the same one is shared. */
    bool stream = a->trace && trace_path_is_stream(a->trace);
    bool pol_online = a->frag_arrivals || a->check_only || stream;
    bool probe_online = pol_online || !a->frag_trace;
    study_frag *pol_f = NULL, *probe_f = NULL;
    if (pol->needs_workload) {
        if ((st = study_frag_init(&frag, cl, type_mem, ntypes, d)) != SIM_OK)
            goto out;
        pol_f = &frag;
    }
    if (a->frag_probe && pol_f && probe_online == pol_online) {
        probe_f = pol_f;
    } else if (a->frag_probe) {
        if ((st = study_frag_init(&pfrag, cl, type_mem, ntypes, d)) != SIM_OK)
            goto out;
        probe_f = &pfrag;
    }
    src.online = pol_f && pol_online ? pol_f : probe_f && probe_online ? probe_f : NULL;
    study_frag *scanned = pol_f && !pol_online ? pol_f : probe_f && !probe_online ? probe_f : NULL;
    if (scanned && (a->trace || a->gen) &&
        (st = study_frag_scan(scanned, a, tenants, models, model_catalog_names(cat), d)) !=
            SIM_OK)
        goto out;
    if (scanned && a->trace)
        res->trace_passes = 1;
    if (a->trace) {
        trace_options topt = {.format = a->format,
                              .skip_bad_rows = a->skip_bad_rows,
                              .tenants = tenants,
                              .models = models,
                              .gpu_types = model_catalog_names(cat),
                              .opts = a->trace_opts,
                              .n_opts = a->n_trace_opts,
                              .data_dir = model_data_dir()};
        if ((st = trace_reader_open(&src.reader, a->trace, &topt, d)) != SIM_OK)
            goto out;
        const char *ign = trace_reader_ignored_columns(src.reader);
        if (*ign)
            fprintf(stderr, "clustersim: warning: %s: ignoring column(s) the %s format does not "
                            "use: %s\n", a->trace, a->format ? a->format : "native", ign);
    } else if (a->gen) {
        if ((st = trace_gen_create(&src.gen, a->gen, tenants, models, model_catalog_names(cat),
                                   d)) != SIM_OK)
            goto out;
    } else {
        st = sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "no trace given (--trace FILE)");
        goto out;
    }
    if (a->out_dir && a->check_only && !study_mkdirs(a->out_dir)) {
        st = SIM_EIO; /* the reason is printed already */
        *d = (sim_diag){0};
        goto out;
    }
    if (a->out_dir && !a->check_only) {
        if (!study_mkdirs(a->out_dir) || !study_out_open(&jobs, a->out_dir, "jobs.csv") ||
            !study_out_open(&ts, a->out_dir, "timeseries.csv") ||
            !study_out_open(&tn, a->out_dir, "tenants.csv") ||
            !study_out_open(&sum, a->out_dir, "summary.json") ||
            !study_out_open(&runj, a->out_dir, "run.json")) {
            st = SIM_EIO; /* the reason is printed already */
            *d = (sim_diag){0};
            goto out;
        }
    }
    if (runj.f && a->trace)
        input_crc_start(&trace_crc, a->trace);
    study_outfile *outs[] = {&jobs, &ts, &tn, &sum, &runj};
    progress_ctx pctx = {.t0 = t0};
    sim_probe probes[2];
    sim_config cfg = {
        .seed = a->seed,
        .sample_interval_us = (sim_time)llround(a->sample_interval_s * 1e6),
        .horizon_us = a->horizon_s > 0 ? (sim_time)llround(a->horizon_s * 1e6) : SIM_TIME_NEVER,
        .checkpoint_interval_s = a->checkpoint_s,
        .restart_penalty_s = a->restart_penalty_s,
        .stall_limit = a->stall_limit,
        .mtbf_s = a->mtbf_s,
        .mttr_s = a->mttr_s,
        .jobs_csv = jobs.f,
        .timeseries_csv = ts.f,
        .tenants_csv = tn.f,
        .tenant_rows_changed = a->tenant_rows_changed,
        .probes = probes,
        .n_probes = 0,
        .progress = a->progress ? show_progress : NULL,
        .check_invariants = a->check_invariants,
        .elastic_outputs = pol->elastic_outputs,
        .progress_ctx = &pctx,
        .job_groups =
            src.reader ? trace_reader_has_groups(src.reader) : a->gen && a->gen->group_max >= 2,
    };
    if (probe_f)
        probes[cfg.n_probes++] = probe_f->probe;
    if (quotas.n)
        probes[cfg.n_probes++] = tprobe.probe;
    sim_world world = {
        .cluster = cl,
        .gpu_types = model_catalog_names(cat),
        .gpu_type_mem_mib = type_mem,
        .tenants = tenants,
        .rate = zoo ? &zoo_rate_model : NULL,
        .trace_path = a->trace,
    };
    /* With --zoo the zoo is the simulator's truth; the GPU models stay off. */
    if (!zoo && (st = study_rate_setup(a, cat, models, &rate, d)) != SIM_OK)
        goto out;
    if (rate) {
        model_rate_fill(rate, &rate_tab);
        world.rate = &rate_tab;
    }
    if ((st = scaling_setup(a, models, &pollux, &scaling, &scaling_tab, &world, d)) != SIM_OK)
        goto out;
    if (a->demand) {
        if ((st = trace_curves_load(&curves, a->demand, d)) != SIM_OK)
            goto out;
        world.curves = &curves;
    }
    policy_config pcfg = a->pcfg;
    pcfg.workload = pol_f ? pol_f->wl : NULL;
    pcfg.models = models;
    if ((st = sim_engine_create(&e, &cfg, &world, pol, &pcfg, d)) != SIM_OK)
        goto out;
    if (a->failures && (st = trace_failures_load(a->failures, cl, add_failure, e, d)) != SIM_OK)
        goto out;
    for (uint32_t i = 0; i < quotas.n; i++)
        if ((st = sim_engine_set_quota(e, quotas.q[i].tenant, quotas.q[i].gpus)) != SIM_OK) {
            sim_diag_set(d, st, NULL, 0, 0, "out of memory");
            goto out;
        }
    if (a->check_only)
        goto out; /* every input is open and the policy is set up */
    /* Read ahead on a second thread, except from a stream (a reader blocked on a pipe
     * could not be stopped). The name tables are shared with the engine. */
    if (a->prefetch && !stream) {
        sim_source raw = {.ctx = &src, .next = raw_next};
        if (sim_intern_share(tenants) != SIM_OK || sim_intern_share(models) != SIM_OK ||
            (st = prefetch_create(&src.ahead, &raw, 4096, d)) != SIM_OK) {
            st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            goto out;
        }
    }
    sim_source source = {.ctx = &src, .next = source_next};
    st = sim_engine_run(e, &source, d);
    if (a->progress)
        fputs("\r\033[K", stderr);
    if (st == SIM_EIO)
        write_error(outs, sizeof outs / sizeof outs[0], d);
    if (st != SIM_OK)
        goto out;
    res->sum = *sim_engine_summary(e);
    quota_notes(res, a, &quotas, tenants, e, pol);
    res->rows_skipped = src.reader ? trace_reader_skipped(src.reader) : 0;
    res->rows_ignored = src.reader ? trace_reader_ignored(src.reader) : 0;
    res->wall_s = wall_now() - t0;
    if (tprobe.oom) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory (quota metrics)");
        goto out;
    }
    /* summary.json's extra members: rows skipped, and the quota metrics of runs with
     * quotas: per tenant its name, each byte escaped in at most 6 (\u00XX), and at most
     * 320 bytes of figures. */
    size_t extra_size = 256;
    for (uint32_t t = 0; quotas.n && t < sim_intern_count(tenants); t++)
        extra_size += 320 + 6 * strlen(sim_intern_name(tenants, t));
    extra = sim_malloc(extra_size);
    if (!extra) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    FILE *xf = fmemopen(extra, extra_size, "w");
    if (!xf) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    fprintf(xf, "\"rows_skipped\": %llu", (unsigned long long)res->rows_skipped);
    if (res->sum.stalled)
        fprintf(xf, ",\n  \"stalled_at_s\": %.6f", (double)res->sum.stalled_at_us / 1e6);
    if (res->sum.clock_ended)
        fprintf(xf, ",\n  \"clock_ended_at_s\": %.6f", SIM_CLOCK_END_S);
    if (quotas.n) {
        fputs(",\n  ", xf);
        study_tenant_probe_json(&tprobe, sim_engine_view(e), xf);
    }
    bool xok = fputc('\0', xf) != EOF && !ferror(xf);
    xok = fclose(xf) == 0 && xok && memchr(extra, '\0', extra_size) != NULL;
    if (!xok) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "summary.json: the quota metrics do not fit");
        goto out;
    }
    if (sum.f && sim_engine_write_summary(e, sum.f, extra) != SIM_OK) {
        st = SIM_EIO;
        write_error(outs, sizeof outs / sizeof outs[0], d);
        goto out;
    }
    {
        /* Keep a copy of the summary for callers that print it. */
        FILE *mem = fmemopen(res->summary_json, sizeof res->summary_json - 1, "w");
        if (mem) {
            sim_engine_write_summary(e, mem, extra);
            fclose(mem);
        }
    }
    if (runj.f)
        write_run_json(runj.f, a, res, &trace_crc);
out:;
    if (st != SIM_OK)
        atomic_store(&trace_crc.stop, true);
    input_crc_finish(&trace_crc);
    bool commit = st == SIM_OK;
    /* Close every file, even after one fails. */
    bool ok = study_out_close(&jobs, commit);
    ok = study_out_close(&ts, commit) && ok;
    ok = study_out_close(&tn, commit) && ok;
    /* summary.json last: a directory holding it holds every other output (sweeps rely
     * on that to tell a finished run from an interrupted one). */
    ok = study_out_close(&runj, commit) && ok;
    ok = study_out_close(&sum, commit && ok) && ok;
    if (commit && !ok) {
        st = SIM_EIO; /* the reason is printed already */
        *d = (sim_diag){0};
    }
    sim_engine_destroy(e);
    study_frag_fini(&frag);
    study_frag_fini(&pfrag);
    /* The reader thread stops before what it reads from is closed. */
    prefetch_destroy(src.ahead);
    trace_reader_close(src.reader);
    trace_gen_destroy(src.gen);
    if (src.ann_rng)
        gsl_rng_free(src.ann_rng);
    model_zoo_destroy(zoo);
    sim_intern_destroy(tenants);
    sim_intern_destroy(models);
    study_quotas_free(&quotas);
    study_tenant_probe_fini(&tprobe);
    sim_free(extra);
    cluster_spec_destroy(cl);
    model_rate_destroy(rate);
    model_pollux_destroy(pollux);
    trace_curves_free(&curves);
    sim_free(scaling);
    sim_free(type_mem);
    model_catalog_destroy(cat);
    return st;
}
