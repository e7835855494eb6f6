/*
 * quotas.c: tenant quotas for a run, and the quota metrics of the run.
 *
 * Quotas come from `--quotas FILE` (CSV tenant,quota_gpus: absolute GPUs) or from
 * `--quota-share FILE[:COLUMN]` (the cluster's GPUs divided in proportion to a numeric
 * column of a CSV whose first column names the tenants, e.g. the node counts of
 * Philly's virtual clusters). Tenant names are interned before the trace is read.
 * The metrics probe samples, at every timeseries sample, each tenant's GPU share against
 * its quota: Jain's fairness index (Jain, Chiu & Hawe, DEC-TR-301, 1984) of the
 * quota-normalised usage x_t = used_t / quota_t over the tenants with a quota and jobs in
 * flight, (sum x)^2 / (n sum x^2); the tenants above quota and below it while jobs wait;
 * per tenant, the shares of samples above, below, and below while waiting.
 */
#include "study/quotas.h"

#include "base/alloc.h"
#include "base/csvin.h"
#include "base/textout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int add_quota(study_quotas *qs, uint32_t tenant, double gpus)
{
    if (qs->n == qs->cap) {
        uint32_t ncap = qs->cap ? qs->cap * 2 : 16;
        study_quota *nq = sim_reallocarray(qs->q, ncap, sizeof *nq);
        if (!nq)
            return SIM_ENOMEM;
        qs->q = nq;
        qs->cap = ncap;
    }
    qs->q[qs->n].tenant = tenant;
    qs->q[qs->n].gpus = gpus;
    qs->q[qs->n].line = 0;
    qs->n++;
    return SIM_OK;
}

void study_quotas_free(study_quotas *qs)
{
    sim_free(qs->q);
    memset(qs, 0, sizeof *qs);
}

/* Read rows of (tenant name, number) from in, starting after the header. */
static int read_rows(study_quotas *qs, csvin *in, int32_t tcol, int32_t vcol, const char *vname,
                     sim_intern *tenants, sim_diag *d)
{
    csvin_row row;
    int st;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if (csvin_empty(&row, tcol))
            return csvin_field_error(in, &row, tcol, "tenant", "a tenant name", d);
        double x;
        if ((st = csvin_double(in, &row, vcol, vname, 0, 1e9, &x, d)) != SIM_OK)
            return st;
        uint32_t t = sim_intern_add(tenants, row.f[tcol], row.len[tcol], 0);
        if (t == SIM_INTERN_NONE)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        for (uint32_t i = 0; i < qs->n; i++)
            if (qs->q[i].tenant == t) {
                char q[128];
                csvin_quote(row.f[tcol], row.len[tcol], q, sizeof q);
                return sim_diag_set(d, SIM_EPARSE, csvin_path(in), row.line, tcol + 1,
                                    "field 'tenant': %s appears twice (first on line %ld)", q,
                                    qs->q[i].line);
            }
        if ((st = add_quota(qs, t, x)) != SIM_OK)
            return sim_diag_set(d, st, NULL, 0, 0, "out of memory");
        qs->q[qs->n - 1].line = row.line;
    }
    return st;
}

int study_quotas_read(study_quotas *qs, const char *path, sim_intern *tenants, sim_diag *d)
{
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    static const char *const names[] = {"tenant", "quota_gpus"};
    int32_t ix[2];
    csvin_row row;
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0,
                          "empty file: expected the header tenant,quota_gpus");
    if (st < 0 || (st = csvin_map_header(in, &row, names, 2, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int k = 0; k < 2; k++)
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s'; expected tenant,quota_gpus", names[k]);
            goto out;
        }
    st = read_rows(qs, in, ix[0], ix[1], "quota_gpus", tenants, d);
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

int study_quota_share_read(study_quotas *qs, const char *spec, sim_intern *tenants,
                           uint64_t total_gpus, sim_diag *d)
{
    char path[1024];
    const char *column = NULL;
    if (strlen(spec) >= sizeof path)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "--quota-share: the file name is too long");
    snprintf(path, sizeof path, "%s", spec);
    /* FILE:COLUMN, unless the whole argument names an existing file. */
    char *colon = strrchr(path, ':');
    if (colon && access(path, F_OK) != 0) {
        *colon = '\0';
        column = colon + 1;
    }
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    csvin_row row;
    int32_t vcol = 1;
    char vname[128] = "";
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0,
                          "empty file: expected a header naming the tenant column first");
    if (st < 0)
        goto out;
    if (column) {
        vcol = -1;
        for (uint32_t c = 0; c < row.n; c++)
            if (strcmp(row.f[c], column) == 0)
                vcol = (int32_t)c;
        if (vcol < 1) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header has no weight column '%s' after the tenant column", column);
            goto out;
        }
    } else if (row.n < 2) {
        st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                          "header has %u column(s); expected the tenant column and a weight "
                          "column",
                          row.n);
        goto out;
    }
    snprintf(vname, sizeof vname, "%s", row.f[vcol]);
    uint32_t first = qs->n;
    if ((st = read_rows(qs, in, 0, vcol, vname, tenants, d)) < 0)
        goto out;
    double sum = 0;
    for (uint32_t i = first; i < qs->n; i++)
        sum += qs->q[i].gpus;
    if (!(sum > 0)) {
        st = sim_diag_set(d, SIM_EPARSE, path, 0, 0, "the weights in column '%s' sum to 0", vname);
        goto out;
    }
    for (uint32_t i = first; i < qs->n; i++)
        qs->q[i].gpus = (double)total_gpus * qs->q[i].gpus / sum;
    st = SIM_OK;
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

/* ---- Metrics probe ------------------------------------------------------------------- */

static const char *const probe_names[3] = {"jain_quota", "tenants_over_quota",
                                           "tenants_under_quota_waiting"};

static bool grow(tenant_probe *p, uint32_t n)
{
    if (n <= p->cap)
        return true;
    uint32_t ncap = p->cap ? p->cap : 16;
    while (ncap < n)
        ncap *= 2;
    tenant_acc *na = sim_reallocarray(p->acc, ncap, sizeof *na);
    if (!na)
        return false;
    memset(na + p->cap, 0, (ncap - p->cap) * sizeof *na);
    p->acc = na;
    p->cap = ncap;
    return true;
}

static void probe_sample(void *ctx, const sim_view *v, double *out)
{
    tenant_probe *p = ctx;
    out[0] = 1.0;
    out[1] = out[2] = 0;
    if (!grow(p, v->n_tenants)) {
        p->oom = true;
        return;
    }
    double s1 = 0, s2 = 0;
    uint32_t n = 0;
    p->samples++;
    for (uint32_t t = 0; t < v->n_tenants; t++) {
        tenant_acc *a = &p->acc[t];
        double q = v->tenant_quota_gpus[t], used = (double)v->tenant_used_milli[t] / 1000.0;
        a->used_sum += used;
        if (!(q > 0))
            continue;
        if (used > q + 1e-9) {
            a->above++;
            out[1]++;
        } else if (used < q - 1e-9) {
            a->below++;
            if (v->tenant_pending[t]) {
                a->below_waiting++;
                out[2]++;
            }
        }
        double x = used / q;
        if ((v->tenant_pending[t] || v->tenant_running[t]) && isfinite(x)) {
            s1 += x;
            s2 += x * x;
            n++;
        }
    }
    if (n && s2 > 0)
        out[0] = s1 * s1 / ((double)n * s2);
    else if (n)
        out[0] = 1.0; /* every active tenant holds nothing: equal shares */
    p->jain_sum += out[0];
}

void study_tenant_probe_init(tenant_probe *p)
{
    memset(p, 0, sizeof *p);
    p->probe.n = 3;
    p->probe.names = probe_names;
    p->probe.ctx = p;
    p->probe.sample = probe_sample;
}

void study_tenant_probe_fini(tenant_probe *p)
{
    sim_free(p->acc);
    memset(p, 0, sizeof *p);
}

static double frac(uint64_t k, uint64_t n)
{
    return n ? (double)k / (double)n : 0;
}

bool study_tenant_probe_json(const tenant_probe *p, const sim_view *v, FILE *f)
{
    double jain = p->samples ? p->jain_sum / (double)p->samples : 1.0;
    /* JSON has no NaN: a non-finite mean (none is expected) is written as null. */
    fprintf(f, "\"quota_metrics\": {\"samples\": %llu, \"jain_mean\": ",
            (unsigned long long)p->samples);
    if (isfinite(jain))
        fprintf(f, "%.6f", jain);
    else
        fputs("null", f);
    fputs(", \"tenants\": {", f);
    bool first = true;
    for (uint32_t t = 0; t < v->n_tenants && t < p->cap; t++) {
        const tenant_acc *a = &p->acc[t];
        double q = v->tenant_quota_gpus[t];
        if (!(q > 0) && !(a->used_sum > 0))
            continue;
        fprintf(f, "%s\n    ", first ? "" : ",");
        sim_json_put_string(f, v->tenant_name(v, t));
        fprintf(f,
                ": {\"quota_gpus\": %.6f, \"used_gpus_mean\": %.6f, \"above_quota\": %.6f, "
                "\"below_quota\": %.6f, \"below_quota_waiting\": %.6f}",
                q, p->samples ? a->used_sum / (double)p->samples : 0, frac(a->above, p->samples),
                frac(a->below, p->samples), frac(a->below_waiting, p->samples));
        first = false;
    }
    fputs(first ? "}}" : "\n  }}", f);
    return !ferror(f);
}
