/*
 * predictor.c: kinds of demand predictor (inputs, transforms, targets) and the bundle
 * of the three MLPs the predictive policy uses. Invariant: a kind's input order is the
 * feature schema's (models/features.h), checked by name when a model is loaded.
 */
#include "models/predictor.h"

#include "models/catalog.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const kind_names[MODEL_KIND_COUNT] = {"util", "mem", "time"};
static const char *const target_names[MODEL_KIND_COUNT] = {"util_milli", "mem_mib", "time_s"};

const char *model_kind_name(model_kind k)
{
    return k < MODEL_KIND_COUNT ? kind_names[k] : "";
}

bool model_kind_parse(const char *s, model_kind *out)
{
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        if (strcmp(s, kind_names[k]) == 0) {
            *out = (model_kind)k;
            return true;
        }
    return false;
}

uint32_t model_kind_inputs(model_kind k)
{
    return k == MODEL_KIND_TIME ? MODEL_F_COUNT_TIME : MODEL_F_COUNT;
}

void model_kind_xforms(model_kind k, model_xform *in_xf, model_xform *target_xf)
{
    for (uint32_t i = 0; i < model_kind_inputs(k); i++)
        in_xf[i] = i == MODEL_F_GPU_CC || i == MODEL_F_UTIL ? MODEL_XFORM_NONE : MODEL_XFORM_LOG1P;
    *target_xf = MODEL_XFORM_LOG1P;
}

void model_kind_row(model_kind k, const model_sample *s, double *x, double *y)
{
    memcpy(x, s->x, MODEL_F_COUNT * sizeof *x);
    if (k == MODEL_KIND_TIME)
        x[MODEL_F_UTIL] = s->util_milli;
    *y = k == MODEL_KIND_UTIL ? s->util_milli : k == MODEL_KIND_MEM ? s->mem_mib : s->time_s;
}

int model_kind_create(model_mlp **out, model_kind k, const uint32_t *hidden, uint32_t n_hidden,
                      model_act act, sim_diag *d)
{
    const char *names[MODEL_F_COUNT_TIME];
    model_xform xf[MODEL_F_COUNT_TIME], yxf;
    uint32_t n = model_kind_inputs(k);
    for (uint32_t i = 0; i < n; i++)
        names[i] = model_feature_name((int)i);
    model_kind_xforms(k, xf, &yxf);
    int st = model_mlp_create(out, n, names, xf, hidden, n_hidden, act, target_names[k], yxf, d);
    if (st == SIM_OK)
        model_mlp_set_meta(*out, "kind", kind_names[k]);
    return st;
}

int model_kind_check(const model_mlp *m, model_kind k, const char *path, sim_diag *d)
{
    const char *kind = model_mlp_meta(m, "kind");
    if (!kind || strcmp(kind, kind_names[k]) != 0)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0,
                            "expected a '%s' model (meta kind %s), got kind '%s'", kind_names[k],
                            kind_names[k], kind ? kind : "(none)");
    uint32_t n = model_kind_inputs(k);
    if (model_mlp_inputs(m) != n)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "expected %u inputs, got %u", n,
                            model_mlp_inputs(m));
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(model_mlp_input_name(m, i), model_feature_name((int)i)) != 0)
            return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "input %u: expected '%s', got '%s'",
                                i + 1, model_feature_name((int)i), model_mlp_input_name(m, i));
    if (strcmp(model_mlp_target_name(m), target_names[k]) != 0)
        return sim_diag_set(d, SIM_EPARSE, path, 0, 0, "expected target '%s', got '%s'",
                            target_names[k], model_mlp_target_name(m));
    return SIM_OK;
}

const char *model_kind_default_path(model_kind k)
{
    static char paths[MODEL_KIND_COUNT][1024];
    if (k >= MODEL_KIND_COUNT)
        return "";
    snprintf(paths[k], sizeof paths[k], "%s/models/data/predictive/%s.mlp", model_data_dir(),
             kind_names[k]);
    return paths[k];
}

int model_predictor_load(model_predictor *p, const char *const paths[MODEL_KIND_COUNT], sim_diag *d)
{
    memset(p, 0, sizeof *p);
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        const char *path = paths && paths[k] ? paths[k] : model_kind_default_path((model_kind)k);
        int st = model_mlp_load(&p->m[k], path, d);
        if (st == SIM_OK)
            st = model_kind_check(p->m[k], (model_kind)k, path, d);
        if (st != SIM_OK) {
            model_predictor_fini(p);
            return st;
        }
    }
    return SIM_OK;
}

void model_predictor_fini(model_predictor *p)
{
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        model_mlp_destroy(p->m[k]);
        p->m[k] = NULL;
    }
}

double model_predictor_time(model_predictor *p, const double *job_x, const double *gpu_x,
                            double util_milli)
{
    double x[MODEL_F_COUNT_TIME];
    memcpy(x, job_x, MODEL_F_GPU_CC * sizeof *x);
    memcpy(x + MODEL_F_GPU_CC, gpu_x, 3 * sizeof *x);
    x[MODEL_F_UTIL] = util_milli;
    double t = model_mlp_predict(p->m[MODEL_KIND_TIME], x);
    return t > 0 && isfinite(t) ? t : 0;
}

void model_predictor_predict(model_predictor *p, const double *job_x, const double *gpu_x,
                             model_prediction *out)
{
    double x[MODEL_F_COUNT];
    memcpy(x, job_x, MODEL_F_GPU_CC * sizeof *x);
    memcpy(x + MODEL_F_GPU_CC, gpu_x, 3 * sizeof *x);
    double u = model_mlp_predict(p->m[MODEL_KIND_UTIL], x);
    out->util_milli = !(u >= 1) ? 1 : u > 1000 ? 1000 : u;
    double m = model_mlp_predict(p->m[MODEL_KIND_MEM], x);
    out->mem_mib = m > 0 && isfinite(m) ? m : 0;
    out->time_s = model_predictor_time(p, job_x, gpu_x, out->util_milli);
}
