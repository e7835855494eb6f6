/*
 * tfidf.h: a job's text (name and command) as a bag of hashed tokens, and TF-IDF
 * weighting of such documents.
 *
 * Tokens are maximal runs of ASCII letters and digits, lower-cased; everything else
 * separates them. Each token is hashed (FNV-1a, 32 bits) into one of
 * MODEL_TEXT_BUCKETS buckets (the "hashing trick"), so a document has a fixed-size
 * representation that needs no growing vocabulary: a policy can keep it in its per-job
 * state. Invariant of a model_doc: buckets strictly increasing, counts >= 1.
 *
 * TF-IDF follows the smooth-idf convention of scikit-learn's TfidfTransformer:
 * idf(b) = ln((1 + n) / (1 + df(b))) + 1, weight = count x idf, each document L2-normalised
 * (Salton & Buckley, "Term-weighting approaches in automatic text retrieval", 1988).
 */
#ifndef MODELS_TFIDF_H
#define MODELS_TFIDF_H

#include "sim/types.h"

#define MODEL_TEXT_BUCKETS 1024u  /* hashed vocabulary size */
#define MODEL_TEXT_MAX_TOKENS 24u /* distinct buckets kept per document */

/* A tokenised document: up to MODEL_TEXT_MAX_TOKENS (bucket, count) pairs. */
typedef struct model_doc {
    uint64_t hash;                          /* of the pairs; 0 = empty document */
    uint16_t bucket[MODEL_TEXT_MAX_TOKENS]; /* strictly increasing bucket ids */
    uint8_t count[MODEL_TEXT_MAX_TOKENS];   /* occurrences (saturates at 255) */
    uint8_t n;                              /* pairs in use */
} model_doc;

/* Bucket of the token s[0..len) (lower-cased before hashing). O(len). */
uint32_t model_text_bucket(const char *s, size_t len);

/*
 * Tokenise name and command (either may be NULL or "") into *d. When a document has
 * more distinct buckets than MODEL_TEXT_MAX_TOKENS, the first ones met in the text are
 * kept. O(length of the text).
 */
void model_doc_tokenise(model_doc *d, const char *name, const char *command);

/*
 * Documents remembered by their text: a job's name and command repeat across a trace
 * (the same script, the same flags), so the tokenising of a text already seen is a
 * lookup. Direct-mapped by a hash of the text, each entry keeping the text itself, so a
 * hit is exact; texts longer than MODEL_DOC_MEMO_TEXT bytes are tokenised every time.
 * 2048 entries (440 KiB): the generator's traces hold 768 distinct texts, which 256
 * entries kept only in part.
 */
#define MODEL_DOC_MEMO 2048u
#define MODEL_DOC_MEMO_TEXT 118u
typedef struct model_doc_memo_entry {
    uint64_t key; /* hash of the text; 0 = empty entry */
    uint8_t name_len, command_len;
    char text[MODEL_DOC_MEMO_TEXT]; /* name then command, without terminators */
    model_doc doc;
} model_doc_memo_entry;

typedef struct model_doc_memo {
    model_doc_memo_entry e[MODEL_DOC_MEMO];
    uint64_t hits, misses;
} model_doc_memo;

/* What model_doc_tokenise(d, name, command) gives, through memo (zeroed before its first
 * use). O(length of the text). */
void model_doc_tokenise_memo(model_doc_memo *memo, model_doc *d, const char *name,
                             const char *command);

/* Inverse document frequencies over a corpus. */
typedef struct model_tfidf {
    uint32_t n_docs;                /* documents the idf was fitted on */
    double idf[MODEL_TEXT_BUCKETS]; /* ln((1+n)/(1+df)) + 1 */
} model_tfidf;

/* Reset to the idf of an empty corpus (every idf = 1). */
void model_tfidf_init(model_tfidf *t);

/* Fit the idf on docs[0..n) (stride in bytes between documents, so the documents may
 * sit inside larger records). Empty documents count toward n. O(n x tokens). */
void model_tfidf_fit(model_tfidf *t, const model_doc *docs, size_t n, size_t stride);

/* Weights of d's buckets (w[i] for d->bucket[i]): count x idf, L2-normalised. Returns
 * the number of weights written (d->n; 0 for an empty document). */
uint32_t model_tfidf_apply(const model_tfidf *t, const model_doc *d, double *w);

#endif
