/*
 * tfidf.c: tokeniser, hashed bag of words, smooth-idf TF-IDF (see tfidf.h).
 * A document's pairs are kept sorted by bucket so that equal texts give equal
 * documents and equal hashes whatever the token order inside one bucket.
 */
#include "models/tfidf.h"

#include <math.h>
#include <string.h>

static inline unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static inline bool is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

uint32_t model_text_bucket(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= lower((unsigned char)s[i]);
        h *= 16777619u;
    }
    return h % MODEL_TEXT_BUCKETS;
}

/* Add one occurrence of bucket b, keeping the pairs sorted. */
static void doc_add(model_doc *d, uint32_t b)
{
    uint32_t i = 0;
    while (i < d->n && d->bucket[i] < b)
        i++;
    if (i < d->n && d->bucket[i] == b) {
        if (d->count[i] < 255)
            d->count[i]++;
        return;
    }
    if (d->n >= MODEL_TEXT_MAX_TOKENS)
        return;
    memmove(d->bucket + i + 1, d->bucket + i, (d->n - i) * sizeof d->bucket[0]);
    memmove(d->count + i + 1, d->count + i, (d->n - i) * sizeof d->count[0]);
    d->bucket[i] = (uint16_t)b;
    d->count[i] = 1;
    d->n++;
}

static void tokenise_into(model_doc *d, const char *s)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        while (*p && !is_word(*p))
            p++;
        const unsigned char *start = p;
        while (*p && is_word(*p))
            p++;
        if (p > start)
            doc_add(d, model_text_bucket((const char *)start, (size_t)(p - start)));
    }
}

void model_doc_tokenise(model_doc *d, const char *name, const char *command)
{
    memset(d, 0, sizeof *d);
    tokenise_into(d, name);
    tokenise_into(d, command);
    if (d->n == 0)
        return;
    uint64_t h = 1469598103934665603u;
    for (uint32_t i = 0; i < d->n; i++) {
        h = (h ^ d->bucket[i]) * 1099511628211u;
        h = (h ^ d->count[i]) * 1099511628211u;
    }
    d->hash = h ? h : 1;
}

/* A hash of the n bytes at s, eight at a time, continuing from h. */
static uint64_t text_hash(uint64_t h, const char *s, size_t n)
{
    for (; n >= 8; n -= 8, s += 8) {
        uint64_t x;
        memcpy(&x, s, 8);
        h = (h ^ x) * 0x9E3779B97F4A7C15u;
        h ^= h >> 29;
    }
    uint64_t x = 0;
    memcpy(&x, s, n);
    h = (h ^ x ^ ((uint64_t)n << 59)) * 0x9E3779B97F4A7C15u;
    return h ^ (h >> 32);
}

void model_doc_tokenise_memo(model_doc_memo *memo, model_doc *d, const char *name,
                             const char *command)
{
    /* NULL tokenises as "" does. */
    name = name ? name : "";
    command = command ? command : "";
    size_t ln = strlen(name), lc = strlen(command);
    if (ln + lc > MODEL_DOC_MEMO_TEXT) {
        model_doc_tokenise(d, name, command);
        return;
    }
    uint64_t key = text_hash(text_hash(ln, name, ln), command, lc) | 1u;
    model_doc_memo_entry *e = &memo->e[(key >> 40) % MODEL_DOC_MEMO];
    if (e->key == key && e->name_len == ln && e->command_len == lc && !memcmp(e->text, name, ln) &&
        !memcmp(e->text + ln, command, lc)) {
        *d = e->doc;
        memo->hits++;
        return;
    }
    model_doc_tokenise(d, name, command);
    memo->misses++;
    e->key = key;
    e->name_len = (uint8_t)ln;
    e->command_len = (uint8_t)lc;
    memcpy(e->text, name, ln);
    memcpy(e->text + ln, command, lc);
    e->doc = *d;
}

void model_tfidf_init(model_tfidf *t)
{
    t->n_docs = 0;
    for (uint32_t b = 0; b < MODEL_TEXT_BUCKETS; b++)
        t->idf[b] = 1.0;
}

void model_tfidf_fit(model_tfidf *t, const model_doc *docs, size_t n, size_t stride)
{
    uint32_t df[MODEL_TEXT_BUCKETS];
    memset(df, 0, sizeof df);
    const unsigned char *base = (const unsigned char *)docs;
    for (size_t i = 0; i < n; i++) {
        const model_doc *d = (const model_doc *)(const void *)(base + i * stride);
        for (uint32_t k = 0; k < d->n; k++)
            df[d->bucket[k]]++;
    }
    t->n_docs = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
    for (uint32_t b = 0; b < MODEL_TEXT_BUCKETS; b++)
        t->idf[b] = log((1.0 + (double)n) / (1.0 + (double)df[b])) + 1.0;
}

uint32_t model_tfidf_apply(const model_tfidf *t, const model_doc *d, double *w)
{
    double ss = 0;
    for (uint32_t k = 0; k < d->n; k++) {
        w[k] = (double)d->count[k] * t->idf[d->bucket[k]];
        ss += w[k] * w[k];
    }
    if (ss > 0) {
        double inv = 1.0 / sqrt(ss);
        for (uint32_t k = 0; k < d->n; k++)
            w[k] *= inv;
    }
    return d->n;
}
