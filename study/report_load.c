/*
 * report_load.c: read one run directory for the report — summary.json and run.json
 * with json-c (strict mode), jobs.csv and timeseries.csv with csvin. Per-job values
 * are reduced as they are read: JCT and wait go into one buffer each, sorted once and
 * kept as a grid of 2001 quantiles (p = k/2000, the order statistic at index
 * floor(p * (n - 1))); sizes and tenants are kept as sums. A missing or malformed file
 * makes the run "not ok" with the file:line:column reason; it is not an error.
 *
 * Fairness is Jain's index J = (sum x)^2 / (n sum x^2) over the tenants with a finished
 * job (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984): x is a tenant's GPU-hours divided by
 * its quota when every such tenant has a quota, else its mean bounded slowdown
 * max(1, JCT / max(work, 10 s)) (D. Feitelson, "Metrics for parallel job scheduling
 * and their convergence", JSSPP 2001).
 */
#include "study/report_int.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const report_class_name[RC_COUNT] = {"CPU only", "< 1 GPU", "1 GPU", "2-4 GPUs",
                                                 "5-8 GPUs", "> 8 GPUs"};

/* Okabe & Ito's colour-blind-safe colours, then Tol's "muted" scheme. */
const char *const report_palette[REPORT_MAX_POLICIES] = {
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255"};

typedef struct dbuf {
    double *v;
    size_t n, cap;
} dbuf;

static bool dbuf_push(dbuf *b, double x)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        double *nv = sim_reallocarray(b->v, cap, sizeof *nv);
        if (!nv)
            return false;
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = x;
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sort b and keep REPORT_QGRID quantiles of it in q. */
static void quantile_grid(dbuf *b, double *q)
{
    if (b->n == 0) {
        for (int k = 0; k < REPORT_QGRID; k++)
            q[k] = NAN;
        return;
    }
    qsort(b->v, b->n, sizeof *b->v, cmp_double);
    for (int k = 0; k < REPORT_QGRID; k++) {
        size_t i = (size_t)((double)k / (REPORT_QGRID - 1) * (double)(b->n - 1));
        q[k] = b->v[i < b->n ? i : b->n - 1];
    }
}

static report_class class_of(double num_gpus, double gpu_milli)
{
    double g = num_gpus * gpu_milli / 1000.0;
    if (num_gpus <= 0 || g <= 0)
        return RC_CPU;
    if (g < 1)
        return RC_FRAC;
    if (g <= 1)
        return RC_ONE;
    if (g <= 4)
        return RC_2_4;
    if (g <= 8)
        return RC_5_8;
    return RC_MANY;
}

static report_tenant *tenant_slot(report *r, report_run *run, const char *name, size_t len)
{
    uint32_t id = sim_intern_add(r->tenants, name, len, 0);
    if (id == SIM_INTERN_NONE)
        return NULL;
    if (id >= run->n_tenants) {
        uint32_t n = id + 16;
        report_tenant *t = sim_reallocarray(run->tenants, n, sizeof *t);
        if (!t)
            return NULL;
        memset(t + run->n_tenants, 0, (n - run->n_tenants) * sizeof *t);
        run->tenants = t;
        run->n_tenants = n;
    }
    if (len > 0)
        r->has_tenants = true;
    return &run->tenants[id];
}

/* Read and parse the JSON file at path with json-c in strict mode (RFC 8259; a key
 * given twice keeps its last value). Errors: SIM_EIO (cannot read), SIM_EPARSE (with
 * the line and column where the parser stopped), SIM_ENOMEM. */
static int json_load(json_object **out, const char *path, sim_diag *d)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 14, n = 0, k;
    char *buf = sim_malloc(cap);
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = sim_reallocarray(buf, cap, 2);
            if (!nb) {
                sim_free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool err = ferror(f);
    fclose(f);
    if (!buf)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    if (err) {
        sim_free(buf);
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot read");
    }
    int st = SIM_OK;
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        sim_free(buf);
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *o = n > INT32_MAX ? NULL : json_tokener_parse_ex(tok, buf, (int)n);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (e == json_tokener_success && o)
        while (end < n && strchr(" \t\r\n", buf[end]))
            end++;
    if (n > INT32_MAX || e != json_tokener_success || !o || end < n) {
        /* The position where the parser stopped, as line and column. */
        if (end > n)
            end = n;
        long line = 1;
        size_t line_start = 0;
        for (size_t i = 0; i < end; i++)
            if (buf[i] == '\n') {
                line++;
                line_start = i + 1;
            }
        const char *what = n > INT32_MAX                ? "the file is too large"
                           : e == json_tokener_continue ? "unexpected end of the text"
                           : e != json_tokener_success  ? json_tokener_error_desc(e)
                                                        : "text after the value";
        st = sim_diag_set(d, SIM_EPARSE, path, line, (int)(end - line_start) + 1, "JSON: %s",
                          what);
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    sim_free(buf);
    *out = o;
    return st;
}

/* The value at a dotted path from the root ("jct_s.p95"), or NULL when absent. */
static json_object *json_find(json_object *root, const char *path)
{
    json_object *o = root;
    char key[256];
    for (const char *p = path; o;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len >= sizeof key || !json_object_is_type(o, json_type_object))
            return NULL;
        memcpy(key, p, len);
        key[len] = '\0';
        json_object *next;
        if (!json_object_object_get_ex(o, key, &next))
            return NULL;
        o = next;
        if (!dot)
            return o;
        p = dot + 1;
    }
    return NULL;
}

/* A number, or null as NaN: true with *out set; false for any other value. */
static bool json_num(json_object *v, double *out)
{
    if (!v) /* json-c's null */
        *out = NAN;
    else if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
        *out = json_object_get_double(v);
    else
        return false;
    return true;
}

/* The number (or null) at path: true with *out set; false when absent or another type. */
static bool json_number_at(json_object *root, const char *path, double *out)
{
    json_object *v = json_find(root, path);
    if (!v) {
        /* Absent, or present as null. */
        json_object *parent = root;
        const char *dot = strrchr(path, '.');
        if (dot) {
            char pp[256];
            snprintf(pp, sizeof pp, "%.*s", (int)(dot - path), path);
            parent = json_find(root, pp);
        }
        const char *key = dot ? dot + 1 : path;
        if (!parent || !json_object_is_type(parent, json_type_object) ||
            !json_object_object_get_ex(parent, key, NULL))
            return false;
    }
    return json_num(v, out);
}

static int need_number(json_object *j, const char *path, double *out, const char *file,
                       sim_diag *d)
{
    if (json_number_at(j, path, out))
        return SIM_OK;
    return sim_diag_set(d, SIM_EPARSE, file, 0, 0, "no number at '%s'", path);
}

static int load_summary(report *r, report_run *run, sim_diag *d)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/summary.json", run->spec.dir);
    json_object *j;
    int st = json_load(&j, path, d);
    if (st != SIM_OK)
        return st;
    static const struct {
        report_metric m;
        const char *path;
    } nums[] = {
        {RM_JOBS_DONE, "jobs.done"},       {RM_JOBS_REJECTED, "jobs.rejected"},
        {RM_JOBS_UNFINISHED, "jobs.unfinished"},
        {RM_JCT_MEAN, "jct_s.mean"},       {RM_JCT_MEDIAN, "jct_s.median"},
        {RM_JCT_P95, "jct_s.p95"},         {RM_JCT_P99, "jct_s.p99"},
        {RM_WAIT_MEAN, "wait_s.mean"},     {RM_WAIT_MEDIAN, "wait_s.median"},
        {RM_WAIT_P95, "wait_s.p95"},       {RM_WAIT_P99, "wait_s.p99"},
        {RM_MAKESPAN, "makespan_s"},       {RM_UTIL_ALLOC, "gpu_util.allocated"},
        {RM_UTIL_EFF, "gpu_util.effective"}, {RM_PREEMPTIONS, "preemptions"},
        {RM_SLO_VIOLATIONS, "slo.violations"},
    };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0] && st == SIM_OK; k++)
        st = need_number(j, nums[k].path, &run->m[nums[k].m], path, d);
    static const char *const el_paths[REL_COUNT] = {
        [REL_OFFLINE_JCT] = "elastic.offline_jct_mean_s",
        [REL_SCALE_EVENTS] = "elastic.scale_events",
        [REL_SCALE_LOST] = "elastic.scale_in_lost_work_s",
        [REL_DEMAND_GPUH] = "online.demand_gpu_hours",
        [REL_SHORT_GPU_S] = "online.shortfall_gpu_seconds",
        [REL_SHORT_PERIODS] = "online.shortfall_periods",
        [REL_CPU_UTIL] = "elastic.cpu_util_allocated",
    };
    for (int k = 0; k < REL_COUNT; k++)
        if (!json_number_at(j, el_paths[k], &run->el[k]))
            run->el[k] = NAN;
    double nodes = 0, gpus = 0;
    if (st == SIM_OK && (st = need_number(j, "slo.jobs", &run->slo_jobs, path, d)) == SIM_OK &&
        (st = need_number(j, "cluster.nodes", &nodes, path, d)) == SIM_OK)
        st = need_number(j, "cluster.gpus", &gpus, path, d);
    if (st != SIM_OK)
        goto out;
    /* Job groups: only runs of traces with a group column have them. */
    json_object *jg = json_find(j, "job_groups");
    if (jg && json_object_is_type(jg, json_type_object)) {
        if ((st = need_number(j, "job_groups.done", &run->m[RM_GROUPS_DONE], path, d)) != SIM_OK)
            goto out;
        static const struct {
            report_metric m;
            const char *path;
        } gnums[] = {{RM_GROUP_MEAN, "job_groups.mean_s"},
                     {RM_GROUP_P50, "job_groups.p50_s"},
                     {RM_GROUP_P99, "job_groups.p99_s"}};
        for (size_t k = 0; k < sizeof gnums / sizeof gnums[0]; k++)
            if (!json_number_at(j, gnums[k].path, &run->m[gnums[k].m]))
                run->m[gnums[k].m] = NAN; /* null (no group is done) reads as NaN too */
    }
    run->nodes = (uint32_t)nodes;
    run->gpus = (uint32_t)gpus;
    json_object *pv = json_find(j, "policy");
    const char *policy = pv && json_object_is_type(pv, json_type_string)
                             ? json_object_get_string(pv)
                             : NULL;
    snprintf(run->summary_policy, sizeof run->summary_policy, "%s", policy ? policy : "");
    /* The fragmentation probe: the first probe average named frag*_mean. */
    json_object *probes = json_find(j, "probes");
    if (probes && json_object_is_type(probes, json_type_object)) {
        json_object_object_foreach(probes, key, x)
        {
            size_t kl = strlen(key);
            double v;
            if (strncasecmp(key, "frag", 4) == 0 && kl > 5 && strcmp(key + kl - 5, "_mean") == 0 &&
                json_num(x, &v)) {
                snprintf(run->frag_name, sizeof run->frag_name, "%.*s", (int)(kl - 5), key);
                run->m[RM_FRAG] = v;
                break;
            }
        }
    }
    json_object *tn = json_find(j, "tenants");
    if (!tn || !json_object_is_type(tn, json_type_object)) {
        st = sim_diag_set(d, SIM_EPARSE, path, 0, 0, "no object at 'tenants'");
        goto out;
    }
    json_object_object_foreach(tn, name, x)
    {
        report_tenant *t = tenant_slot(r, run, name, strlen(name));
        if (!t) {
            st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
            goto out;
        }
        static const char *const keys[] = {"done", "jct_mean", "wait_mean", "gpu_hours",
                                           "quota_gpus"};
        double *dst[] = {&t->done, &t->jct_mean_s, &t->wait_mean_s, &t->gpu_hours,
                         &t->quota_gpus};
        for (int k = 0; k < 5; k++) {
            json_object *v = NULL;
            bool has = x && json_object_is_type(x, json_type_object) &&
                       json_object_object_get_ex(x, keys[k], &v);
            if (!has || !json_num(v, dst[k])) {
                st = sim_diag_set(d, SIM_EPARSE, path, 0, 0, "tenant '%s': no number '%s'",
                                  name, keys[k]);
                goto out;
            }
        }
        t->present = true;
    }
out:
    json_object_put(j);
    return st;
}

enum { J_STATUS, J_TENANT, J_SUBMIT, J_WAIT, J_JCT, J_WORK, J_NGPU, J_MILLI, J_N };

static int load_jobs(report *r, report_run *run, sim_diag *d)
{
    static const char *const names[J_N] = {"status", "tenant", "submit_s", "wait_s",
                                           "jct_s",  "work_s", "num_gpus", "gpu_milli"};
    char path[1200];
    snprintf(path, sizeof path, "%s/jobs.csv", run->spec.dir);
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    dbuf jct = {0}, wait = {0};
    csvin_row row;
    int32_t ix[J_N];
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected the jobs.csv header");
    if (st < 0 || (st = csvin_map_header(in, &row, names, J_N, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < J_N; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s' (is this a clustersim jobs.csv?)",
                              names[k]);
            goto out;
        }
    run->first_submit_s = INFINITY;
    run->last_submit_s = -INFINITY;
    while ((st = csvin_next(in, &row, d)) == 1) {
        double submit, work, ngpu, milli, w = 0, j = 0;
        if ((st = csvin_double(in, &row, ix[J_SUBMIT], "submit_s", 0, 1e300, &submit, d)) ||
            (st = csvin_double(in, &row, ix[J_WORK], "work_s", 0, 1e300, &work, d)) ||
            (st = csvin_double(in, &row, ix[J_NGPU], "num_gpus", 0, 1e9, &ngpu, d)) ||
            (st = csvin_double(in, &row, ix[J_MILLI], "gpu_milli", 0, 1000, &milli, d)))
            goto out;
        const char *status = (uint32_t)ix[J_STATUS] < row.n ? row.f[ix[J_STATUS]] : "";
        bool done = strcmp(status, "done") == 0;
        if (!done && strcmp(status, "rejected") != 0 && strcmp(status, "unfinished") != 0) {
            st = csvin_field_error(in, &row, ix[J_STATUS], "status",
                                   "done, rejected or unfinished", d);
            goto out;
        }
        bool started = !csvin_empty(&row, ix[J_WAIT]);
        if (started &&
            (st = csvin_double(in, &row, ix[J_WAIT], "wait_s", 0, 1e300, &w, d)) != SIM_OK)
            goto out;
        if (done && (st = csvin_double(in, &row, ix[J_JCT], "jct_s", 0, 1e300, &j, d)) != SIM_OK)
            goto out;
        run->jobs_total++;
        if (submit < run->first_submit_s)
            run->first_submit_s = submit;
        if (submit > run->last_submit_s)
            run->last_submit_s = submit;
        report_class c = class_of(ngpu, milli);
        run->class_jobs[c]++;
        run->req_gpu_s += work * ngpu * milli / 1000.0;
        if (started && !dbuf_push(&wait, w))
            goto nomem;
        if (!done)
            continue;
        run->jobs_done++;
        run->class_done[c]++;
        run->class_jct_sum[c] += j;
        if (!dbuf_push(&jct, j))
            goto nomem;
        const char *tname = (uint32_t)ix[J_TENANT] < row.n ? row.f[ix[J_TENANT]] : "";
        report_tenant *t = tenant_slot(r, run, tname, strlen(tname));
        if (!t)
            goto nomem;
        double slow = j / fmax(work, REPORT_SLOWDOWN_FLOOR_S);
        t->slowdown_sum += slow > 1 ? slow : 1;
        t->slowdown_n++;
    }
    if (st < 0)
        goto out;
    st = SIM_OK;
    run->waits = wait.n;
    quantile_grid(&jct, run->jct_q);
    quantile_grid(&wait, run->wait_q);
    goto out;
nomem:
    st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
out:
    sim_free(jct.v);
    sim_free(wait.v);
    csvin_close(in);
    return st;
}

enum { T_TIME, T_PENDING, T_ALLOC, T_EFF, T_N };

static int load_timeseries(report_run *run, sim_diag *d)
{
    static const char *const names[T_N] = {"time_s", "pending", "alloc_ratio",
                                           "effective_ratio"};
    char path[1200];
    snprintf(path, sizeof path, "%s/timeseries.csv", run->spec.dir);
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    bool *unknown = sim_calloc(CSVIN_MAX_FIELDS, sizeof *unknown);
    dbuf col[T_N + REPORT_MAX_FRAG] = {{0}};
    int32_t ix[T_N], fix[REPORT_MAX_FRAG];
    csvin_row row;
    if (!unknown) {
        st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
        goto out;
    }
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0,
                          "empty file: expected the timeseries.csv header");
    if (st < 0 || (st = csvin_map_header(in, &row, names, T_N, ix, unknown, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < T_N; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s' (is this a clustersim timeseries.csv?)",
                              names[k]);
            goto out;
        }
    /* Model columns whose name begins with "frag" are fragmentation measures; the online
     * services' demand and grant are kept beside them. */
    for (uint32_t c = 0; c < row.n && c < CSVIN_MAX_FIELDS && run->n_frag < REPORT_MAX_FRAG;
         c++)
        if (unknown[c] &&
            (strncasecmp(row.f[c], "frag", 4) == 0 || strcmp(row.f[c], "online_demand") == 0 ||
             strcmp(row.f[c], "online_granted") == 0)) {
            snprintf(run->frag_col[run->n_frag], sizeof run->frag_col[0], "%s", row.f[c]);
            fix[run->n_frag++] = (int32_t)c;
        }
    while ((st = csvin_next(in, &row, d)) == 1) {
        for (uint32_t k = 0; k < T_N + run->n_frag; k++) {
            int32_t c = k < T_N ? ix[k] : fix[k - T_N];
            const char *nm = k < T_N ? names[k] : run->frag_col[k - T_N];
            double x;
            if ((st = csvin_double(in, &row, c, nm, -1e300, 1e300, &x, d)) != SIM_OK)
                goto out;
            if (!dbuf_push(&col[k], x)) {
                st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
                goto out;
            }
        }
    }
    if (st < 0)
        goto out;
    st = SIM_OK;
    run->n_samples = col[T_TIME].n;
    run->ts_time = col[T_TIME].v;
    run->ts_pending = col[T_PENDING].v;
    run->ts_alloc = col[T_ALLOC].v;
    run->ts_eff = col[T_EFF].v;
    for (uint32_t k = 0; k < run->n_frag; k++)
        run->ts_frag[k] = col[T_N + k].v;
    memset(col, 0, sizeof col);
out:
    for (int k = 0; k < T_N + REPORT_MAX_FRAG; k++)
        sim_free(col[k].v);
    sim_free(unknown);
    csvin_close(in);
    return st;
}

/* How tenants.csv was written: run.json's "tenant_rows"; in a run.json from before that
 * member, the --tenant-rows of its command (the last value; "all" when not given). */
static int tenant_rows_mode(report_run *run, json_object *j, const char *path, sim_diag *d)
{
    const char *mode = NULL;
    json_object *v = json_find(j, "tenant_rows");
    if (v) {
        if (!json_object_is_type(v, json_type_string))
            return sim_diag_set(d, SIM_EPARSE, path, 0, 0,
                                "member 'tenant_rows': expected \"all\" or \"changed\"");
        mode = json_object_get_string(v);
    } else {
        json_object *cmd = json_find(j, "command");
        size_t n =
            cmd && json_object_is_type(cmd, json_type_array) ? json_object_array_length(cmd) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *a = json_object_array_get_idx(cmd, i);
            const char *s =
                a && json_object_is_type(a, json_type_string) ? json_object_get_string(a) : "";
            static const char opt[] = "--tenant-rows";
            if (strncmp(s, opt, sizeof opt - 1) != 0)
                continue;
            if (s[sizeof opt - 1] == '=') {
                mode = s + sizeof opt;
            } else if (s[sizeof opt - 1] == '\0' && i + 1 < n) {
                json_object *b = json_object_array_get_idx(cmd, ++i);
                mode =
                    b && json_object_is_type(b, json_type_string) ? json_object_get_string(b) : "";
            }
        }
        if (!mode)
            mode = "all";
    }
    if (strcmp(mode, "all") != 0 && strcmp(mode, "changed") != 0) {
        char q[128];
        csvin_quote(mode, strlen(mode), q, sizeof q);
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0,
                            "%s: expected \"all\" or \"changed\", got %s",
                            v ? "member 'tenant_rows'" : "the command's --tenant-rows", q);
    }
    run->tenant_rows_changed = strcmp(mode, "changed") == 0;
    return SIM_OK;
}

/* run.json is optional (older runs may lack it); when present it must be valid. */
static int load_runjson(report_run *run, sim_diag *d)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/run.json", run->spec.dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return SIM_OK;
    fclose(f);
    json_object *j;
    int st = json_load(&j, path, d);
    if (st != SIM_OK)
        return st;
    double ev;
    run->events = json_number_at(j, "events", &ev) ? ev : NAN;
    if ((st = tenant_rows_mode(run, j, path, d)) != SIM_OK) {
        json_object_put(j);
        return st;
    }
    json_object *in = json_find(j, "inputs");
    if (in && json_object_is_type(in, json_type_array))
        for (size_t c = 0; c < json_object_array_length(in); c++) {
            if (run->n_inputs == REPORT_MAX_INPUTS) {
                run->n_inputs_more++;
                continue;
            }
            json_object *e = json_object_array_get_idx(in, c), *role, *p, *b, *crc;
            if (!e || !json_object_is_type(e, json_type_object) ||
                !json_object_object_get_ex(e, "role", &role) ||
                !json_object_object_get_ex(e, "path", &p))
                continue;
            char(*dst)[512] = run->inputs[run->n_inputs++];
            snprintf(dst[0], sizeof dst[0], "%s", role ? json_object_get_string(role) : "");
            snprintf(dst[1], sizeof dst[1], "%s", p ? json_object_get_string(p) : "");
            if (json_object_object_get_ex(e, "bytes", &b) &&
                json_object_object_get_ex(e, "crc32", &crc))
                snprintf(dst[2], sizeof dst[2], "%.0f bytes, CRC-32 %s",
                         b ? json_object_get_double(b) : 0.0,
                         crc ? json_object_get_string(crc) : "");
            else
                snprintf(dst[2], sizeof dst[2], "not readable when the run started");
        }
    json_object_put(j);
    return SIM_OK;
}

static void compute_fairness(report_run *run)
{
    double sx = 0, sxx = 0;
    uint32_t n = 0;
    bool all_quota = true;
    for (uint32_t t = 1; t < run->n_tenants; t++) {
        const report_tenant *x = &run->tenants[t];
        if (x->present && x->done > 0 && !(x->quota_gpus > 0))
            all_quota = false;
    }
    run->fair_by_quota = all_quota;
    for (uint32_t t = 1; t < run->n_tenants; t++) {
        const report_tenant *x = &run->tenants[t];
        if (!x->present || !(x->done > 0) || x->slowdown_n == 0)
            continue;
        double v = all_quota ? x->gpu_hours / x->quota_gpus
                             : x->slowdown_sum / (double)x->slowdown_n;
        sx += v;
        sxx += v * v;
        n++;
    }
    run->m[RM_FAIRNESS] = n >= 2 && sxx > 0 ? sx * sx / ((double)n * sxx) : NAN;
}

int report__load_run(report *r, report_run *run)
{
    sim_diag d = {0};
    for (int k = 0; k < RM_COUNT; k++)
        run->m[k] = NAN;
    int st = load_summary(r, run, &d);
    if (st == SIM_OK)
        st = load_jobs(r, run, &d);
    if (st == SIM_OK)
        st = load_timeseries(run, &d);
    if (st == SIM_OK)
        st = load_runjson(run, &d);
    if (st != SIM_OK) {
        run->ok = false;
        run->diag = d;
        run->load_status = st;
        sim_diag_format(&d, run->error, sizeof run->error);
        return st == SIM_ENOMEM ? st : SIM_OK;
    }
    compute_fairness(run);
    run->ok = true;
    return SIM_OK;
}

void report__free_run(report_run *run)
{
    sim_free(run->tenants);
    sim_free(run->ts_time);
    sim_free(run->ts_pending);
    sim_free(run->ts_alloc);
    sim_free(run->ts_eff);
    for (uint32_t k = 0; k < REPORT_MAX_FRAG; k++)
        sim_free(run->ts_frag[k]);
    memset(run, 0, sizeof *run);
}

report_unit report__unit_for(double max_s)
{
    if (!(max_s >= 120))
        return (report_unit){"s", 1};
    if (max_s < 2 * 3600.0)
        return (report_unit){"min", 60};
    if (max_s < 3 * 86400.0)
        return (report_unit){"h", 3600};
    return (report_unit){"d", 86400};
}

typedef struct tenant_rank {
    uint32_t id;
    double gpuh;
    const char *name;
} tenant_rank;

static int cmp_rank(const void *a, const void *b)
{
    const tenant_rank *x = a, *y = b;
    if (x->gpuh != y->gpuh)
        return x->gpuh > y->gpuh ? -1 : 1;
    return strcmp(x->name, y->name);
}

long report__rank_tenants(const report *r, uint32_t *ids)
{
    uint32_t nt = sim_intern_count(r->tenants);
    tenant_rank *rank = sim_calloc(nt ? nt : 1, sizeof *rank);
    if (!rank)
        return -1;
    size_t n = 0;
    for (uint32_t t = 1; t < nt; t++) {
        double s = 0;
        bool seen = false;
        for (size_t i = 0; i < r->n_runs; i++) {
            const report_run *run = &r->runs[i];
            if (run->ok && t < run->n_tenants && run->tenants[t].present) {
                seen = true;
                if (isfinite(run->tenants[t].gpu_hours))
                    s += run->tenants[t].gpu_hours;
            }
        }
        if (seen)
            rank[n++] = (tenant_rank){t, s, sim_intern_name(r->tenants, t)};
    }
    qsort(rank, n, sizeof *rank, cmp_rank);
    for (size_t i = 0; i < n; i++)
        ids[i] = rank[i].id;
    sim_free(rank);
    return (long)n;
}
