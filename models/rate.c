/*
 * rate.c: the sim_rate_model adapter (see rate.h). Class lookups go through a
 * direct-mapped cache keyed by the run's model-class id, filled on first use, so the
 * hooks never allocate; the residents' classes and activities go into buffers sized
 * for the most residents a GPU can have (one per milli-GPU).
 */
#include "models/rate.h"

#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CLASS_CACHE 4096

typedef struct class_slot {
    uint32_t key; /* model id + 1; 0 = empty */
    uint32_t tp;  /* throughput class or MODEL_CLASS_NONE */
    uint32_t ifc; /* interference class or MODEL_ICLASS_NONE */
} class_slot;

struct model_rate {
    const model_catalog *cat;
    const sim_intern *classes;
    model_throughput *tp;
    model_interference *im;
    bool use_tp;
    uint16_t default_ref;
    char name[160];
    class_slot cache[CLASS_CACHE];
    uint32_t other_class[SIM_MILLI_GPU];
    double other_act[SIM_MILLI_GPU];
};

static const class_slot *lookup(model_rate *r, uint32_t model)
{
    class_slot *s = &r->cache[model % CLASS_CACHE];
    if (s->key != model + 1) {
        const char *name = model ? sim_intern_name(r->classes, model) : "";
        size_t len = strlen(name);
        s->key = model + 1;
        s->tp = len ? model_throughput_class_find(r->tp, name, len) : MODEL_CLASS_NONE;
        s->ifc = len && r->im ? model_interference_class_find(r->im, name, len) : MODEL_ICLASS_NONE;
    }
    return s;
}

double model_rate_throughput(void *ctx, const job_spec *job, uint16_t gpu_type)
{
    model_rate *r = ctx;
    uint16_t ref = job->ref_gpu_type != SIM_GPU_TYPE_NONE ? job->ref_gpu_type : r->default_ref;
    if (ref == SIM_GPU_TYPE_NONE || ref == gpu_type || gpu_type == SIM_GPU_TYPE_NONE ||
        ref >= model_catalog_count(r->cat) || gpu_type >= model_catalog_count(r->cat))
        return 1.0;
    double v = model_throughput_ratio(r->tp, lookup(r, job->model)->tp, gpu_type, ref);
    return v > 0 && isfinite(v) ? v : 1.0;
}

double model_rate_interference(void *ctx, const job_spec *self, uint32_t self_milli,
                               const sim_resident *others, uint32_t n, uint16_t gpu_type)
{
    (void)self_milli;
    model_rate *r = ctx;
    if (!r->im || n == 0 || gpu_type == SIM_GPU_TYPE_NONE)
        return 1.0;
    if (n > SIM_MILLI_GPU)
        n = SIM_MILLI_GPU;
    double slice = 1.0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t demand = others[k].job->true_milli ? others[k].job->true_milli : SIM_MILLI_GPU;
        uint32_t used = others[k].milli < demand ? others[k].milli : demand;
        r->other_act[k] = (double)used / SIM_MILLI_GPU;
        r->other_class[k] = lookup(r, others[k].job->model)->ifc;
        slice += r->other_act[k];
    }
    double x = model_interference_excess(r->im, lookup(r, self->model)->ifc, gpu_type,
                                         r->other_class, r->other_act, n, NULL);
    double f = slice / (1.0 + x);
    return f < 1.0 && f > 0 ? f : 1.0;
}

int model_rate_create(model_rate **out, const model_catalog *cat, const sim_intern *classes,
                      const model_rate_config *cfg, sim_diag *d)
{
    *out = NULL;
    model_rate *r = sim_calloc(1, sizeof *r);
    if (!r)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    r->cat = cat;
    r->classes = classes;
    r->use_tp = cfg->throughput;
    r->default_ref = cfg->default_ref;
    int st;
    if (cfg->steps && cfg->n_steps)
        st = model_throughput_create(&r->tp, cat, cfg->steps, cfg->n_steps, SIM_GPU_TYPE_NONE, d);
    else
        st = model_throughput_create_default(&r->tp, cat, d);
    if (st != SIM_OK)
        goto out_free;
    if (cfg->interference != MODEL_INTERF_NONE) {
        if (cfg->pairs)
            st = model_interference_create(&r->im, cat, r->tp, cfg->pairs, d);
        else
            st = model_interference_create_default(&r->im, cat, r->tp, d);
        if (st != SIM_OK)
            goto out_free;
        if (cfg->interference == MODEL_INTERF_MODEL) {
            model_interference_set_contention(r->im, model_interference_contention(r->im), false);
        } else if (cfg->interference == MODEL_INTERF_CALIBRATED) {
            model_contention C;
            if ((st = model_contention_load(&C, cfg->contention, d)) != SIM_OK)
                goto out_free;
            model_interference_set_contention(r->im, &C, false);
        }
    }
    static const char *const modes[] = {"none", "measured", "model", "calibrated"};
    char ref[48];
    snprintf(ref, sizeof ref, "%s",
             r->default_ref ? model_catalog_type(cat, r->default_ref)->name : "job");
    snprintf(r->name, sizeof r->name, "throughput=%s ref=%s interference=%s",
             !r->use_tp                   ? "none"
             : cfg->steps && cfg->n_steps ? "tables"
                                          : "measured",
             ref, modes[cfg->interference]);
    *out = r;
    return SIM_OK;
out_free:
    model_rate_destroy(r);
    return st;
}

void model_rate_destroy(model_rate *r)
{
    if (!r)
        return;
    model_interference_destroy(r->im);
    model_throughput_destroy(r->tp);
    sim_free(r);
}

void model_rate_fill(model_rate *r, sim_rate_model *out)
{
    memset(out, 0, sizeof *out);
    out->name = r->name;
    out->ctx = r;
    out->throughput = r->use_tp ? model_rate_throughput : NULL;
    out->interference = r->im ? model_rate_interference : NULL;
    out->scaling = NULL;
}
