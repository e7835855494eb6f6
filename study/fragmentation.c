/*
 * fragmentation.c: the run's target workload and its fragmentation probe. The workload
 * (policies/frag.h) is the popularity of each task shape — one replica's CPU, memory,
 * GPU count, share per GPU and allowed GPU types — among the jobs of the trace, counted
 * by the policies' frag_builder. It is built only when the policy or the probe needs
 * it: by a first pass over the trace (shapes only: memory grows with the number of
 * distinct shapes, not with the trace), or, when the trace cannot be read twice
 * (standard input) or the caller asks for it, from the jobs read so far. The probe adds
 * the cluster's fragmentation in GPUs and as a share of the idle GPU capacity to every
 * sample.
 */
#include "study/fragmentation.h"

#include "models/catalog.h"

#include "base/alloc.h"
#include "traces/cluster.h"
#include "traces/trace.h"

#include <string.h>

static const char *const frag_names[2] = {"frag_gpus", "frag_ratio"};

static void frag_sample(void *ctx, const sim_view *v, double *out)
{
    study_frag *f = ctx;
    double frag, idle;
    frag_meter_measure(f->meter, v, &frag, &idle);
    out[0] = frag;
    out[1] = idle > 0 ? frag / idle : 0;
}

int study_frag_init(study_frag *f, const cluster_spec *cl, const uint64_t *type_mem,
                    uint32_t n_types, sim_diag *d)
{
    memset(f, 0, sizeof *f);
    uint64_t gpus = cluster_spec_gpus(cl);
    if (gpus >= UINT32_MAX / 2)
        return sim_diag_set(d, SIM_ELIMIT, NULL, 0, 0, "the cluster has too many GPUs");
    if (frag_workload_create(&f->wl, n_types) != SIM_OK ||
        frag_meter_create(&f->meter, f->wl, cl->n_nodes, (uint32_t)gpus) != SIM_OK) {
        study_frag_fini(f);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    frag_builder_init(&f->builder, f->wl, cl, type_mem);
    f->probe = (sim_probe){.n = 2, .names = frag_names, .ctx = f, .sample = frag_sample};
    return SIM_OK;
}

void study_frag_fini(study_frag *f)
{
    frag_meter_destroy(f->meter);
    frag_workload_destroy(f->wl);
    memset(f, 0, sizeof *f);
}

int study_frag_add_job(study_frag *f, const job_spec *j, sim_diag *d)
{
    return frag_builder_add_job(&f->builder, j, d);
}

int study_frag_scan(study_frag *f, const run_args *a, sim_intern *tenants, sim_intern *models,
                    const sim_intern *gpu_types, sim_diag *d)
{
    trace_reader *r = NULL;
    trace_gen *g = NULL;
    int st;
    if (a->trace) {
        /* Only the requests matter here; the run's own read checks everything else.
         * Nothing else runs yet: the other core inflates while this one parses. */
        trace_options topt = {.format = a->format,
                              .skip_bad_rows = a->skip_bad_rows,
                              .shapes_only = true,
                              .read_ahead = true,
                              .tenants = tenants,
                              .models = models,
                              .gpu_types = gpu_types,
                              .opts = a->trace_opts,
                              .n_opts = a->n_trace_opts,
                              .data_dir = model_data_dir()};
        st = trace_reader_open(&r, a->trace, &topt, d);
    } else {
        st = trace_gen_create(&g, a->gen, tenants, models, gpu_types, d);
    }
    if (st != SIM_OK)
        return st;
    job_spec j;
    while ((st = r ? trace_reader_next(r, &j, d) : trace_gen_next(g, &j, d)) == 1)
        if ((st = study_frag_add_job(f, &j, d)) != SIM_OK)
            break;
    trace_reader_close(r);
    trace_gen_destroy(g);
    return st < 0 ? st : SIM_OK;
}
