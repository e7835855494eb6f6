/*
 * pollux.c: Pollux's application profiles as iterations and iteration times (see
 * pollux.h). Reference: Qiao et al., "Pollux: Co-adaptive Cluster Scheduling for
 * Goodput-Optimized Deep Learning", OSDI'21; simulator/applications.py of
 * github.com/petuum/adaptdl (osdi21-artifact). Placements beyond the placements table
 * (more than 16 trainers) use the scalability table's rows for that trainer count on
 * the node count nearest to ceil(n/4), interpolated linearly in n between the nearest
 * measured counts when n itself was not measured (Pollux interpolates the same points
 * with a 3-D Delaunay interpolator).
 */
#include "models/pollux.h"

#include "base/alloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-application settings of applications.py (max_epochs, max_local_bsz). */
static const struct {
    const char *name;
    uint32_t max_epochs;
    uint32_t max_local_bsz; /* 0 = the placements table's largest */
} apps_known[] = {
    {"bert", 2, 0},      {"cifar10", 100, 0}, {"deepspeech2", 80, 0},
    {"imagenet", 90, 0}, {"ncf", 10, 0},      {"yolov3", 50, 8},
};
#define N_APPS (sizeof apps_known / sizeof apps_known[0])
#define MAX_VALID 16

typedef struct prow {
    uint64_t key; /* placement id (placements) or nodes*1000+replicas (scalability) */
    double local; /* local batch size */
    double step, sync;
} prow;

typedef struct app {
    bool loaded;
    uint32_t n_valid;
    double valid_bsz[MAX_VALID];
    double valid_iters[MAX_VALID];
    double min_local, max_local;
    prow *pl, *sc;
    size_t n_pl, n_sc;
} app;

struct model_pollux {
    app apps[N_APPS];
};

static int row_cmp(const void *a, const void *b)
{
    const prow *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->local > y->local) - (x->local < y->local);
}

/* Read a small numeric CSV: header checked against `expect`; each row parsed into up to
 * `ncol` doubles. Calls back per row. */
static int read_csv(const char *path, const char *expect, int ncol,
                    int (*row)(void *ctx, const double *v, const char *path, long line,
                               sim_diag *d),
                    void *ctx, sim_diag *d)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    char buf[512];
    long line = 0;
    int st = SIM_OK;
    if (!fgets(buf, sizeof buf, f)) {
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file, expected header '%s'", expect);
        goto out_close_file;
    }
    line = 1;
    buf[strcspn(buf, "\r\n")] = 0;
    if (strcmp(buf, expect) != 0) {
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "expected header '%s', got \"%.40s\"", expect,
                          buf);
        goto out_close_file;
    }
    while (fgets(buf, sizeof buf, f)) {
        line++;
        size_t len = strcspn(buf, "\r\n");
        if (!strchr(buf, '\n') && !feof(f)) {
            st = sim_diag_set(d, SIM_EPARSE, path, line, 0, "line longer than %zu bytes",
                              sizeof buf - 2);
            goto out_close_file;
        }
        buf[len] = 0;
        if (!buf[0])
            continue;
        double v[8];
        char *p = buf;
        for (int c = 0; c < ncol; c++) {
            char *end;
            errno = 0;
            v[c] = strtod(p, &end);
            if (end == p || errno || !isfinite(v[c]) || (*end != ',' && *end != 0)) {
                size_t field = strcspn(p, ",");
                st = sim_diag_set(d, SIM_EPARSE, path, line, c + 1,
                                  "expected a number, got \"%.*s\"", (int)(field < 40 ? field : 40),
                                  p);
                goto out_close_file;
            }
            /* Exactly the header's fields: none missing, none more. */
            if ((c + 1 < ncol) != (*end == ',')) {
                st = sim_diag_set(d, SIM_EPARSE, path, line, c + 2,
                                  "expected %d fields, as in the header, got %s", ncol,
                                  *end ? "more" : "fewer");
                goto out_close_file;
            }
            p = *end ? end + 1 : end;
        }
        if ((st = row(ctx, v, path, line, d)) != SIM_OK)
            goto out_close_file;
    }
out_close_file:
    fclose(f);
    return st;
}

typedef struct rows_ctx {
    prow **rows;
    size_t *n, cap;
    bool placement;
} rows_ctx;

static int add_row(void *vctx, const double *v, const char *path, long line, sim_diag *d)
{
    rows_ctx *c = vctx;
    if (*c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        prow *p = sim_reallocarray(*c->rows, cap, sizeof *p);
        if (!p)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        *c->rows = p;
        c->cap = cap;
    }
    prow *r = &(*c->rows)[(*c->n)++];
    if (c->placement) {
        if (v[0] < 1 || v[1] <= 0 || v[2] <= 0)
            return sim_diag_set(d, SIM_EPARSE, path, line, 0, "expected positive values");
        r->key = (uint64_t)v[0];
        r->local = v[1];
        r->step = v[2];
        r->sync = v[3];
    } else {
        if (v[0] < 1 || v[1] < 1 || v[2] <= 0 || v[3] <= 0)
            return sim_diag_set(d, SIM_EPARSE, path, line, 0, "expected positive values");
        r->key = (uint64_t)v[0] * 1000u + (uint64_t)v[1];
        r->local = v[2];
        r->step = v[3];
        r->sync = v[4];
    }
    return SIM_OK;
}

typedef struct valid_ctx {
    uint32_t want; /* 0-based row of the completion epoch */
    uint32_t rows;
    double iters;
} valid_ctx;

static int valid_row(void *vctx, const double *v, const char *path, long line, sim_diag *d)
{
    (void)path;
    (void)line;
    (void)d;
    valid_ctx *c = vctx;
    if (c->rows == c->want)
        c->iters = v[1];
    c->rows++;
    return SIM_OK;
}

static int load_app(app *a, const char *dir, uint32_t k, sim_diag *d)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s/placements.csv", dir, apps_known[k].name);
    FILE *probe = fopen(path, "r");
    if (!probe)
        return SIM_OK; /* application not present */
    fclose(probe);
    rows_ctx rc = {.rows = &a->pl, .n = &a->n_pl, .placement = true};
    int st = read_csv(path, "placement,local_bsz,step_time,sync_time", 4, add_row, &rc, d);
    if (st != SIM_OK)
        return st;
    snprintf(path, sizeof path, "%s/%s/scalability.csv", dir, apps_known[k].name);
    rows_ctx sc = {.rows = &a->sc, .n = &a->n_sc, .placement = false};
    st = read_csv(path, "num_nodes,num_replicas,local_bsz,step_time,sync_time", 5, add_row, &sc, d);
    if (st != SIM_OK)
        return st;
    if (a->n_pl == 0)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "no placements for %s", apps_known[k].name);
    qsort(a->pl, a->n_pl, sizeof *a->pl, row_cmp);
    if (a->n_sc)
        qsort(a->sc, a->n_sc, sizeof *a->sc, row_cmp);
    a->min_local = a->max_local = a->pl[0].local;
    for (size_t i = 0; i < a->n_pl; i++) {
        if (a->pl[i].local < a->min_local)
            a->min_local = a->pl[i].local;
        if (a->pl[i].local > a->max_local)
            a->max_local = a->pl[i].local;
    }
    if (apps_known[k].max_local_bsz)
        a->max_local = apps_known[k].max_local_bsz;
    /* Validation runs: batch sizes 1..2^20 tried as file names would be wasteful; the
     * folder's validation-<B>.csv names are powers of two or multiples of 10 up to
     * 32768, so every B that names a file is found by trying the candidates below. */
    static const uint32_t cand[] = {8,    12,   16,   20,   24,   32,    40,    48,
                                    64,   80,   96,   128,  160,  192,   200,   256,
                                    320,  384,  400,  512,  640,  800,   1024,  1600,
                                    2048, 3200, 4096, 6400, 8192, 12800, 16384, 32768};
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        snprintf(path, sizeof path, "%s/%s/validation-%u.csv", dir, apps_known[k].name, cand[i]);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        fclose(f);
        if (a->n_valid == MAX_VALID)
            return sim_diag_set(d, SIM_ELIMIT, path, 0, 0, "more than %d validation runs",
                                MAX_VALID);
        valid_ctx vc = {.want = apps_known[k].max_epochs - 1};
        st = read_csv(path, "progress,iteration,metric,grad_sqr,grad_var", 5, valid_row, &vc, d);
        if (st != SIM_OK)
            return st;
        if (vc.rows == 0)
            return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "no epochs");
        if (vc.rows <= vc.want) /* max_epochs is at most the shortest run, as in Pollux */
            return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "%u epochs, %s needs %u", vc.rows,
                                apps_known[k].name, apps_known[k].max_epochs);
        a->valid_bsz[a->n_valid] = cand[i];
        a->valid_iters[a->n_valid] = vc.iters;
        a->n_valid++;
    }
    if (a->n_valid == 0)
        return sim_diag_set(d, SIM_EPARSE, dir, 0, 0, "%s: no validation-<B>.csv files",
                            apps_known[k].name);
    a->loaded = true;
    return SIM_OK;
}

int model_pollux_load(model_pollux **out, const char *dir, sim_diag *d)
{
    *out = NULL;
    model_pollux *p = sim_calloc(1, sizeof *p);
    if (!p)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    int st = SIM_OK;
    bool any = false;
    for (uint32_t k = 0; k < N_APPS; k++) {
        if ((st = load_app(&p->apps[k], dir, k, d)) != SIM_OK)
            goto out_free;
        any |= p->apps[k].loaded;
    }
    if (!any) {
        st = sim_diag_set(d, SIM_EIO, dir, 0, 0,
                          "no Pollux application profiles (bert/placements.csv, ...) here");
        goto out_free;
    }
    *out = p;
    return SIM_OK;
out_free:
    model_pollux_destroy(p);
    return st;
}

void model_pollux_destroy(model_pollux *p)
{
    if (!p)
        return;
    for (uint32_t k = 0; k < N_APPS; k++) {
        sim_free(p->apps[k].pl);
        sim_free(p->apps[k].sc);
    }
    sim_free(p);
}

int model_pollux_app(const model_pollux *p, const char *name, size_t len)
{
    for (uint32_t k = 0; k < N_APPS; k++)
        if (p->apps[k].loaded && strlen(apps_known[k].name) == len &&
            memcmp(apps_known[k].name, name, len) == 0)
            return (int)k;
    return -1;
}

void model_pollux_batch_range(const model_pollux *p, int app_i, uint32_t *min_bsz,
                              uint32_t *max_bsz, uint32_t *min_local)
{
    const app *a = &p->apps[app_i];
    *min_bsz = (uint32_t)a->valid_bsz[0];
    *max_bsz = (uint32_t)a->valid_bsz[a->n_valid - 1];
    *min_local = (uint32_t)a->min_local;
}

double model_pollux_iterations(const model_pollux *p, int app_i, double bsz)
{
    const app *a = &p->apps[app_i];
    for (uint32_t i = 0; i < a->n_valid; i++) {
        if (a->valid_bsz[i] == bsz)
            return a->valid_iters[i];
        if (a->valid_bsz[i] > bsz) {
            if (i == 0)
                return NAN;
            double lo = a->valid_bsz[i - 1], hi = a->valid_bsz[i];
            return ((bsz - lo) * a->valid_iters[i] + (hi - bsz) * a->valid_iters[i - 1]) /
                   (hi - lo);
        }
    }
    return NAN;
}

/* Step and sync time at local batch `local` among rows [lo, hi) sorted by local batch:
 * linear interpolation, clamped at the ends. */
static void interp(const prow *r, size_t n, double local, double *step, double *sync)
{
    if (local <= r[0].local) {
        *step = r[0].step;
        *sync = r[0].sync;
        return;
    }
    for (size_t i = 1; i < n; i++)
        if (local <= r[i].local) {
            double w = (local - r[i - 1].local) / (r[i].local - r[i - 1].local);
            *step = r[i - 1].step + w * (r[i].step - r[i - 1].step);
            *sync = r[i - 1].sync + w * (r[i].sync - r[i - 1].sync);
            return;
        }
    *step = r[n - 1].step;
    *sync = r[n - 1].sync;
}

/* Rows with key k: first index and count (rows sorted by key). */
static size_t find_key(const prow *r, size_t n, uint64_t k, size_t *count)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].key < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t e = lo;
    while (e < n && r[e].key == k)
        e++;
    *count = e - lo;
    return lo;
}

/* Scalability rows for n replicas on the node count nearest to `nodes`; false if none. */
static bool scal_at(const app *a, uint32_t n, uint32_t nodes, double local, double *step,
                    double *sync)
{
    bool found = false;
    uint32_t best = 0, best_dist = UINT32_MAX;
    for (size_t i = 0; i < a->n_sc; i++) {
        uint32_t nn = (uint32_t)(a->sc[i].key / 1000u), rr = (uint32_t)(a->sc[i].key % 1000u);
        if (rr != n)
            continue;
        uint32_t dist = nn > nodes ? nn - nodes : nodes - nn;
        if (dist < best_dist) {
            best_dist = dist;
            best = nn;
            found = true;
        }
    }
    if (!found)
        return false;
    size_t cnt, first = find_key(a->sc, a->n_sc, (uint64_t)best * 1000u + n, &cnt);
    interp(a->sc + first, cnt, local, step, sync);
    return true;
}

static void step_sync(const app *a, uint32_t n, double atomic, double *step, double *sync)
{
    uint32_t nodes = (n + 3) / 4;
    if (nodes <= 4) {
        /* Smallest rotation of (4, ..., 4, rem): rem first. */
        uint64_t key = 0;
        uint32_t rem = n - 4 * (nodes - 1);
        key = rem;
        for (uint32_t i = 1; i < nodes; i++)
            key = key * 10u + 4u;
        size_t cnt, first = find_key(a->pl, a->n_pl, key, &cnt);
        if (cnt) {
            interp(a->pl + first, cnt, atomic, step, sync);
            return;
        }
    }
    if (nodes > 16)
        nodes = 16;
    if (scal_at(a, n, nodes, atomic, step, sync))
        return;
    /* Between the nearest measured trainer counts. */
    uint32_t lo = 0, hi = 0;
    for (size_t i = 0; i < a->n_sc; i++) {
        uint32_t rr = (uint32_t)(a->sc[i].key % 1000u);
        if (rr < n && rr > lo)
            lo = rr;
        if (rr > n && (hi == 0 || rr < hi))
            hi = rr;
    }
    double s1, y1, s2, y2;
    if (lo && hi && scal_at(a, lo, (lo + 3) / 4, atomic, &s1, &y1) &&
        scal_at(a, hi, (hi + 3) / 4, atomic, &s2, &y2)) {
        double w = (double)(n - lo) / (double)(hi - lo);
        *step = s1 + w * (s2 - s1);
        *sync = y1 + w * (y2 - y1);
        return;
    }
    uint32_t only = lo ? lo : hi;
    if (only && scal_at(a, only, (only + 3) / 4, atomic, step, sync))
        return;
    /* No scalability table: the 16-trainer placement. */
    size_t cnt, first = find_key(a->pl, a->n_pl, 4444, &cnt);
    if (!cnt)
        first = 0, cnt = 1;
    interp(a->pl + first, cnt, atomic, step, sync);
}

double model_pollux_iter_time(const model_pollux *p, int app_i, uint32_t n, double bsz)
{
    const app *a = &p->apps[app_i];
    if (n == 0)
        n = 1;
    double init_bsz = a->valid_bsz[0], max_bsz = a->valid_bsz[a->n_valid - 1];
    double local = ceil(bsz / n - 1e-8);
    double accum = ceil(local / a->max_local - 1e-8) - 1;
    if (accum < 0)
        accum = 0;
    if (n == 1 && bsz > init_bsz && accum < 1)
        accum = 1;
    double atomic = ceil(local / (accum + 1) - 1e-8);
    double cap = floor(max_bsz / (n * (accum + 1)));
    if (atomic > cap)
        atomic = cap;
    if (atomic < 1)
        atomic = 1;
    double step, sync;
    step_sync(a, n, atomic, &step, &sync);
    return step + accum * (step - sync);
}

double model_amdahl(double par, uint32_t n)
{
    if (n == 0)
        n = 1;
    return 1.0 / ((1.0 - par) + par / (double)n);
}

/* ---- the rate-model wrapper ---------------------------------------------------- */

static int scaling_app(model_scaling *s, uint32_t model)
{
    if (!s->pollux || model == 0)
        return -1;
    size_t slot = model % (sizeof s->cache / sizeof s->cache[0]);
    if (s->cache[slot].key != model + 1) {
        const char *name = sim_intern_name(s->classes, model);
        s->cache[slot].key = model + 1;
        s->cache[slot].app = model_pollux_app(s->pollux, name, strlen(name));
    }
    return s->cache[slot].app;
}

static double scaling_hook(void *ctx, const job_spec *job, uint32_t replicas, uint32_t nominal)
{
    model_scaling *s = ctx;
    if (replicas == nominal)
        return 1.0;
    int a = scaling_app(s, job->model);
    if (a >= 0 && job_spec_has(job, SIM_ATTR_BATCH_SIZE)) {
        double b = job->attr[SIM_ATTR_BATCH_SIZE];
        double t0 = model_pollux_iter_time(s->pollux, a, nominal, b);
        double t1 = model_pollux_iter_time(s->pollux, a, replicas, b);
        if (t0 > 0 && t1 > 0 && isfinite(t0 / t1))
            return t0 / t1;
    }
    return model_amdahl(s->amdahl_par, replicas) / model_amdahl(s->amdahl_par, nominal);
}

static double inner_throughput(void *ctx, const job_spec *job, uint16_t gpu_type)
{
    model_scaling *s = ctx;
    return s->inner.throughput(s->inner.ctx, job, gpu_type);
}

static double inner_interference(void *ctx, const job_spec *self, uint32_t self_milli,
                                 const sim_resident *others, uint32_t n, uint16_t gpu_type)
{
    model_scaling *s = ctx;
    return s->inner.interference(s->inner.ctx, self, self_milli, others, n, gpu_type);
}

static uint32_t inner_demand(void *ctx, const job_spec *job, uint16_t gpu_type)
{
    model_scaling *s = ctx;
    return s->inner.demand(s->inner.ctx, job, gpu_type);
}

void model_scaling_init(model_scaling *s, const model_pollux *pollux, const sim_intern *classes,
                        double amdahl_par, const sim_rate_model *inner, sim_rate_model *out)
{
    memset(s, 0, sizeof *s);
    s->pollux = pollux;
    s->classes = classes;
    s->amdahl_par = amdahl_par;
    if (inner)
        s->inner = *inner;
    memset(out, 0, sizeof *out);
    /* "<inner> scaling=pollux+amdahl(P)", or amdahl(P) alone without profiles; an inner
     * model that is "none" is left out. */
    const char *in = inner && inner->name && strcmp(inner->name, "none") != 0 ? inner->name : "";
    snprintf(s->name, sizeof s->name, "%s%sscaling=%samdahl(%g)", in, *in ? " " : "",
             pollux ? "pollux+" : "", amdahl_par);
    out->name = s->name;
    out->ctx = s;
    out->throughput = s->inner.throughput ? inner_throughput : NULL;
    out->interference = s->inner.interference ? inner_interference : NULL;
    out->demand = s->inner.demand ? inner_demand : NULL;
    out->scaling = scaling_hook;
}
