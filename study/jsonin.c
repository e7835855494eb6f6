/*
 * jsonin.c: the strict JSON reader of jsonin.h — a recursive-descent parser over the
 * RFC 8259 grammar (https://www.rfc-editor.org/rfc/rfc8259) that appends one node per
 * value in document order. Decoded strings go into one arena as long as the input,
 * which always suffices: an escape never decodes to more bytes than it is written with,
 * and each string's quotes leave room for its NUL.
 */
#include "study/jsonin.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

struct json_doc {
    json_node *nodes;
    uint32_t n, cap;
    char *arena; /* decoded strings */
    size_t arena_used, arena_cap;
};

typedef struct parser {
    const char *s;
    size_t len, pos;
    long line;
    size_t line_start;
    const char *name;
    json_doc *j;
    sim_diag *d;
    char *numbuf; /* scratch for strtod */
} parser;

static int column_of(const parser *p, size_t pos)
{
    return (int)(pos - p->line_start) + 1;
}

static int fail(parser *p, const char *what)
{
    char got[64];
    if (p->pos >= p->len)
        snprintf(got, sizeof got, "the end of the file");
    else {
        /* One byte, quoted; anything but printable ASCII as \xHH (it may be half of
         * an invalid UTF-8 sequence). */
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"' || c == '\\')
            snprintf(got, sizeof got, "\"\\%c\"", c);
        else if (c >= 0x20 && c < 0x7f)
            snprintf(got, sizeof got, "\"%c\"", c);
        else
            snprintf(got, sizeof got, "\"\\x%02x\"", c);
    }
    return sim_diag_set(p->d, SIM_EPARSE, p->name, p->line, column_of(p, p->pos),
                        "JSON: expected %s, got %s", what, got);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == '\n') {
            p->pos++;
            p->line++;
            p->line_start = p->pos;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            p->pos++;
        } else {
            break;
        }
    }
}

static int32_t add_node(parser *p, json_type type, int32_t parent, const char *key, long line,
                        int column)
{
    json_doc *j = p->j;
    if (j->n == j->cap) {
        uint32_t cap = j->cap ? j->cap * 2 : 64;
        json_node *nn = sim_reallocarray(j->nodes, cap, sizeof *nn);
        if (!nn)
            return -1;
        j->nodes = nn;
        j->cap = cap;
    }
    json_node *n = &j->nodes[j->n];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->parent = parent;
    n->key = key;
    n->str = "";
    n->line = line;
    n->column = column;
    if (parent >= 0)
        j->nodes[parent].n_children++;
    return (int32_t)j->n++;
}

static void put_utf8(char **w, uint32_t cp)
{
    char *o = *w;
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    *w = o;
}

static bool hex4(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return false;
    }
    *out = v;
    return true;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when it is invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t k;
    uint32_t cp, min;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0)
        k = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
        k = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0)
        k = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return k;
}

/* Parse a string at p->pos (which is '"'); *out points into the arena. */
static int parse_string(parser *p, const char **out)
{
    p->pos++;
    char *w = p->j->arena + p->j->arena_used;
    char *start = w;
    for (;;) {
        if (p->pos >= p->len)
            return fail(p, "'\"' to close the string");
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20)
            return fail(p, "a string character (control characters must be escaped)");
        if (c == '\\') {
            if (p->pos + 1 >= p->len)
                return fail(p, "an escape sequence");
            char e = p->s[p->pos + 1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char map[] = "\"\\/\b\f\n\r\t";
                *w++ = map[simple - "\"\\/bfnrt"];
                p->pos += 2;
                continue;
            }
            if (e != 'u') {
                p->pos++;
                return fail(p, "an escape \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX");
            }
            uint32_t cp;
            if (p->pos + 6 > p->len || !hex4(p->s + p->pos + 2, &cp)) {
                p->pos += 2;
                return fail(p, "four hexadecimal digits after \\u");
            }
            p->pos += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (p->pos + 6 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
                    !hex4(p->s + p->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                    return fail(p, "a low surrogate \\uDC00..\\uDFFF after a high surrogate");
                p->pos += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                p->pos -= 6;
                return fail(p, "a high surrogate before a low surrogate");
            } else if (cp == 0) {
                p->pos -= 6;
                return fail(p, "a string without NUL characters");
            }
            put_utf8(&w, cp);
            continue;
        }
        size_t k = utf8_len((const unsigned char *)p->s + p->pos, p->len - p->pos);
        if (k == 0)
            return fail(p, "valid UTF-8");
        memcpy(w, p->s + p->pos, k);
        w += k;
        p->pos += k;
    }
    *w++ = '\0';
    p->j->arena_used += (size_t)(w - start);
    *out = start;
    return SIM_OK;
}

static int parse_number(parser *p, double *out)
{
    size_t b = p->pos, i = p->pos;
    const char *s = p->s;
    if (i < p->len && s[i] == '-')
        i++;
    if (i >= p->len || !(s[i] >= '0' && s[i] <= '9')) {
        p->pos = i;
        return fail(p, "a digit");
    }
    if (s[i] == '0') {
        i++;
        if (i < p->len && s[i] >= '0' && s[i] <= '9') {
            p->pos = i;
            return fail(p, "no leading zero ('.', 'e' or the end of the number)");
        }
    } else {
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->len && s[i] == '.') {
        i++;
        if (i >= p->len || !(s[i] >= '0' && s[i] <= '9')) {
            p->pos = i;
            return fail(p, "a digit after the decimal point");
        }
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->len || !(s[i] >= '0' && s[i] <= '9')) {
            p->pos = i;
            return fail(p, "a digit in the exponent");
        }
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    /* strtod needs a terminated copy: the input need not be NUL-terminated. */
    size_t n = i - b;
    memcpy(p->numbuf, s + b, n);
    p->numbuf[n] = '\0';
    errno = 0;
    double x = strtod(p->numbuf, NULL);
    if (!isfinite(x)) {
        p->pos = b;
        return fail(p, "a number within the range of a double");
    }
    *out = x;
    p->pos = i;
    return SIM_OK;
}

static bool literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return false;
    p->pos += n;
    return true;
}

static int nomem(parser *p)
{
    return sim_diag_set(p->d, SIM_ENOMEM, p->name, 0, 0, "out of memory");
}

static int parse_value(parser *p, int32_t parent, const char *key, long kline, int kcol,
                       int depth);

static int parse_container(parser *p, int32_t self, bool object, int depth)
{
    char close = object ? '}' : ']';
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return SIM_OK;
    }
    for (;;) {
        const char *key = "";
        long kline = p->line;
        int kcol = column_of(p, p->pos);
        if (object) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, "'\"' to begin a member name");
            int st = parse_string(p, &key);
            if (st != SIM_OK)
                return st;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':')
                return fail(p, "':' after the member name");
            p->pos++;
            skip_ws(p);
        }
        int st = parse_value(p, self, key, kline, kcol, depth + 1);
        if (st != SIM_OK)
            return st;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            skip_ws(p);
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return SIM_OK;
        }
        return fail(p, object ? "',' or '}'" : "',' or ']'");
    }
}

static int parse_value(parser *p, int32_t parent, const char *key, long kline, int kcol,
                       int depth)
{
    if (depth > JSON_MAX_DEPTH)
        return fail(p, "at most 64 nested arrays and objects");
    if (p->pos >= p->len)
        return fail(p, "a value");
    if (parent < 0) {
        kline = p->line;
        kcol = column_of(p, p->pos);
    }
    char c = p->s[p->pos];
    int32_t self;
    int st = SIM_OK;
    if (c == '{' || c == '[') {
        self = add_node(p, c == '{' ? JSON_OBJECT : JSON_ARRAY, parent, key, kline, kcol);
        if (self < 0)
            return nomem(p);
        st = parse_container(p, self, c == '{', depth);
    } else if (c == '"') {
        const char *s;
        if ((st = parse_string(p, &s)) != SIM_OK)
            return st;
        self = add_node(p, JSON_STRING, parent, key, kline, kcol);
        if (self < 0)
            return nomem(p);
        p->j->nodes[self].str = s;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        double x = 0;
        if ((st = parse_number(p, &x)) != SIM_OK)
            return st;
        self = add_node(p, JSON_NUMBER, parent, key, kline, kcol);
        if (self < 0)
            return nomem(p);
        p->j->nodes[self].num = x;
    } else if (c == 't' || c == 'f') {
        bool t = literal(p, "true");
        if (!t && !literal(p, "false"))
            return fail(p, "a value (object, array, string, number, true, false or null)");
        self = add_node(p, JSON_BOOL, parent, key, kline, kcol);
        if (self < 0)
            return nomem(p);
        p->j->nodes[self].num = t;
    } else if (literal(p, "null")) {
        self = add_node(p, JSON_NULL, parent, key, kline, kcol);
        if (self < 0)
            return nomem(p);
    } else {
        return fail(p, "a value (object, array, string, number, true, false or null)");
    }
    if (st == SIM_OK)
        p->j->nodes[self].end = p->j->n;
    return st;
}

typedef struct key_ref {
    const char *key;
    uint32_t node;
} key_ref;

static int cmp_keyref(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Reject an object with two members of the same name, citing the second. */
static int check_duplicates(parser *p)
{
    json_doc *j = p->j;
    uint32_t most = 0;
    for (uint32_t i = 0; i < j->n; i++)
        if (j->nodes[i].type == JSON_OBJECT && j->nodes[i].n_children > most)
            most = j->nodes[i].n_children;
    if (most < 2)
        return SIM_OK;
    key_ref *refs = sim_reallocarray(NULL, most, sizeof *refs);
    if (!refs)
        return nomem(p);
    int st = SIM_OK;
    for (uint32_t i = 0; i < j->n && st == SIM_OK; i++) {
        const json_node *o = &j->nodes[i];
        if (o->type != JSON_OBJECT || o->n_children < 2)
            continue;
        uint32_t m = 0;
        for (uint32_t c = i + 1; c < o->end; c = j->nodes[c].end)
            refs[m++] = (key_ref){j->nodes[c].key, c};
        qsort(refs, m, sizeof *refs, cmp_keyref);
        for (uint32_t k = 1; k < m; k++)
            if (strcmp(refs[k - 1].key, refs[k].key) == 0) {
                const json_node *dup = &j->nodes[refs[k].node];
                char q[96];
                csvin_quote(dup->key, strlen(dup->key), q, sizeof q);
                st = sim_diag_set(p->d, SIM_EPARSE, p->name, dup->line, dup->column,
                                  "JSON: expected a member name not used before in this "
                                  "object, got %s again (first on line %ld)",
                                  q, j->nodes[refs[k - 1].node].line);
                break;
            }
    }
    sim_free(refs);
    return st;
}

int json_doc_parse(json_doc **out, const char *text, size_t len, const char *name,
                   sim_diag *d)
{
    *out = NULL;
    json_doc *j = sim_calloc(1, sizeof *j);
    char *numbuf = sim_malloc(len + 1);
    if (!j || !numbuf) {
        sim_free(j);
        sim_free(numbuf);
        return sim_diag_set(d, SIM_ENOMEM, name, 0, 0, "out of memory");
    }
    j->arena_cap = len + 1;
    j->arena = sim_malloc(j->arena_cap);
    parser p = {.s = text, .len = len, .line = 1, .name = name, .j = j, .d = d,
                .numbuf = numbuf};
    int st;
    if (!j->arena) {
        st = nomem(&p);
        goto out_free;
    }
    skip_ws(&p);
    if ((st = parse_value(&p, -1, "", 1, 1, 0)) != SIM_OK)
        goto out_free;
    skip_ws(&p);
    if (p.pos != p.len) {
        st = fail(&p, "the end of the file after the top-level value");
        goto out_free;
    }
    if ((st = check_duplicates(&p)) != SIM_OK)
        goto out_free;
    sim_free(numbuf);
    *out = j;
    return SIM_OK;
out_free:
    sim_free(numbuf);
    json_doc_destroy(j);
    return st;
}

int json_doc_load(json_doc **out, const char *path, sim_diag *d)
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
    int st = json_doc_parse(out, buf, n, path, d);
    sim_free(buf);
    return st;
}

void json_doc_destroy(json_doc *j)
{
    if (!j)
        return;
    sim_free(j->nodes);
    sim_free(j->arena);
    sim_free(j);
}

uint32_t json_doc_count(const json_doc *j)
{
    return j->n;
}

const json_node *json_doc_node(const json_doc *j, uint32_t i)
{
    return i < j->n ? &j->nodes[i] : NULL;
}

int32_t json_doc_member(const json_doc *j, int32_t obj, const char *key)
{
    if (obj < 0 || (uint32_t)obj >= j->n || j->nodes[obj].type != JSON_OBJECT)
        return -1;
    for (uint32_t c = (uint32_t)obj + 1; c < j->nodes[obj].end; c = j->nodes[c].end)
        if (strcmp(j->nodes[c].key, key) == 0)
            return (int32_t)c;
    return -1;
}

int32_t json_doc_find(const json_doc *j, const char *path)
{
    if (j->n == 0)
        return -1;
    int32_t at = 0;
    char seg[256];
    while (*path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof seg)
            return -1;
        memcpy(seg, path, n);
        seg[n] = '\0';
        if ((at = json_doc_member(j, at, seg)) < 0)
            return -1;
        path += n + (dot ? 1 : 0);
    }
    return at;
}

bool json_doc_number(const json_doc *j, const char *path, double *out)
{
    int32_t i = json_doc_find(j, path);
    if (i < 0)
        return false;
    if (j->nodes[i].type == JSON_NULL) {
        *out = NAN;
        return true;
    }
    if (j->nodes[i].type != JSON_NUMBER)
        return false;
    *out = j->nodes[i].num;
    return true;
}

const char *json_doc_string(const json_doc *j, const char *path)
{
    int32_t i = json_doc_find(j, path);
    return i >= 0 && j->nodes[i].type == JSON_STRING ? j->nodes[i].str : NULL;
}
