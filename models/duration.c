/*
 * duration.c: the online duration predictor (see duration.h). Numeric features, fixed at
 * arrival: log1p(GPUs), GPU share, log1p(cores), log1p(GiB); sin and cos of the hour and
 * of the weekday of submission; the mean, spread and last of the tenant's 8 most recent
 * log-durations; the last log-duration of a job with the same text (and whether there is
 * one); QoS LS. Then k NMF topics of the text: idf fitted on the history, NMF on the TF-IDF
 * rows of its most recent distinct documents (columns: the buckets they use), a
 * document's topics being its NMF transform with H fixed, at training and prediction
 * alike (cached by hash and training). NMF restarts from the same seeded state at each
 * training, so replays are deterministic. Predictions are clamped to the training range.
 */
#include "models/duration.h"

#include "models/nmf.h"
#include "models/ridge.h"
#include "base/alloc.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define RECENT 8u         /* tenant durations averaged for the "recent mean" feature */
#define TEXT_TABLE 8192u  /* last duration per text hash (direct-mapped) */
#define TOPIC_CACHE 4096u /* topic vectors per text hash (direct-mapped) */
#define TRANSFORM_ITERS 50u
#define LOG_MAX 20.72326583694641 /* ln(1e9 s): predictions are capped at ~31.7 years */
#define TWO_PI 6.283185307179586

typedef struct tenant_rec {
    double recent[RECENT]; /* last log-durations, ring */
    uint64_t count;        /* jobs finished */
    double last;           /* last log-duration */
    int32_t model;         /* index of its model slot, -1 = none */
    uint32_t rows;         /* rows in the history at the last training (scratch) */
} tenant_rec;

typedef struct hist_row {
    model_dur_job job;
    double y; /* ln(duration) */
} hist_row;

typedef struct text_rec {
    uint64_t hash;
    double last; /* log-duration of the last finished job with this text */
} text_rec;

typedef struct fitted {
    bool fitted;
    double y_lo, y_hi; /* range of the training targets: predictions are clamped to it */
    model_ridge ridge;
    model_gbt gbt;
} fitted;

struct model_duration {
    model_dur_config c;
    uint32_t p; /* MODEL_DUR_NUMERIC + topics */
    /* History ring. */
    hist_row *hist;
    uint32_t head, n;
    uint64_t finished, since_train, trainings;
    double log_sum;
    tenant_rec *ten;
    text_rec *text;
    /* Text: idf, topics, unique documents, topic cache. */
    model_tfidf tfidf;
    model_doc_memo *docs; /* the documents of texts met recently */
    model_nmf *nmf;
    bool text_ready;
    bool weekday_off; /* the training rows miss a weekday: the weekday features are 0 */
    uint64_t text_version;
    gsl_rng *rng;
    uint32_t uniq_cap;   /* power of two >= 2 nmf_docs */
    uint64_t *uniq_hash; /* open addressing, 0 = empty */
    uint32_t *uniq_row;  /* history row of each distinct document */
    uint32_t *csr_ptr, *csr_col;
    double *csr_val;
    int32_t col_map[MODEL_TEXT_BUCKETS]; /* bucket -> NMF column, -1 = unseen in training */
    uint64_t *tc_hash, *tc_ver;
    double *tc_topics;
    /* Training. */
    double *X, *y, *Xt, *yt;
    model_ridge_ws *rws, *rws2; /* the second for the global model's fit, on a thread */
    model_gbt_ws *gws, *gws2;
    fitted global;
    fitted *tm;
    uint32_t n_tm, n_tm_fitted;
    double *xbuf;
    double wbuf[MODEL_TEXT_MAX_TOKENS];
    uint32_t cbuf[MODEL_TEXT_MAX_TOKENS];
};

void model_dur_config_default(model_dur_config *c)
{
    memset(c, 0, sizeof *c);
    c->history = 16384;
    c->min_history = 50;
    c->topics = 8;
    c->nmf_docs = 2048;
    c->nmf_iters = 100;
    c->max_tenants = 4096;
    c->max_tenant_models = 64;
    c->learner = MODEL_DUR_GBT;
    c->ridge_lambda = -1.0;
    model_gbt_params_default(&c->gbt);
    c->seed = 1;
}

static int fitted_init(fitted *f, uint32_t p, const model_dur_config *c)
{
    memset(f, 0, sizeof *f);
    if (c->learner == MODEL_DUR_RIDGE)
        return model_ridge_init(&f->ridge, p);
    return model_gbt_init(&f->gbt, p, &c->gbt);
}

static void fitted_fini(fitted *f)
{
    model_ridge_fini(&f->ridge);
    model_gbt_fini(&f->gbt);
}

int model_duration_create(model_duration **out, const model_dur_config *c, sim_diag *d)
{
    *out = NULL;
    if (c->history < 1 || c->history > (1u << 24) || c->topics > MODEL_DUR_MAX_TOPICS ||
        c->max_tenants < 1 || c->max_tenants > (1u << 24) || c->max_tenant_models > 65536 ||
        (c->topics && (c->nmf_docs < 1 || c->nmf_docs > (1u << 20))) || isnan(c->ridge_lambda))
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "duration predictor: invalid configuration (history 1..16777216, "
                            "topics 0..%u, nmf_docs 1..1048576, tenants 1..16777216)",
                            MODEL_DUR_MAX_TOPICS);
    model_duration *m = sim_calloc(1, sizeof *m);
    if (!m)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    m->c = *c;
    m->p = MODEL_DUR_NUMERIC + c->topics;
    uint32_t H = c->history, p = m->p;
    int st = SIM_ENOMEM;
    m->hist = sim_calloc(H, sizeof *m->hist);
    m->ten = sim_calloc(c->max_tenants, sizeof *m->ten);
    m->text = sim_calloc(TEXT_TABLE, sizeof *m->text);
    m->docs = sim_calloc(1, sizeof *m->docs);
    m->X = sim_calloc((size_t)H * p, sizeof *m->X);
    m->Xt = sim_calloc((size_t)H * p, sizeof *m->Xt);
    m->y = sim_calloc(H, sizeof *m->y);
    m->yt = sim_calloc(H, sizeof *m->yt);
    m->xbuf = sim_calloc(p, sizeof *m->xbuf);
    m->tm = sim_calloc(c->max_tenant_models ? c->max_tenant_models : 1, sizeof *m->tm);
    if (!m->hist || !m->ten || !m->text || !m->docs || !m->X || !m->Xt || !m->y || !m->yt ||
        !m->xbuf || !m->tm)
        goto out_fail;
    for (uint32_t t = 0; t < c->max_tenants; t++)
        m->ten[t].model = -1;
    if (c->learner == MODEL_DUR_RIDGE) {
        st = model_ridge_ws_create(&m->rws, H, p);
        if (st == SIM_OK)
            st = model_ridge_ws_create(&m->rws2, H, p);
    } else {
        st = model_gbt_ws_create(&m->gws, H, p, &c->gbt);
        if (st == SIM_OK)
            st = model_gbt_ws_create(&m->gws2, H, p, &c->gbt);
    }
    if (st != SIM_OK)
        goto out_fail;
    if ((st = fitted_init(&m->global, p, c)) != SIM_OK)
        goto out_fail;
    for (uint32_t i = 0; i < c->max_tenant_models; i++)
        if ((st = fitted_init(&m->tm[i], p, c)) != SIM_OK)
            goto out_fail;
    model_tfidf_init(&m->tfidf);
    if (c->topics) {
        uint32_t docs = c->nmf_docs;
        m->uniq_cap = 1;
        while (m->uniq_cap < 2 * docs)
            m->uniq_cap *= 2;
        m->uniq_hash = sim_calloc(m->uniq_cap, sizeof *m->uniq_hash);
        m->uniq_row = sim_calloc(docs, sizeof *m->uniq_row);
        m->csr_ptr = sim_calloc((size_t)docs + 1, sizeof *m->csr_ptr);
        m->csr_col = sim_calloc((size_t)docs * MODEL_TEXT_MAX_TOKENS, sizeof *m->csr_col);
        m->csr_val = sim_calloc((size_t)docs * MODEL_TEXT_MAX_TOKENS, sizeof *m->csr_val);
        m->tc_hash = sim_calloc(TOPIC_CACHE, sizeof *m->tc_hash);
        m->tc_ver = sim_calloc(TOPIC_CACHE, sizeof *m->tc_ver);
        m->tc_topics = sim_calloc((size_t)TOPIC_CACHE * c->topics, sizeof *m->tc_topics);
        st = SIM_ENOMEM;
        if (!m->uniq_hash || !m->uniq_row || !m->csr_ptr || !m->csr_col || !m->csr_val ||
            !m->tc_hash || !m->tc_ver || !m->tc_topics)
            goto out_fail;
        if ((st = model_nmf_create(&m->nmf, docs, MODEL_TEXT_BUCKETS, c->topics)) != SIM_OK)
            goto out_fail;
        m->rng = gsl_rng_alloc(gsl_rng_mt19937);
        st = SIM_ENOMEM;
        if (!m->rng)
            goto out_fail;
    }
    *out = m;
    return SIM_OK;
out_fail:
    /* A failed init leaves its slot zeroed, so destroy may release every slot. */
    model_duration_destroy(m);
    return sim_diag_set(d, st, NULL, 0, 0,
                        st == SIM_ENOMEM ? "out of memory"
                                         : "duration predictor: invalid "
                                           "learner parameters");
}

void model_duration_destroy(model_duration *m)
{
    if (!m)
        return;
    sim_free(m->hist);
    sim_free(m->ten);
    sim_free(m->text);
    sim_free(m->docs);
    sim_free(m->X);
    sim_free(m->Xt);
    sim_free(m->y);
    sim_free(m->yt);
    sim_free(m->xbuf);
    fitted_fini(&m->global);
    if (m->tm)
        for (uint32_t i = 0; i < m->c.max_tenant_models; i++)
            fitted_fini(&m->tm[i]);
    sim_free(m->tm);
    model_ridge_ws_destroy(m->rws);
    model_ridge_ws_destroy(m->rws2);
    model_gbt_ws_destroy(m->gws);
    model_gbt_ws_destroy(m->gws2);
    sim_free(m->uniq_hash);
    sim_free(m->uniq_row);
    sim_free(m->csr_ptr);
    sim_free(m->csr_col);
    sim_free(m->csr_val);
    sim_free(m->tc_hash);
    sim_free(m->tc_ver);
    sim_free(m->tc_topics);
    model_nmf_destroy(m->nmf);
    if (m->rng)
        gsl_rng_free(m->rng);
    sim_free(m);
}

static uint32_t slot_of(const model_duration *m, uint32_t tenant)
{
    return tenant < m->c.max_tenants - 1 ? tenant : m->c.max_tenants - 1;
}

static double global_mean(const model_duration *m)
{
    return m->finished ? m->log_sum / (double)m->finished : 0;
}

static double recent_mean(const tenant_rec *t)
{
    uint64_t k = t->count < RECENT ? t->count : RECENT;
    double s = 0;
    for (uint64_t i = 0; i < k; i++)
        s += t->recent[i];
    return s / (double)k;
}

/* Standard deviation of the recent log-durations (0 with fewer than two). */
static double recent_sd(const tenant_rec *t)
{
    uint64_t k = t->count < RECENT ? t->count : RECENT;
    if (k < 2)
        return 0;
    double mu = recent_mean(t), ss = 0;
    for (uint64_t i = 0; i < k; i++)
        ss += (t->recent[i] - mu) * (t->recent[i] - mu);
    return sqrt(ss / (double)k);
}

void model_duration_arrive(model_duration *m, const model_dur_input *in, model_dur_job *out)
{
    memset(out, 0, sizeof *out);
    model_doc_tokenise_memo(m->docs, &out->doc, in->name, in->command);
    out->slot = slot_of(m, in->tenant);
    const tenant_rec *t = &m->ten[out->slot];
    double g = global_mean(m);
    double s = (double)in->submit_us / 1e6;
    double hour = fmod(s, 86400.0) / 3600.0;
    double day = fmod(floor(s / 86400.0), 7.0);
    double *x = out->num;
    x[0] = log1p((double)in->num_gpus);
    x[1] = (double)in->gpu_milli / 1000.0;
    x[2] = log1p((double)in->cpu_milli / 1000.0);
    x[3] = log1p((double)in->mem_mib / 1024.0);
    x[4] = sin(TWO_PI * hour / 24.0);
    x[5] = cos(TWO_PI * hour / 24.0);
    x[6] = sin(TWO_PI * day / 7.0);
    x[7] = cos(TWO_PI * day / 7.0);
    x[8] = t->count ? recent_mean(t) : g;
    x[9] = t->count ? t->last : g;
    x[10] = recent_sd(t);
    const text_rec *tr = out->doc.hash ? &m->text[out->doc.hash % TEXT_TABLE] : NULL;
    bool same = tr && tr->hash == out->doc.hash;
    x[11] = same ? tr->last : x[8];
    x[12] = same ? 1.0 : 0.0;
    x[13] = in->qos == SIM_QOS_LS ? 1.0 : 0.0;
}

void model_duration_finish(model_duration *m, const model_dur_job *j, double duration_s)
{
    double y = log(duration_s > 1 ? duration_s : 1);
    if (!isfinite(y))
        y = LOG_MAX;
    hist_row *r = &m->hist[m->head];
    r->job = *j;
    r->y = y;
    m->head = (m->head + 1) % m->c.history;
    if (m->n < m->c.history)
        m->n++;
    tenant_rec *t = &m->ten[j->slot < m->c.max_tenants ? j->slot : m->c.max_tenants - 1];
    t->recent[t->count % RECENT] = y;
    t->count++;
    t->last = y;
    if (j->doc.hash) {
        text_rec *tr = &m->text[j->doc.hash % TEXT_TABLE];
        tr->hash = j->doc.hash;
        tr->last = y;
    }
    m->log_sum += y;
    m->finished++;
    m->since_train++;
}

/* Topic vector of a document under the current text model (cached). */
static const double *topics_of(model_duration *m, const model_doc *doc)
{
    uint32_t k = m->c.topics;
    uint32_t slot = (uint32_t)(doc->hash % TOPIC_CACHE);
    double *out = m->tc_topics + (size_t)slot * k;
    if (m->tc_hash[slot] == doc->hash && m->tc_ver[slot] == m->text_version)
        return out;
    uint32_t n = model_tfidf_apply(&m->tfidf, doc, m->wbuf), nnz = 0;
    /* Tokens the topics were not fitted on have no loading in H: leave them out. */
    for (uint32_t i = 0; i < n; i++)
        if (m->col_map[doc->bucket[i]] >= 0) {
            m->cbuf[nnz] = (uint32_t)m->col_map[doc->bucket[i]];
            m->wbuf[nnz++] = m->wbuf[i];
        }
    model_nmf_transform(m->nmf, m->cbuf, m->wbuf, nnz, TRANSFORM_ITERS, out);
    m->tc_hash[slot] = doc->hash;
    m->tc_ver[slot] = m->text_version;
    return out;
}

/* The full feature vector of a job into x (p values). */
static void features(model_duration *m, const model_dur_job *j, double *x)
{
    memcpy(x, j->num, MODEL_DUR_NUMERIC * sizeof *x);
    if (m->weekday_off)
        x[6] = x[7] = 0;
    uint32_t k = m->c.topics;
    if (!k)
        return;
    if (m->text_ready && j->doc.hash)
        memcpy(x + MODEL_DUR_NUMERIC, topics_of(m, &j->doc), k * sizeof *x);
    else
        memset(x + MODEL_DUR_NUMERIC, 0, k * sizeof *x);
}

static double fitted_predict(const model_duration *m, const fitted *f, const double *x)
{
    double y = m->c.learner == MODEL_DUR_RIDGE ? model_ridge_predict(&f->ridge, x)
                                               : model_gbt_predict(&f->gbt, x);
    /* A linear model extrapolates without bound; no prediction leaves the range of
     * durations the model was trained on. */
    return y < f->y_lo ? f->y_lo : y > f->y_hi ? f->y_hi : y;
}

static double to_seconds(double logd)
{
    if (logd < 0)
        logd = 0;
    if (logd > LOG_MAX)
        logd = LOG_MAX;
    return exp(logd);
}

double model_duration_predict(model_duration *m, const model_dur_job *j, model_dur_mode mode,
                              model_dur_source *src)
{
    model_dur_source dummy;
    if (!src)
        src = &dummy;
    const tenant_rec *t = &m->ten[j->slot < m->c.max_tenants ? j->slot : m->c.max_tenants - 1];
    const fitted *tf = t->model >= 0 && m->tm[t->model].fitted ? &m->tm[t->model] : NULL;
    const fitted *f = NULL;
    if (mode == MODEL_DUR_TENANT) {
        f = tf;
    } else if (mode == MODEL_DUR_AUTO && tf) {
        f = tf;
    } else if (m->global.fitted) {
        f = &m->global;
    } else if (m->finished) {
        *src = MODEL_DUR_SRC_HISTORY;
        return to_seconds(t->count ? recent_mean(t) : global_mean(m));
    }
    if (!f) {
        *src = MODEL_DUR_SRC_NONE;
        return NAN;
    }
    *src = f == tf ? MODEL_DUR_SRC_TENANT : MODEL_DUR_SRC_GLOBAL;
    features(m, j, m->xbuf);
    return to_seconds(fitted_predict(m, f, m->xbuf));
}

/* Fit f on n rows with workspace `second` (false: the first). */
static int fit_one(model_duration *m, fitted *f, const double *X, const double *y, size_t n,
                   bool second)
{
    model_ridge_ws *rws = second ? m->rws2 : m->rws;
    model_gbt_ws *gws = second ? m->gws2 : m->gws;
    int st;
    f->y_lo = INFINITY;
    f->y_hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (y[i] < f->y_lo)
            f->y_lo = y[i];
        if (y[i] > f->y_hi)
            f->y_hi = y[i];
    }
    if (m->c.learner == MODEL_DUR_RIDGE && m->c.ridge_lambda < 0)
        st = model_ridge_fit_gcv(&f->ridge, rws, X, y, n, NULL);
    else if (m->c.learner == MODEL_DUR_RIDGE)
        st = model_ridge_fit(&f->ridge, rws, X, y, n, m->c.ridge_lambda);
    else
        st = model_gbt_fit(&f->gbt, gws, X, y, n);
    f->fitted = st == SIM_OK && n > 0;
    return st;
}

/* The global model's fit, run beside the tenants' (it reads X and y, writes only its
 * model and the second workspace). */
typedef struct global_fit {
    model_duration *m;
    size_t n;
    int st;
} global_fit;

static void *global_fit_main(void *arg)
{
    global_fit *g = arg;
    g->st = fit_one(g->m, &g->m->global, g->m->X, g->m->y, g->n, true);
    return NULL;
}

/* Fit idf and NMF on the history's documents; sets text_ready. */
static int train_text(model_duration *m)
{
    m->text_ready = false;
    m->text_version++;
    uint32_t H = m->c.history, n = m->n;
    /* Rows in age order, newest first: index (head - 1 - i) mod H. */
    uint32_t n_text = 0;
    for (uint32_t i = 0; i < n; i++)
        n_text += m->hist[i].job.doc.hash != 0;
    if (n_text == 0)
        return SIM_OK;
    model_tfidf_fit(&m->tfidf, &m->hist[0].job.doc, n, sizeof(hist_row));
    memset(m->uniq_hash, 0, m->uniq_cap * sizeof *m->uniq_hash);
    /* NMF columns are the buckets the fitted documents use, in order of appearance. */
    for (uint32_t b = 0; b < MODEL_TEXT_BUCKETS; b++)
        m->col_map[b] = -1;
    uint32_t nu = 0, nnz = 0, ncols = 0;
    m->csr_ptr[0] = 0;
    for (uint32_t i = 0; i < n && nu < m->c.nmf_docs; i++) {
        uint32_t r = (m->head + H - 1 - i) % H;
        const model_doc *doc = &m->hist[r].job.doc;
        if (!doc->hash)
            continue;
        uint32_t s = (uint32_t)(doc->hash & (m->uniq_cap - 1));
        while (m->uniq_hash[s] && m->uniq_hash[s] != doc->hash)
            s = (s + 1) & (m->uniq_cap - 1);
        if (m->uniq_hash[s])
            continue;
        m->uniq_hash[s] = doc->hash;
        m->uniq_row[nu] = r;
        uint32_t k = model_tfidf_apply(&m->tfidf, doc, m->csr_val + nnz);
        for (uint32_t t = 0; t < k; t++) {
            if (m->col_map[doc->bucket[t]] < 0)
                m->col_map[doc->bucket[t]] = (int32_t)ncols++;
            m->csr_col[nnz + t] = (uint32_t)m->col_map[doc->bucket[t]];
        }
        nnz += k;
        nu++;
        m->csr_ptr[nu] = nnz;
    }
    model_csr X = {
        .rows = nu, .cols = ncols, .row_ptr = m->csr_ptr, .col = m->csr_col, .val = m->csr_val};
    gsl_rng_set(m->rng, m->c.seed);
    int st = model_nmf_init_random(m->nmf, &X, m->rng);
    if (st == SIM_OK)
        st = model_nmf_fit(m->nmf, &X, m->c.nmf_iters, NULL);
    if (st != SIM_OK)
        return st;
    m->text_ready = true;
    return SIM_OK;
}

int model_duration_train(model_duration *m)
{
    uint32_t n = m->n, p = m->p;
    m->since_train = 0;
    m->trainings++;
    int st = SIM_OK;
    if (m->c.topics && (st = train_text(m)) != SIM_OK)
        goto out_drop;
    /* The history holds the last jobs to finish, so the jobs of its oldest days are
     * mostly long ones: a weekday seen in only a few of its rows stands for "long ago"
     * and hence "long". Use the weekday only when every weekday has at least half its
     * fair share of the rows. */
    uint32_t per_day[7] = {0};
    for (uint32_t i = 0; i < n; i++) {
        double a = atan2(m->hist[i].job.num[6], m->hist[i].job.num[7]);
        int d = (int)lround(a / TWO_PI * 7.0);
        per_day[((d % 7) + 7) % 7]++;
    }
    m->weekday_off = false;
    for (int d = 0; d < 7; d++)
        m->weekday_off |= (double)per_day[d] < 0.5 * (double)n / 7.0;
    for (uint32_t i = 0; i < n; i++) {
        features(m, &m->hist[i].job, m->X + (size_t)i * p);
        m->y[i] = m->hist[i].y;
    }
    /* The global model is fitted on a second thread while this one fits the tenants'
     * (each fit is deterministic and owns its workspace, so the models are those of a
     * fit one after the other); without a thread, first, as before. */
    global_fit gf = {.m = m, .n = n, .st = SIM_OK};
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, global_fit_main, &gf) == 0;
    if (!threaded) {
        global_fit_main(&gf);
        if ((st = gf.st) != SIM_OK)
            goto out_drop;
    }
    uint32_t n_tm_before = m->n_tm;
    for (uint32_t s = 0; s < m->c.max_tenants; s++)
        m->ten[s].rows = 0;
    for (uint32_t i = 0; i < n; i++)
        m->ten[m->hist[i].job.slot].rows++;
    m->n_tm_fitted = 0;
    for (uint32_t s = 0; s < m->c.max_tenants; s++) {
        tenant_rec *t = &m->ten[s];
        if (t->model < 0 && t->rows >= m->c.min_history && t->rows > 0 &&
            m->n_tm < m->c.max_tenant_models)
            t->model = (int32_t)m->n_tm++;
        if (t->model < 0)
            continue;
        fitted *f = &m->tm[t->model];
        f->fitted = false;
        if (t->rows < m->c.min_history || t->rows == 0)
            continue;
        size_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (m->hist[i].job.slot == s) {
                memcpy(m->Xt + k * p, m->X + (size_t)i * p, p * sizeof *m->X);
                m->yt[k++] = m->y[i];
            }
        if ((st = fit_one(m, f, m->Xt, m->yt, k, false)) != SIM_OK)
            break;
        m->n_tm_fitted += f->fitted;
    }
    if (threaded)
        pthread_join(th, NULL);
    if (gf.st != SIM_OK) {
        /* A failed global fit ends the training before any tenant gets a model. */
        for (uint32_t s = 0; s < m->c.max_tenants; s++)
            if (m->ten[s].model >= (int32_t)n_tm_before)
                m->ten[s].model = -1;
        m->n_tm = n_tm_before;
        st = gf.st;
    }
    if (st != SIM_OK)
        goto out_drop;
    return SIM_OK;
out_drop:
    m->global.fitted = false;
    for (uint32_t i = 0; i < m->n_tm; i++)
        m->tm[i].fitted = false;
    m->n_tm_fitted = 0;
    m->text_ready = false;
    return st;
}

uint64_t model_duration_finished(const model_duration *m)
{
    return m->finished;
}

uint64_t model_duration_pending_rows(const model_duration *m)
{
    return m->since_train;
}

uint64_t model_duration_trainings(const model_duration *m)
{
    return m->trainings;
}

uint32_t model_duration_tenant_models(const model_duration *m)
{
    return m->n_tm_fitted;
}

bool model_duration_tenant_known(const model_duration *m, uint32_t tenant)
{
    return m->ten[slot_of(m, tenant)].count > 0;
}

bool model_duration_tenant_has_model(const model_duration *m, uint32_t tenant)
{
    const tenant_rec *t = &m->ten[slot_of(m, tenant)];
    return t->model >= 0 && m->tm[t->model].fitted;
}

void model_dur_input_of(model_dur_input *in, const job_spec *j)
{
    *in = (model_dur_input){.tenant = j->tenant,
                            .submit_us = j->submit_us,
                            .num_gpus = j->num_gpus,
                            .gpu_milli = j->gpu_milli,
                            .cpu_milli = j->cpu_milli,
                            .mem_mib = j->mem_mib,
                            .qos = j->qos,
                            .name = j->name,
                            .command = j->command};
}
