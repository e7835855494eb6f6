/*
 * pack.c: the study behind `clustersim pack` — the fragmentation study of Weng et al., "Beware of
 * Fragmentation", USENIX ATC 2023, §6. The trace's tasks are resampled (uniformly, with
 * replacement) until their GPU request reaches a share of the cluster's GPU capacity,
 * shuffled, and replayed as arrivals only: nothing departs, and a task that does not fit
 * when it arrives never will (free resources only shrink), so it counts as failed.
 *
 * The engine replays them unchanged, with the same policy_ops code as `run`: a task
 * arrives at a time equal to the cumulative GPU request up to and including it (100 us
 * per milli-GPU), so sampling every 1 % of the capacity gives one row per 1 % of
 * arrived demand, and the horizon stops the run at the requested demand. Each seed
 * fixes the resampling, the order and the policy's RNG; every policy sees the same
 * tasks in the same order for a seed. Results: mean and sample standard deviation over
 * the seeds, per policy and 1 % step, in pack.csv, and a figure drawn by gnuplot.
 */
/* MAP_ANONYMOUS (shared memory for the worker processes) is not in POSIX 2008. */
#define _DEFAULT_SOURCE 1

#include "study/pack.h"
#include "policies/registry.h"

#include "study/fragmentation.h"
#include "study/proc.h"

#include "models/catalog.h"
#include "base/alloc.h"
#include "base/csvin.h"
#include "base/outfile.h"
#include "traces/cluster.h"
#include "traces/trace.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PACK_WORK_S 1e9       /* work of every task: nothing finishes within the study */
#define PACK_US_PER_MILLI 100 /* arrival time per milli-GPU of cumulative request */
#define PACK_METRICS 4        /* alloc %, fragmentation GPUs, fragmentation %, failed tasks */

/* One task of the trace, as much as the study needs. */
typedef struct pack_task {
    uint64_t cpu_milli, mem_mib, gpu_mem_mib, type_mask;
    uint32_t num_gpus, gpu_milli, replicas;
    uint64_t demand_milli; /* num_gpus x gpu_milli */
} pack_task;

/* The arrivals of one seed, as an engine source. */
typedef struct pack_source {
    const pack_task *tasks;
    const uint32_t *order; /* task of each arrival */
    const sim_time *at;    /* time of each arrival (cumulative request x 100 us) */
    uint32_t n, next;
} pack_source;

static int pack_next(void *ctx, job_spec *j, sim_diag *d)
{
    (void)d;
    pack_source *s = ctx;
    if (s->next >= s->n)
        return 0;
    uint32_t k = s->next++;
    const pack_task *t = &s->tasks[s->order[k]];
    memset(j, 0, sizeof *j);
    snprintf(j->id, sizeof j->id, "a%u", k);
    j->submit_us = s->at[k];
    j->work_s = PACK_WORK_S;
    j->num_gpus = t->num_gpus;
    j->replicas = t->replicas;
    j->gpu_milli = t->gpu_milli;
    j->true_milli = t->gpu_milli;
    j->gpu_mem_mib = t->gpu_mem_mib;
    j->cpu_milli = t->cpu_milli;
    j->mem_mib = t->mem_mib;
    j->gpu_type_mask = t->type_mask;
    j->name = "";
    j->command = "";
    j->line = k + 1;
    return 1;
}

/* The probe of one run: one row of metrics per 1 % step. */
typedef struct pack_probe {
    study_frag *frag;
    const sim_time *at;
    uint32_t n, cursor; /* arrivals, and how many arrived by the last sample */
    sim_time step_us;   /* 1 % of the capacity */
    uint32_t steps;     /* rows: 0..demand % */
    double cap_milli;   /* GPU capacity, milli-GPU */
    double *row;        /* steps x PACK_METRICS */
    uint8_t *seen;      /* step sampled */
} pack_probe;

static const char *const probe_names[PACK_METRICS] = {"alloc_pct", "frag_gpus", "frag_pct",
                                                      "failed"};

static void pack_measure(pack_probe *p, const sim_view *v, double *out)
{
    while (p->cursor < p->n && p->at[p->cursor] <= v->now)
        p->cursor++;
    uint64_t used = 0;
    for (uint32_t n = 0; n < v->n_nodes; n++)
        used += v->node_used_milli[n];
    double frag, idle;
    frag_meter_measure(p->frag->meter, v, &frag, &idle);
    out[0] = 100.0 * (double)used / p->cap_milli;
    out[1] = frag;
    out[2] = idle > 0 ? 100.0 * frag / idle : 0;
    out[3] = (double)(p->cursor - v->n_running);
}

static void pack_sample(void *ctx, const sim_view *v, double *out)
{
    pack_probe *p = ctx;
    pack_measure(p, v, out);
    if (v->now < 0 || v->now % p->step_us)
        return;
    uint64_t k = (uint64_t)(v->now / p->step_us);
    if (k >= p->steps)
        return;
    memcpy(p->row + k * PACK_METRICS, out, sizeof(double) * PACK_METRICS);
    p->seen[k] = 1;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Quote s as a gnuplot single-quoted string (a quote is doubled). */
static void gp_quote(char *buf, size_t size, const char *s)
{
    size_t o = 0;
    if (o + 1 < size)
        buf[o++] = '\'';
    for (; *s && o + 3 < size; s++) {
        if (*s == '\'')
            buf[o++] = '\'';
        buf[o++] = *s;
    }
    if (o + 1 < size)
        buf[o++] = '\'';
    buf[o] = '\0';
}

/* Draw DIR/pack.png with plots/pack.gp. gnuplot writes a scratch file beside it, which
 * is then copied into place as every output is (a symlink keeps its link, a FIFO or
 * device is written through, a directory refused). Returns true when the figure was
 * written; prints why not otherwise (pack.csv is written either way). */
static bool draw_figure(const char *dir, const char *title, const char *const *names,
                        uint32_t n_pol, uint32_t demand)
{
    char script[1100], csv[1100], png[1100], scratch[1200];
    snprintf(script, sizeof script, "%s/plots/pack.gp", model_data_dir());
    snprintf(csv, sizeof csv, "%s/pack.csv", dir);
    snprintf(png, sizeof png, "%s/pack.png", dir);
    snprintf(scratch, sizeof scratch, "%s/.pack.%ld.png", dir, (long)getpid());
    struct stat sb;
    if (stat(script, &sb) != 0) {
        fprintf(stderr,
                "clustersim: note: %s is missing, so no figure was drawn (set "
                "CLUSTERSIM_DATA to the clustersim source folder)\n",
                script);
        return false;
    }
    /* gnuplot reads pack.csv back: not from a FIFO or device it was written through. */
    if (stat(csv, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fprintf(stderr,
                "clustersim: note: %s is not a regular file, so no figure was drawn "
                "from it\n",
                csv);
        return false;
    }
    char pols[1024] = "", q_csv[2300], q_png[2300], q_title[600], q_pols[2100];
    size_t o = 0;
    for (uint32_t p = 0; p < n_pol && o + 64 < sizeof pols; p++)
        o += (size_t)snprintf(pols + o, sizeof pols - o, "%s%s", p ? " " : "", names[p]);
    gp_quote(q_csv, sizeof q_csv, csv);
    gp_quote(q_png, sizeof q_png, scratch);
    gp_quote(q_title, sizeof q_title, title);
    gp_quote(q_pols, sizeof q_pols, pols);
    char expr[8192];
    snprintf(expr, sizeof expr, "datafile=%s; outfile=%s; figtitle=%s; policies=%s; demand=%u",
             q_csv, q_png, q_title, q_pols, demand);
    fflush(NULL);
    sim_outfile_track(scratch);
    /* An interrupt reaches gnuplot too; once it has ended the scratch file is removed and
     * the process ends by the signal. */
    study_forward_begin();
    pid_t pid = (pid_t)study_fork();
    if (pid < 0) {
        fprintf(stderr, "clustersim: note: cannot start gnuplot (%s); pack.csv is written\n",
                strerror(errno));
        study_forward_end();
        sim_outfile_untrack(scratch);
        return false;
    }
    if (pid == 0) {
        char *const argv[] = {"gnuplot", "-e", expr, script, NULL};
        execvp("gnuplot", argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    study_forget_child(pid);
    study_forward_end();
    bool ok = false;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        fprintf(stderr,
                "clustersim: note: gnuplot was not found, so %s/pack.png was not drawn; "
                "pack.csv is written. Install gnuplot (Debian: apt-get install "
                "gnuplot-nox) for the figure\n",
                dir);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr,
                "clustersim: note: gnuplot failed on %s, so no figure was drawn; "
                "pack.csv is written\n",
                script);
    } else {
        sim_diag d = {0};
        ok = sim_outfile_copy(png, scratch, &d) == SIM_OK;
        if (!ok) {
            char msg[1200];
            fprintf(stderr, "clustersim: %s\n", sim_diag_format(&d, msg, sizeof msg));
        }
    }
    unlink(scratch);
    sim_outfile_untrack(scratch);
    return ok;
}

/* Everything a study holds, released in one place. */
typedef struct pack_study {
    model_catalog *cat;
    cluster_spec *cl;
    sim_intern *tenants, *models;
    uint64_t *type_mem;
    study_frag frag;
    pack_task *tasks;
    uint32_t n_tasks, cap_tasks;
    uint32_t *order;     /* task of each arrival */
    sim_time *at;        /* time of each arrival */
    uint32_t cap_arr;    /* capacity of order[] and at[] */
    double *results;     /* policies x seeds x steps x PACK_METRICS (shared with workers) */
    double *arrivals;    /* arrivals per seed (idem) */
    double *reached;     /* arrived GPU request per seed, milli-GPU (idem) */
    size_t shared_bytes; /* size of the mapping that holds all three */
    uint8_t *seen;
    gsl_rng *rng;
} pack_study;

static void study_fini(pack_study *s)
{
    study_frag_fini(&s->frag);
    sim_free(s->tasks);
    sim_free(s->order);
    sim_free(s->at);
    if (s->results)
        munmap(s->results, s->shared_bytes);
    sim_free(s->seen);
    if (s->rng)
        gsl_rng_free(s->rng);
    sim_intern_destroy(s->tenants);
    sim_intern_destroy(s->models);
    cluster_spec_destroy(s->cl);
    sim_free(s->type_mem);
    model_catalog_destroy(s->cat);
}

/* Read every task of the trace into s->tasks and count its shape into the workload. */
static int read_tasks(pack_study *s, const char *path, const char *format, bool skip_bad,
                      uint64_t *skipped, sim_diag *d)
{
    trace_reader *r;
    trace_options topt = {.format = format,
                          .skip_bad_rows = skip_bad,
                          .tenants = s->tenants,
                          .models = s->models,
                          .gpu_types = model_catalog_names(s->cat),
                          .shapes_only = true};
    int st = trace_reader_open(&r, path, &topt, d);
    if (st != SIM_OK)
        return st;
    job_spec j;
    while ((st = trace_reader_next(r, &j, d)) == 1) {
        if (s->n_tasks == s->cap_tasks) {
            uint32_t ncap = s->cap_tasks ? s->cap_tasks * 2 : 4096;
            pack_task *nt = ncap > s->cap_tasks && ncap < UINT32_MAX / 4
                                ? sim_reallocarray(s->tasks, ncap, sizeof *nt)
                                : NULL;
            if (!nt) {
                st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
            s->tasks = nt;
            s->cap_tasks = ncap;
        }
        pack_task *t = &s->tasks[s->n_tasks++];
        t->cpu_milli = j.cpu_milli;
        t->mem_mib = j.mem_mib;
        t->gpu_mem_mib = j.gpu_mem_mib;
        t->type_mask = j.gpu_type_mask;
        t->num_gpus = j.num_gpus;
        t->gpu_milli = j.num_gpus ? j.gpu_milli : 0;
        t->replicas = j.replicas;
        t->demand_milli = (uint64_t)t->num_gpus * t->gpu_milli;
        if ((st = study_frag_add_job(&s->frag, &j, d)) != SIM_OK)
            break;
    }
    *skipped = trace_reader_skipped(r);
    trace_reader_close(r);
    return st < 0 ? st : SIM_OK;
}

/* Room for n arrivals in s->order and s->at. */
static int grow_arrivals(pack_study *s, uint64_t n)
{
    if (n <= s->cap_arr)
        return SIM_OK;
    uint64_t ncap = s->cap_arr ? (uint64_t)s->cap_arr * 2 : 16384;
    while (ncap < n)
        ncap *= 2;
    if (ncap > UINT32_MAX / 2)
        return SIM_ELIMIT;
    uint32_t *no = sim_reallocarray(s->order, ncap, sizeof *no);
    if (!no)
        return SIM_ENOMEM;
    s->order = no;
    sim_time *na = sim_reallocarray(s->at, ncap, sizeof *na);
    if (!na)
        return SIM_ENOMEM;
    s->at = na;
    s->cap_arr = (uint32_t)ncap;
    return SIM_OK;
}

/* Resample and shuffle the arrivals of one seed: every task once, plus uniform draws
 * until the request reaches target_milli; in shuffled order, the arrivals whose
 * cumulative request stays within the target. *n gets the number of arrivals, *reached
 * their summed request. */
static int draw_arrivals(pack_study *s, uint64_t seed, uint64_t target_milli, uint32_t *n_out,
                         uint64_t *reached)
{
    int st = grow_arrivals(s, s->n_tasks);
    if (st != SIM_OK)
        return st;
    gsl_rng_set(s->rng, seed);
    uint64_t total = 0;
    uint32_t n = 0;
    for (; n < s->n_tasks; n++) {
        s->order[n] = n;
        total += s->tasks[n].demand_milli;
    }
    while (total < target_milli) {
        if (n == s->cap_arr && (st = grow_arrivals(s, (uint64_t)n + 1)) != SIM_OK)
            return st;
        uint32_t k = (uint32_t)gsl_rng_uniform_int(s->rng, s->n_tasks);
        s->order[n++] = k;
        total += s->tasks[k].demand_milli;
    }
    gsl_ran_shuffle(s->rng, s->order, n, sizeof *s->order);
    uint64_t cum = 0;
    uint32_t k = 0;
    for (; k < n; k++) {
        uint64_t next = cum + s->tasks[s->order[k]].demand_milli;
        if (next > target_milli)
            break;
        cum = next;
        s->at[k] = (sim_time)cum * PACK_US_PER_MILLI;
    }
    *n_out = k;
    *reached = cum;
    return SIM_OK;
}

/* What every cell of the study shares. */
typedef struct pack_plan {
    const char *const *names;  /* policies */
    const policy_config *pcfg; /* their options */
    uint32_t n_pol;
    const uint64_t *seeds;
    uint32_t n_seeds;
    uint64_t target_milli;  /* GPU request to reach, milli-GPU */
    uint32_t demand, steps; /* demand %, rows 0..demand */
    sim_time step_us;       /* 1 % of the capacity in arrival time */
    uint64_t cap_milli;     /* GPU capacity, milli-GPU */
} pack_plan;

/* Run cell c: seed c / n_pol under policy c % n_pol, into its rows of s->results. */
static int run_cell(pack_study *s, const pack_plan *pl, uint32_t c, sim_diag *d)
{
    uint32_t si = c / pl->n_pol, p = c % pl->n_pol;
    uint32_t n_arr;
    uint64_t reached;
    int st = draw_arrivals(s, pl->seeds[si], pl->target_milli, &n_arr, &reached);
    if (st == SIM_ELIMIT)
        return sim_diag_set(d, st, NULL, 0, 0, "--demand %u%% needs too many arrivals", pl->demand);
    if (st != SIM_OK)
        return sim_diag_set(d, st, NULL, 0, 0, "out of memory");
    s->arrivals[si] = n_arr;
    s->reached[si] = (double)reached;
    double *row = s->results + ((size_t)p * pl->n_seeds + si) * pl->steps * PACK_METRICS;
    pack_probe probe = {.frag = &s->frag,
                        .at = s->at,
                        .n = n_arr,
                        .step_us = pl->step_us,
                        .steps = pl->steps,
                        .cap_milli = (double)pl->cap_milli,
                        .row = row,
                        .seen = s->seen};
    memset(s->seen, 0, pl->steps);
    sim_probe sp = {.n = PACK_METRICS, .names = probe_names, .ctx = &probe, .sample = pack_sample};
    sim_config cfg = {.seed = pl->seeds[si],
                      .sample_interval_us = pl->step_us,
                      .horizon_us = pl->step_us * pl->demand,
                      .probes = &sp,
                      .n_probes = 1};
    sim_world world = {.cluster = s->cl,
                       .gpu_types = model_catalog_names(s->cat),
                       .gpu_type_mem_mib = s->type_mem,
                       .tenants = s->tenants};
    policy_config pc = pl->pcfg[p];
    pc.workload = s->frag.wl;
    sim_engine *e;
    if ((st = sim_engine_create(&e, &cfg, &world, policy_find(pl->names[p]), &pc, d)))
        return st;
    frag_meter_forget(s->frag.meter);
    /* Steps before the first sample hold the empty cluster. */
    double first[PACK_METRICS];
    pack_measure(&probe, sim_engine_view(e), first);
    first[3] = 0;
    probe.cursor = 0;
    pack_source src = {.tasks = s->tasks, .order = s->order, .at = s->at, .n = n_arr};
    sim_source source = {.ctx = &src, .next = pack_next};
    st = sim_engine_run(e, &source, d);
    sim_engine_destroy(e);
    if (st != SIM_OK)
        return st;
    /* Steps after the last sample (nothing left in flight) keep the last state. */
    for (uint32_t k = 0; k < pl->steps; k++)
        if (!s->seen[k])
            memcpy(row + k * PACK_METRICS, k ? row + (k - 1) * PACK_METRICS : first, sizeof first);
    return SIM_OK;
}

/*
 * Run every cell, in `jobs` processes: worker w runs cells w, w + jobs, ... and writes
 * its rows into a shared anonymous mapping (cells write disjoint rows, so the result does
 * not depend on jobs). Returns SIM_OK or the exit status of the command (its diagnostic
 * printed).
 */
static int run_study(pack_study *s, const pack_plan *pl, uint32_t jobs, sim_diag *d)
{
    uint32_t cells = pl->n_pol * pl->n_seeds;
    size_t n_res = (size_t)cells * pl->steps * PACK_METRICS;
    s->shared_bytes = (n_res + 2 * (size_t)pl->n_seeds) * sizeof(double);
    /* A shared mapping, not the allocation hook: worker processes write into it. */
    void *m =
        mmap(NULL, s->shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        study_print_diag(&(sim_diag){.msg = "out of memory"});
        return 1;
    }
    s->results = m;
    s->arrivals = s->results + n_res;
    s->reached = s->arrivals + pl->n_seeds;
    if (jobs > cells)
        jobs = cells;
    if (jobs <= 1) {
        for (uint32_t c = 0; c < cells; c++) {
            int st = run_cell(s, pl, c, d);
            if (st != SIM_OK) {
                study_print_diag(d);
                return study_exit_status(st);
            }
        }
        return SIM_OK;
    }
    pid_t pids[PACK_MAX_JOBS];
    uint32_t started = 0;
    int status = SIM_OK;
    fflush(NULL);
    /* An interrupt goes to the workers too, and they are waited for. */
    study_forward_begin();
    for (uint32_t w = 0; w < jobs && !study_forward_signal(); w++) {
        pid_t pid = (pid_t)study_fork();
        if (pid < 0) {
            fprintf(stderr, "clustersim: error: cannot start a worker process: %s\n",
                    strerror(errno));
            status = 1;
            break;
        }
        if (pid == 0) {
            for (uint32_t c = w; c < cells; c += jobs) {
                int st = run_cell(s, pl, c, d);
                if (st != SIM_OK) {
                    study_print_diag(d);
                    fflush(NULL);
                    _exit(study_exit_status(st));
                }
            }
            fflush(NULL);
            _exit(0);
        }
        pids[started++] = pid;
    }
    for (uint32_t w = 0; w < started; w++) {
        int ws = 0;
        while (waitpid(pids[w], &ws, 0) < 0 && errno == EINTR)
            ;
        study_forget_child(pids[w]);
        int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
        if (code && status == SIM_OK)
            status = code;
    }
    if (study_forward_signal())
        fprintf(stderr,
                "clustersim pack: interrupted by signal %d: the %u worker(s) were "
                "stopped and waited for; no pack.csv was written\n",
                study_forward_signal(), started);
    study_forward_end(); /* after a signal, ends the process by it */
    return status;
}

int study_pack(const pack_config *c)
{
    double t0 = wall_now();
    pack_study s = {0};
    sim_diag d = {0};
    int st = SIM_OK;
    uint64_t skipped = 0;
    if ((st = model_catalog_load(&s.cat, c->catalog ? c->catalog : model_catalog_default_path(),
                                 &d)))
        goto out;
    uint32_t ntypes = model_catalog_count(s.cat);
    s.type_mem = sim_calloc(ntypes, sizeof *s.type_mem);
    s.tenants = sim_intern_create(false);
    s.models = sim_intern_create(false);
    s.rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s.type_mem || !s.tenants || !s.models || !s.rng) {
        st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    for (uint16_t t = 1; t < ntypes; t++)
        s.type_mem[t] = model_catalog_type(s.cat, t)->memory_mib;
    char cl_ignored[512];
    if ((st = cluster_spec_load_ignoring(&s.cl, c->cluster, model_catalog_names(s.cat), NULL,
                                         cl_ignored, sizeof cl_ignored, &d)))
        goto out;
    if (*cl_ignored)
        fprintf(stderr,
                "clustersim: warning: %s: ignoring column(s) the cluster format does not "
                "use: %s\n",
                c->cluster, cl_ignored);
    if ((st = study_frag_init(&s.frag, s.cl, s.type_mem, ntypes, &d)) ||
        (st = read_tasks(&s, c->trace, c->format, c->skip_bad_rows, &skipped, &d)))
        goto out;
    uint64_t gpus = cluster_spec_gpus(s.cl), trace_milli = 0;
    for (uint32_t k = 0; k < s.n_tasks; k++)
        trace_milli += s.tasks[k].demand_milli;
    if (gpus == 0) {
        st = sim_diag_set(&d, SIM_EINVAL, c->cluster, 0, 0, "the cluster has no GPU to pack");
        goto out;
    }
    if (trace_milli == 0) {
        st = sim_diag_set(&d, SIM_EINVAL, c->trace, 0, 0,
                          "the trace has no task asking for a GPU, so there is nothing to pack");
        goto out;
    }
    uint64_t cap_milli = gpus * SIM_MILLI_GPU;
    uint64_t target = cap_milli * c->demand / 100;
    uint32_t steps = c->demand + 1;
    s.seen = sim_calloc(steps, 1);
    if (!s.seen) {
        st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    /* Check every policy's options once, before any cell (or worker) runs. */
    for (uint32_t p = 0; p < c->n_pol; p++) {
        sim_config cfg = {.horizon_us = SIM_TIME_NEVER};
        sim_world world = {.cluster = s.cl,
                           .gpu_types = model_catalog_names(s.cat),
                           .gpu_type_mem_mib = s.type_mem,
                           .tenants = s.tenants};
        policy_config pc = c->pcfg[p];
        pc.workload = s.frag.wl;
        sim_engine *e;
        if ((st = sim_engine_create(&e, &cfg, &world, policy_find(c->names[p]), &pc, &d)))
            goto out;
        sim_engine_destroy(e);
    }
    pack_plan plan = {.names = c->names,
                      .pcfg = c->pcfg,
                      .n_pol = c->n_pol,
                      .seeds = c->seeds,
                      .n_seeds = c->n_seeds,
                      .target_milli = target,
                      .demand = c->demand,
                      .steps = steps,
                      .step_us = (sim_time)cap_milli * PACK_US_PER_MILLI / 100,
                      .cap_milli = cap_milli};
    if ((st = run_study(&s, &plan, c->jobs, &d)) != SIM_OK)
        goto out_status;
    double arrivals_total = 0, reached_min = (double)target;
    for (uint32_t si = 0; si < c->n_seeds; si++) {
        arrivals_total += s.arrivals[si];
        if (s.reached[si] < reached_min)
            reached_min = s.reached[si];
    }
    double wall = wall_now() - t0;

    study_outfile csv = {0};
    if (!study_out_open(&csv, c->out_dir, "pack.csv")) {
        st = SIM_EIO;
        goto out_printed;
    }
    fputs("policy,demand_pct,seeds,alloc_mean,alloc_sd,frag_amount_mean,frag_amount_sd,"
          "frag_ratio_mean,frag_ratio_sd,failed_mean,failed_sd\n",
          csv.f);
    double *vals = sim_calloc(c->n_seeds, sizeof *vals);
    if (!vals) {
        study_out_close(&csv, false);
        st = sim_diag_set(&d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    printf("clustersim pack: %s on %s (%llu GPUs): %u tasks in the trace, %.0f arrivals per "
           "seed on average, demand %u%%, %u seed(s), %.2f s\n",
           c->trace, c->cluster, (unsigned long long)gpus, s.n_tasks, arrivals_total / c->n_seeds,
           c->demand, c->n_seeds, wall);
    printf("%-14s %18s %18s %16s %14s\n", "policy", "allocated %", "frag % of idle", "frag GPUs",
           "failed tasks");
    for (uint32_t p = 0; p < c->n_pol; p++) {
        for (uint32_t k = 0; k < steps; k++) {
            double mean[PACK_METRICS], sd[PACK_METRICS];
            for (int m = 0; m < PACK_METRICS; m++) {
                for (uint32_t si = 0; si < c->n_seeds; si++)
                    vals[si] =
                        s.results[(((size_t)p * c->n_seeds + si) * steps + k) * PACK_METRICS +
                                  (size_t)m];
                mean[m] = gsl_stats_mean(vals, 1, c->n_seeds);
                sd[m] = c->n_seeds > 1 ? gsl_stats_sd_m(vals, 1, c->n_seeds, mean[m]) : 0;
            }
            fprintf(csv.f, "%s,%u,%u,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", c->names[p], k,
                    c->n_seeds, mean[0], sd[0], mean[1], sd[1], mean[2], sd[2], mean[3], sd[3]);
            if (k == steps - 1)
                printf("%-14s %9.2f +- %5.2f %9.2f +- %5.2f %8.1f +- %5.1f %7.1f +- %4.1f\n",
                       c->names[p], mean[0], sd[0], mean[2], sd[2], mean[1], sd[1], mean[3], sd[3]);
        }
    }
    sim_free(vals);
    if (!study_out_close(&csv, true)) {
        st = SIM_EIO;
        goto out_printed;
    }
    if (skipped)
        fprintf(stderr, "clustersim: %llu malformed trace rows skipped\n",
                (unsigned long long)skipped);
    const char *base = strrchr(c->trace, '/');
    char title[300];
    snprintf(title, sizeof title, "%s, %u seed(s)", base ? base + 1 : c->trace, c->n_seeds);
    fflush(stdout);
    bool fig = c->figure && draw_figure(c->out_dir, title, c->names, c->n_pol, c->demand);
    if ((double)target - reached_min > (double)cap_milli / 100)
        fprintf(stderr,
                "clustersim: note: for some seed the arrivals stopped at %.1f %% of "
                "the GPU capacity (the next task would pass %u %%): the rows above "
                "it repeat the state reached there\n",
                100.0 * reached_min / (double)cap_milli, c->demand);
    fprintf(stderr, "clustersim: pack: %u policies x %u seeds in %.2f s; wrote %s/pack.csv%s%s\n",
            c->n_pol, c->n_seeds, wall, c->out_dir, fig ? " and " : "", fig ? "pack.png" : "");
    study_fini(&s);
    return 0;
out:
    study_print_diag(&d);
out_printed:
    study_fini(&s);
    return study_exit_status(st);
out_status:
    /* The diagnostic is printed; st is the exit status. */
    study_fini(&s);
    return st;
}
