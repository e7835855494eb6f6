/*
 * quotas.h: tenant quotas of a run (--quotas, --quota-share) and the probe that
 * measures how tenants' GPU usage compares with their quotas (see quotas.c).
 */
#ifndef STUDY_QUOTAS_H
#define STUDY_QUOTAS_H

#include "sim/engine.h"
#include "base/intern.h"
#include "sim/types.h"

#include <stdio.h>

typedef struct study_quota {
    uint32_t tenant; /* interned tenant id */
    double gpus;     /* quota, GPUs */
    long line;       /* line of the file that gave it */
} study_quota;

typedef struct study_quotas {
    study_quota *q;
    uint32_t n, cap;
} study_quotas;

/* Append the quotas of a CSV `tenant,quota_gpus` (header required, columns in any
 * order); tenant names are interned. Errors: SIM_EIO, SIM_EPARSE (file:line:column: a
 * missing column, an empty tenant, a quota that is not a number in [0, 1e9], a tenant
 * named twice), SIM_ENOMEM. */
int study_quotas_read(study_quotas *qs, const char *path, sim_intern *tenants, sim_diag *d);

/* Append quotas dividing total_gpus in proportion to a weight column: spec is FILE or
 * FILE:COLUMN (default: the second column); the first column names the tenants.
 * Errors as above, plus a missing weight column and weights summing to 0. */
int study_quota_share_read(study_quotas *qs, const char *spec, sim_intern *tenants,
                           uint64_t total_gpus, sim_diag *d);

void study_quotas_free(study_quotas *qs);

/* Per-tenant accumulators of the probe. */
typedef struct tenant_acc {
    uint64_t above, below, below_waiting; /* samples above / below quota / below and waiting */
    double used_sum;                      /* sum over samples of the GPU share held, GPUs */
} tenant_acc;

/* The quota metrics probe: timeseries columns jain_quota, tenants_over_quota,
 * tenants_under_quota_waiting, and per-tenant shares of time for summary.json. */
typedef struct tenant_probe {
    sim_probe probe; /* pass &probe to the engine configuration */
    tenant_acc *acc; /* per tenant id, grown at new tenants */
    uint32_t cap;
    uint64_t samples;
    double jain_sum;
    bool oom; /* an accumulator could not grow: the figures are incomplete */
} tenant_probe;

void study_tenant_probe_init(tenant_probe *p);
void study_tenant_probe_fini(tenant_probe *p);
/* Write the "quota_metrics" member (for summary.json's extra) to f; false on error. */
bool study_tenant_probe_json(const tenant_probe *p, const sim_view *v, FILE *f);

#endif
