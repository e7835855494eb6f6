/*
 * sweep.c: the cells of a sweep on this machine (sweep.h): which are complete, clearing
 * the others, their command lines, running them through study/proc.h's bounded process
 * runner, and turning a pack cell's pack.csv into its summary.json.
 */
#include "study/sweep.h"

#include "study/proc.h"
#include "base/alloc.h"
#include "base/textout.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every file a cell can leave, summary.json first so it goes before the rest. */
static const char *const cell_files[] = {"summary.json", "run.json", "jobs.csv", "timeseries.csv",
                                         "tenants.csv",  "pack.csv", "pack.png", "sweep.log"};

static bool make_dir(const char *dir)
{
    char p[1400];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return false;
            *q = '/';
        }
    return mkdir(p, 0777) == 0 || errno == EEXIST;
}

static bool json_file_ok(const char *path)
{
    json_object *o = json_object_from_file(path);
    bool ok = o && json_object_is_type(o, json_type_object);
    json_object_put(o);
    return ok;
}

bool sweep_cell_complete(const char *dir)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/summary.json", dir);
    return access(p, R_OK) == 0 && json_file_ok(p);
}

int sweep_init(sweep *s, const grid *g, const char *out, const char *self, bool redo, sim_diag *d)
{
    *s = (sweep){.g = g, .redo = redo};
    snprintf(s->out, sizeof s->out, "%s", out);
    snprintf(s->self, sizeof s->self, "%s", self);
    char cells[1030];
    snprintf(cells, sizeof cells, "%s/cells", out);
    if (!make_dir(out) || !make_dir(cells))
        return sim_diag_set(d, SIM_EIO, cells, 0, 0, "cannot create the directory: %s",
                            strerror(errno));
    if (!(s->cells = sim_calloc(g->n_cells, sizeof *s->cells)))
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < g->n_cells; i++) {
        sweep_cell *c = &s->cells[i];
        snprintf(c->dir, sizeof c->dir, "%.1030s/%s", cells, g->cells[i].name);
        if (!redo && sweep_cell_complete(c->dir)) {
            c->state = SWEEP_SKIPPED;
            s->n_skipped++;
        } else {
            s->n_pending++;
        }
    }
    return SIM_OK;
}

void sweep_fini(sweep *s)
{
    sim_free(s->cells);
    s->cells = NULL;
}

bool sweep_cell_clear(const sweep *s, size_t i)
{
    const char *dir = s->cells[i].dir;
    if (!make_dir(dir))
        return false;
    for (size_t k = 0; k < sizeof cell_files / sizeof cell_files[0]; k++) {
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", dir, cell_files[k]);
        remove(p);
    }
    return true;
}

void sweep_cell_argv(const sweep *s, size_t i, char *seed_buf, char **argv)
{
    grid_cell_argv(s->g, &s->g->cells[i], s->self, s->cells[i].dir, seed_buf, argv);
}

/* pack.csv's last row (the highest demand step) as summary.json: every numeric column,
 * X_mean named X; the _sd columns (empty for one seed) and `seeds` are left out. */
static bool pack_summary(const char *dir, char *why, size_t why_n)
{
    char path[1400], tmp[1500];
    snprintf(path, sizeof path, "%s/pack.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, why_n, "pack.csv is missing: %s", strerror(errno));
        return false;
    }
    char head[1024] = "", line[1024] = "", last[1024] = "";
    if (!fgets(head, sizeof head, f))
        head[0] = '\0';
    while (fgets(line, sizeof line, f))
        if (line[0] && line[0] != '\n')
            memcpy(last, line, sizeof last);
    fclose(f);
    if (!head[0] || !last[0]) {
        snprintf(why, why_n, "pack.csv has no rows");
        return false;
    }
    snprintf(tmp, sizeof tmp, "%s/summary.json.tmp.%ld", dir, (long)getpid());
    FILE *o = fopen(tmp, "w");
    if (!o) {
        snprintf(why, why_n, "cannot create %.400s: %s", tmp, strerror(errno));
        return false;
    }
    fputs("{", o);
    char *hs, *ls, *h = strtok_r(head, ",\r\n", &hs), *v = strtok_r(last, ",\r\n", &ls);
    bool first = true;
    for (; h && v; h = strtok_r(NULL, ",\r\n", &hs), v = strtok_r(NULL, ",\r\n", &ls)) {
        size_t hl = strlen(h);
        if (!strcmp(h, "policy")) {
            fprintf(o, "%s\"policy\": ", first ? "" : ", ");
            sim_json_put_string(o, v);
            first = false;
            continue;
        }
        if (!strcmp(h, "seeds") || (hl > 3 && !strcmp(h + hl - 3, "_sd")))
            continue;
        char *e;
        strtod(v, &e);
        if (e == v || *e)
            continue;
        if (hl > 5 && !strcmp(h + hl - 5, "_mean"))
            h[hl - 5] = '\0';
        fprintf(o, "%s\"%s\": %s", first ? "" : ", ", h, v);
        first = false;
    }
    fputs("}\n", o);
    bool ok = !ferror(o);
    ok = fclose(o) == 0 && ok;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, why_n, "cannot write %.400s: %s", path, strerror(errno));
        remove(tmp);
        return false;
    }
    return true;
}

void sweep_cell_finish(sweep *s, size_t i, int exit_status, double wall_s)
{
    sweep_cell *c = &s->cells[i];
    c->wall_s = wall_s;
    c->error[0] = '\0';
    char log[1400], last[400];
    snprintf(log, sizeof log, "%s/sweep.log", c->dir);
    if (exit_status == 0 && s->g->kind == GRID_PACK &&
        !pack_summary(c->dir, c->error, sizeof c->error)) {
        c->state = SWEEP_FAILED;
        return;
    }
    if (exit_status == 0 && sweep_cell_complete(c->dir)) {
        c->state = SWEEP_DONE;
        return;
    }
    c->state = SWEEP_FAILED;
    study_last_line(log, last, sizeof last);
    if (exit_status == 0)
        snprintf(c->error, sizeof c->error, "exit status 0 but the outputs are incomplete");
    else if (exit_status == STUDY_PROC_NOT_STARTED && !*last)
        snprintf(c->error, sizeof c->error, "could not be started");
    else if (exit_status > 128)
        snprintf(c->error, sizeof c->error, "killed by signal %d%s%s", exit_status - 128,
                 *last ? ": " : "", last);
    else
        snprintf(c->error, sizeof c->error, "exit status %d%s%s", exit_status, *last ? ": " : "",
                 last);
}

typedef struct local_run {
    sweep *s;
    size_t *index; /* proc k runs cell index[k] */
    size_t done, failed;
    double t0;
    sweep_progress fn;
    void *ctx;
} local_run;

static void on_proc(void *ctx, const study_proc *p, size_t n, size_t k)
{
    local_run *lr = ctx;
    (void)n;
    if (k != (size_t)-1 && p[k].state == STUDY_PROC_DONE) {
        sweep_cell_finish(lr->s, lr->index[k], p[k].exit_status, p[k].wall_s);
        lr->done++;
        lr->failed += lr->s->cells[lr->index[k]].state == SWEEP_FAILED;
    } else if (k != (size_t)-1) {
        return; /* a start */
    }
    if (lr->fn)
        lr->fn(lr->ctx, lr->s, lr->done, lr->failed, lr->s->n_pending, study_wall_now() - lr->t0);
}

/* Cells are handed to the process runner in batches, so memory for their command lines
 * stays bounded however large the grid; a batch's last cells leave cores idle only for
 * the time of one cell. */
#define LOCAL_BATCH 4096

int sweep_run_local(sweep *s, unsigned jobs, sweep_progress fn, void *ctx, sim_diag *d)
{
    size_t cap = s->n_pending < LOCAL_BATCH ? s->n_pending : LOCAL_BATCH;
    if (cap == 0)
        return SIM_OK;
    study_proc *procs = sim_calloc(cap, sizeof *procs);
    size_t *index = sim_calloc(cap, sizeof *index);
    char **args = sim_calloc(cap * GRID_CELL_ARGV, sizeof *args);
    char(*seeds)[24] = sim_calloc(cap, sizeof *seeds);
    char(*logs)[1400] = sim_calloc(cap, sizeof *logs);
    int st = SIM_OK;
    if (!procs || !index || !args || !seeds || !logs) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    local_run lr = {.s = s, .index = index, .t0 = study_wall_now(), .fn = fn, .ctx = ctx};
    for (size_t i = 0; i < s->g->n_cells && st == SIM_OK;) {
        size_t k = 0;
        for (; i < s->g->n_cells && k < cap; i++) {
            if (s->cells[i].state != SWEEP_PENDING)
                continue;
            if (!sweep_cell_clear(s, i)) {
                st = sim_diag_set(d, SIM_EIO, s->cells[i].dir, 0, 0,
                                  "cannot create the directory: %s", strerror(errno));
                goto out;
            }
            index[k] = i;
            sweep_cell_argv(s, i, seeds[k], args + k * GRID_CELL_ARGV);
            snprintf(logs[k], sizeof logs[k], "%s/sweep.log", s->cells[i].dir);
            procs[k] = (study_proc){.argv = args + k * GRID_CELL_ARGV, .log_path = logs[k]};
            k++;
        }
        if (k && study_procs_run(procs, k, jobs, on_proc, &lr) != 0)
            st = sim_diag_set(d, SIM_EIO, NULL, 0, 0, "cannot start a cell's process: %s",
                              strerror(errno));
    }
out:
    sim_free(procs);
    sim_free(index);
    sim_free(args);
    sim_free(seeds);
    sim_free(logs);
    return st;
}

/* The first cell whose parameter `axis` (0 trace, 1 cluster, 2 policy, 3 + a option a)
 * has value v, or SIZE_MAX. */
static size_t first_with(const grid *g, size_t axis, uint32_t v)
{
    for (size_t i = 0; i < g->n_cells; i++) {
        const grid_cell *c = &g->cells[i];
        uint32_t x = axis == 0   ? c->trace
                     : axis == 1 ? c->cluster
                     : axis == 2 ? c->policy
                                 : c->value[axis - 3];
        if (x == v)
            return i;
    }
    return SIZE_MAX;
}

int sweep_check(const sweep *s, unsigned jobs, sim_diag *d)
{
    const grid *g = s->g;
    if (g->kind != GRID_RUN)
        return SIM_OK;
    size_t max = g->n_traces + g->n_clusters + g->n_policies;
    for (size_t a = 0; a < g->n_axes; a++)
        max += g->axes[a].n_values;
    size_t *pick = sim_calloc(max, sizeof *pick), n = 0;
    study_proc *procs = sim_calloc(max, sizeof *procs);
    char **args = sim_calloc(max * GRID_CELL_ARGV, sizeof *args);
    char(*seeds)[24] = sim_calloc(max, sizeof *seeds);
    char(*logs)[1200] = sim_calloc(max, sizeof *logs);
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/check", s->out);
    int st = SIM_OK;
    if (!pick || !procs || !args || !seeds || !logs) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    if (!make_dir(dir)) {
        st =
            sim_diag_set(d, SIM_EIO, dir, 0, 0, "cannot create the directory: %s", strerror(errno));
        goto out;
    }
    size_t sizes[3 + GRID_MAX_AXES] = {g->n_traces, g->n_clusters, g->n_policies};
    for (size_t a = 0; a < g->n_axes; a++)
        sizes[3 + a] = g->axes[a].n_values;
    for (size_t axis = 0; axis < 3 + g->n_axes; axis++)
        for (uint32_t v = 0; v < sizes[axis]; v++) {
            size_t i = first_with(g, axis, v), k = 0;
            while (k < n && pick[k] != i)
                k++;
            if (i == SIZE_MAX || k < n)
                continue;
            pick[n] = i;
            char **a = args + n * GRID_CELL_ARGV;
            size_t o = grid_cell_argv(g, &g->cells[i], s->self, "-", seeds[n], a);
            /* `--out DIR --quiet` at the end becomes `--check`. */
            a[o - 3] = "--check";
            a[o - 2] = NULL;
            snprintf(logs[n], sizeof logs[n], "%.1100s/%zu.log", dir, n);
            procs[n] = (study_proc){.argv = a, .log_path = logs[n]};
            n++;
        }
    if (study_procs_run(procs, n, jobs, NULL, NULL) != 0) {
        st = sim_diag_set(d, SIM_EIO, NULL, 0, 0, "cannot start clustersim: %s", strerror(errno));
        goto out;
    }
    for (size_t k = 0; k < n; k++) {
        if (procs[k].exit_status == 0)
            continue;
        char last[600];
        study_last_line(logs[k], last, sizeof last);
        st = sim_diag_set(d, SIM_EINVAL, g->path, 0, 0, "cell %s cannot run: %s",
                          g->cells[pick[k]].name, *last ? last : "its check failed");
        break;
    }
out:
    sim_free(pick);
    sim_free(procs);
    sim_free(args);
    sim_free(seeds);
    sim_free(logs);
    return st;
}

int sweep_check_grid(const grid *g, const char *self, unsigned jobs, sim_diag *d)
{
    if (g->kind != GRID_RUN)
        return SIM_OK;
    sweep s = {.g = g};
    const char *tmp = getenv("TMPDIR");
    snprintf(s.out, sizeof s.out, "%s/clustersim-check-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    snprintf(s.self, sizeof s.self, "%s", self);
    if (!mkdtemp(s.out))
        return sim_diag_set(d, SIM_EIO, s.out, 0, 0, "cannot create a temporary directory: %s",
                            strerror(errno));
    int st = sweep_check(&s, jobs, d);
    /* sweep_check writes OUT/check/K.log for the K-th cell it checks. */
    char path[1100];
    for (size_t k = 0;; k++) {
        snprintf(path, sizeof path, "%s/check/%zu.log", s.out, k);
        if (unlink(path) != 0)
            break;
    }
    snprintf(path, sizeof path, "%s/check", s.out);
    rmdir(path);
    rmdir(s.out);
    return st;
}

long sweep_launched_processes(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "SLURM_STEP_NUM_TASKS"};
    long n = 1;
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        const char *v = getenv(vars[k]);
        long x = v ? atol(v) : 0;
        n = x > n ? x : n;
    }
    return n;
}
