/*
 * test_tfidf.c: the tokeniser (case folding, separators, counts, the token cap, order
 * independence) and smooth-idf TF-IDF on a three-document corpus against hand-computed
 * weights: idf(a) = ln(4/4) + 1 = 1, idf(b) = idf(c) = idf(d) = ln(4/2) + 1. The memo of
 * documents by text against the tokeniser on random texts.
 */
#include "models/tfidf.h"

#include "check.h"

#include <stdio.h>
#include <string.h>

/* Weight of the token `tok` in d (0 when absent). */
static double weight_of(const model_tfidf *t, const model_doc *d, const char *tok)
{
    double w[MODEL_TEXT_MAX_TOKENS];
    uint32_t n = model_tfidf_apply(t, d, w);
    uint32_t b = model_text_bucket(tok, strlen(tok));
    for (uint32_t i = 0; i < n; i++)
        if (d->bucket[i] == b)
            return w[i];
    return 0;
}

static int count_of(const model_doc *d, const char *tok)
{
    uint32_t b = model_text_bucket(tok, strlen(tok));
    for (uint32_t i = 0; i < d->n; i++)
        if (d->bucket[i] == b)
            return d->count[i];
    return 0;
}

/* Texts drawn from a few words, some longer than the memo keeps, some NULL: the memo's
 * documents equal the tokeniser's, and repeated texts hit it. Returns the documents
 * that differ. */
static int compare_memo(uint64_t *hits)
{
    static model_doc_memo memo; /* zeroed */
    static const char *words[] = {"python", "train.py", "--model",  "bert", "resnet50", "--batch",
                                  "32",     "256",      "T03-dlrm", "x",    "",         "--lr=0.1"};
    uint64_t r = 88172645463325252u;
    int differ = 0;
    for (int k = 0; k < 20000; k++) {
        char text[2][200];
        for (int s = 0; s < 2; s++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            int nw = (int)(r % 4 == 0 ? r % 23 : r % 5), len = 0;
            text[s][0] = 0;
            for (int i = 0; i < nw && len < 180; i++)
                len += snprintf(text[s] + len, sizeof text[s] - (size_t)len, "%s%s", i ? " " : "",
                                words[(r >> (8 + 3 * i % 40)) % 12]);
        }
        const char *name = r % 17 == 0 ? NULL : text[0];
        const char *command = r % 19 == 0 ? NULL : text[1];
        model_doc a, b;
        model_doc_tokenise(&a, name, command);
        memset(&b, 0xA5, sizeof b);
        model_doc_tokenise_memo(&memo, &b, name, command);
        differ += memcmp(&a, &b, sizeof a) != 0;
    }
    *hits = memo.hits;
    return differ + (memo.hits + memo.misses > 20000);
}

int main(void)
{
    /* Tokeniser. */
    model_doc d;
    model_doc_tokenise(&d, "Train-ResNet50_v2", "python train.py --batch 32 --lr=0.1");
    CHECK_EQ_I64(count_of(&d, "train"), 2);
    CHECK_EQ_I64(count_of(&d, "resnet50"), 1);
    CHECK_EQ_I64(count_of(&d, "python"), 1);
    CHECK_EQ_I64(count_of(&d, "32"), 1);
    CHECK_EQ_I64(count_of(&d, "0"), 1);
    CHECK_EQ_I64(count_of(&d, "1"), 1);
    CHECK_EQ_I64(count_of(&d, "--"), 0);
    CHECK(d.hash != 0);
    for (uint32_t i = 1; i < d.n; i++)
        CHECK(d.bucket[i - 1] < d.bucket[i]);
    CHECK_EQ_I64(model_text_bucket("TRAIN", 5), model_text_bucket("train", 5));
    model_doc e;
    model_doc_tokenise(&e, "lr 0 1 32 batch py train python", "train resnet50 v2");
    CHECK(e.hash == d.hash); /* a bag of words: order does not matter */
    model_doc_tokenise(&e, "train", "resnet50");
    CHECK(e.hash != d.hash);
    model_doc_tokenise(&e, "", NULL);
    CHECK_EQ_I64(e.n, 0);
    CHECK(e.hash == 0);
    model_doc_tokenise(&e, " -- ", "//");
    CHECK(e.hash == 0);
    char many[512] = "";
    for (int i = 0; i < 40; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "tok%d ", i);
    model_doc_tokenise(&e, many, NULL);
    CHECK_EQ_I64(e.n, MODEL_TEXT_MAX_TOKENS);

    /* TF-IDF on {"a b", "a c", "a a d"}: the four tokens fall in distinct buckets. */
    uint32_t ba = model_text_bucket("a", 1), bb = model_text_bucket("b", 1),
             bc = model_text_bucket("c", 1), bd = model_text_bucket("d", 1);
    CHECK(ba != bb && ba != bc && ba != bd && bb != bc && bb != bd && bc != bd);
    model_doc corpus[3];
    model_doc_tokenise(&corpus[0], "a b", NULL);
    model_doc_tokenise(&corpus[1], "a", "c");
    model_doc_tokenise(&corpus[2], "a a d", "");
    model_tfidf t;
    model_tfidf_init(&t);
    CHECK_NEAR(t.idf[ba], 1.0, 1e-15);
    model_tfidf_fit(&t, corpus, 3, sizeof corpus[0]);
    CHECK_EQ_I64(t.n_docs, 3);
    CHECK_NEAR(t.idf[ba], 1.0, 1e-12);
    CHECK_NEAR(t.idf[bb], 1.6931471805599454, 1e-12);
    CHECK_NEAR(t.idf[bd], 1.6931471805599454, 1e-12);
    /* Buckets no document uses: ln(4/1) + 1. */
    uint32_t unused = 0;
    while (unused == ba || unused == bb || unused == bc || unused == bd)
        unused++;
    CHECK_NEAR(t.idf[unused], 2.386294361119891, 1e-12);
    /* "a b": (1, 1.693147) / 1.966405. */
    CHECK_NEAR(weight_of(&t, &corpus[0], "a"), 0.5085423203783267, 1e-12);
    CHECK_NEAR(weight_of(&t, &corpus[0], "b"), 0.8610369959439764, 1e-12);
    /* "a a d": (2, 1.693147) / 2.620448. */
    CHECK_NEAR(weight_of(&t, &corpus[2], "a"), 0.7632282916276542, 1e-12);
    CHECK_NEAR(weight_of(&t, &corpus[2], "d"), 0.6461289150464732, 1e-12);
    CHECK_NEAR(weight_of(&t, &corpus[2], "b"), 0.0, 1e-12);
    double w[MODEL_TEXT_MAX_TOKENS];
    CHECK_EQ_I64(model_tfidf_apply(&t, &e, w), MODEL_TEXT_MAX_TOKENS);
    model_doc empty;
    model_doc_tokenise(&empty, NULL, NULL);
    CHECK_EQ_I64(model_tfidf_apply(&t, &empty, w), 0);
    uint64_t hits;
    CHECK_EQ_I64(compare_memo(&hits), 0);
    CHECK(hits > 1000);
    return check_done();
}
