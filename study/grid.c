/*
 * grid.c: reading, checking and expanding a sweep's grid file (grid.h). json-c parses
 * the document; it keeps no positions, so a small scanner walks the same text first and
 * records where every value starts under its path ("policies[2].options.quantum"), and
 * every error of the content is reported at the position of the value it is about.
 */
#include "study/grid.h"

#include "policies/registry.h"
#include "base/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PATH_LEN 128

typedef struct pos {
    char path[PATH_LEN];
    long line;
    int col;
} pos;

typedef struct ctx {
    const char *text, *end, *p;
    const char *at, *bol; /* record()'s cursor: line `line` starts at bol, at >= bol */
    long line;
    const char *file;
    pos *pos;
    size_t n_pos, cap_pos;
    grid *g;
    sim_diag *d;
    const char *dup_at; /* the first member name given twice (d says so), or NULL */
    const char *nul_at;   /* the first \u0000 in a string, or NULL */
    const char *quote_at; /* the first member name in single quotes, or NULL */
    const char *big_at;   /* the first number json-c cannot hold as written, or NULL */
} ctx;

/* A value's path ("policies[2].options") into out (PATH_LEN bytes). */
static void pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, PATH_LEN, fmt, ap);
    va_end(ap);
}

/* ---- positions ------------------------------------------------------------------ */

static void where(const ctx *c, const char *at, long *line, int *col)
{
    long l = 1;
    const char *bol = c->text;
    for (const char *q = c->text; q < at && q < c->end; q++)
        if (*q == '\n') {
            l++;
            bol = q + 1;
        }
    *line = l;
    *col = (int)(at - bol) + 1;
}

static void skip_ws(ctx *c)
{
    while (c->p < c->end && strchr(" \t\r\n", *c->p))
        c->p++;
}

/* The line and column of c->p, counted on from the last recorded position (the scan
 * only moves forward), so recording every value stays linear in the document. */
static void where_next(ctx *c, long *line, int *col)
{
    if (!c->at) {
        c->at = c->bol = c->text;
        c->line = 1;
    }
    for (; c->at < c->p && c->at < c->end; c->at++)
        if (*c->at == '\n') {
            c->line++;
            c->bol = c->at + 1;
        }
    *line = c->line;
    *col = (int)(c->p - c->bol) + 1;
}

static bool record(ctx *c, const char *path)
{
    if (c->n_pos == c->cap_pos) {
        size_t cap = c->cap_pos ? 2 * c->cap_pos : 256;
        pos *np = sim_reallocarray(c->pos, cap, sizeof *np);
        if (!np)
            return false;
        c->pos = np;
        c->cap_pos = cap;
    }
    pos *q = &c->pos[c->n_pos++];
    snprintf(q->path, sizeof q->path, "%s", path);
    where_next(c, &q->line, &q->col);
    return true;
}

static unsigned hex4(const char *p, const char *end)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        if (p + k >= end || !isxdigit((unsigned char)p[k]))
            return 0xFFFFFFFFu;
        v = v * 16 + (unsigned)(isdigit((unsigned char)p[k]) ? p[k] - '0'
                                                              : (tolower((unsigned char)p[k]) - 'a' + 10));
    }
    return v;
}

/* Append code point u as UTF-8 to out (n bytes used of size). */
static void put_utf8(char *out, size_t size, size_t *n, unsigned u)
{
    unsigned char b[4];
    size_t k = 0;
    if (u < 0x80) {
        b[k++] = (unsigned char)u;
    } else if (u < 0x800) {
        b[k++] = (unsigned char)(0xC0 | u >> 6);
        b[k++] = (unsigned char)(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
        b[k++] = (unsigned char)(0xE0 | u >> 12);
        b[k++] = (unsigned char)(0x80 | (u >> 6 & 0x3F));
        b[k++] = (unsigned char)(0x80 | (u & 0x3F));
    } else {
        b[k++] = (unsigned char)(0xF0 | u >> 18);
        b[k++] = (unsigned char)(0x80 | (u >> 12 & 0x3F));
        b[k++] = (unsigned char)(0x80 | (u >> 6 & 0x3F));
        b[k++] = (unsigned char)(0x80 | (u & 0x3F));
    }
    for (size_t i = 0; i < k && *n + 1 < size; i++)
        out[(*n)++] = (char)b[i];
}

/* Skip a string at c->p, decoding up to size-1 bytes of its content into out (escapes
 * as json-c decodes them, so a key matches the key json-c reports). It ends at the quote
 * it started with: json-c takes a member name in single quotes even when strict. */
static void scan_string(ctx *c, char *out, size_t size)
{
    size_t n = 0;
    char quote = *c->p == '\'' ? '\'' : '"';
    c->p++;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p != '\\' || c->p + 1 >= c->end) {
            if (out && n + 1 < size)
                out[n++] = *c->p;
            c->p++;
            continue;
        }
        char e = c->p[1];
        c->p += 2;
        unsigned u = (unsigned char)e;
        switch (e) {
        case 'b': u = '\b'; break;
        case 'f': u = '\f'; break;
        case 'n': u = '\n'; break;
        case 'r': u = '\r'; break;
        case 't': u = '\t'; break;
        case 'u':
            u = hex4(c->p, c->end);
            if (u == 0xFFFFFFFFu)
                continue;
            if (u == 0 && !c->nul_at)
                c->nul_at = c->p - 2;
            c->p += 4;
            if (u >= 0xD800 && u < 0xDC00 && c->p + 1 < c->end && c->p[0] == '\\' &&
                c->p[1] == 'u') {
                unsigned lo = hex4(c->p + 2, c->end);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                    c->p += 6;
                }
            }
            break;
        default:
            break;
        }
        if (out)
            put_utf8(out, size, &n, u);
    }
    if (c->p < c->end)
        c->p++;
    if (out)
        out[n] = '\0';
}

/* Skip the value at c->p without recording it (strings and nesting respected). */
static void skip_value(ctx *c)
{
    int depth = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        if (ch == '"' || ch == '\'') {
            scan_string(c, NULL, 0);
        } else {
            if (ch == '{' || ch == '[')
                depth++;
            else if (ch == '}' || ch == ']')
                depth--;
            else if (depth == 0 && strchr(", \t\r\n", ch))
                return;
            c->p++;
        }
        if (depth <= 0 && (ch == '"' || ch == '\'' || ch == '}' || ch == ']'))
            return;
    }
}

/* A member name given twice in one object (json-c keeps the last one silently). Names
 * are compared as written. */
static bool dup_key(ctx *c, const char *key, size_t len, const char *first_key)
{
    if (c->dup_at)
        return true;
    long line;
    int col;
    where(c, key, &line, &col);
    long first_line;
    int first_col;
    where(c, first_key, &first_line, &first_col);
    sim_diag_set(c->d, SIM_EPARSE, c->file, line, col,
                 "grid: bad JSON: member \"%.*s\" is given twice in one object (first at "
                 "line %ld, column %d)",
                 (int)(len < 100 ? len : 100), key + 1, first_line,
                 first_col);
    c->dup_at = key;
    return true;
}

/* Whether the number [p, end) (any other literal passes) is one json-c reads as written:
 * it reads an integer beyond 64 bits as the nearest bound (-2^63 or 2^64 - 1), a number
 * beyond a double's range as an infinity and one too small for it as 0, without a word. */
static bool number_fits(const char *p, const char *end)
{
    bool neg = p < end && *p == '-';
    const char *d = p + neg;
    if (d >= end || !isdigit((unsigned char)*d))
        return true; /* true, false, null */
    for (const char *q = d; q < end; q++)
        if (!isdigit((unsigned char)*q)) {
            size_t n = (size_t)(end - p);
            char *buf = sim_calloc(n + 1, 1);
            if (!buf)
                return true; /* json-c read it: the run's own check of the value is left */
            memcpy(buf, p, n);
            errno = 0;
            double x = strtod(buf, NULL);
            bool fits = errno != ERANGE && isfinite(x);
            sim_free(buf);
            return fits;
        }
    while (d + 1 < end && *d == '0')
        d++;
    const char *max = neg ? "9223372036854775808" : "18446744073709551615";
    size_t n = (size_t)(end - d), m = strlen(max);
    return n < m || (n == m && memcmp(d, max, m) <= 0);
}

/* Record the value at c->p (already known to be valid JSON) and its descendants. */
static bool scan_value(ctx *c, const char *path, int depth)
{
    skip_ws(c);
    if (c->p >= c->end)
        return true;
    if (depth > 64) {
        skip_value(c);
        return true;
    }
    if (!record(c, path))
        return false;
    char sub[PATH_LEN];
    if (*c->p == '{') {
        c->p++;
        /* The raw names of this object's members so far (start and length). */
        const char *names_at[64];
        size_t names_len[64], n_names = 0;
        for (;;) {
            skip_ws(c);
            if (c->p >= c->end || *c->p == '}') {
                c->p++;
                return true;
            }
            if (*c->p == ',') {
                c->p++;
                continue;
            }
            const char *key_at = c->p;
            if (*c->p == '\'' && !c->quote_at)
                c->quote_at = c->p;
            char key[PATH_LEN];
            scan_string(c, key, sizeof key);
            size_t key_len = (size_t)(c->p - key_at);
            for (size_t k = 0; k < n_names; k++)
                if (names_len[k] == key_len && !memcmp(names_at[k], key_at, key_len))
                    dup_key(c, key_at, key_len >= 2 ? key_len - 2 : 0, names_at[k]);
            if (n_names < 64) {
                names_at[n_names] = key_at;
                names_len[n_names++] = key_len;
            }
            skip_ws(c);
            if (c->p < c->end && *c->p == ':')
                c->p++;
            pathf(sub, "%s%s%s", path, *path ? "." : "", key);
            const char *at = c->p;
            if (!scan_value(c, sub, depth + 1))
                return false;
            if (c->p == at && c->p < c->end)
                c->p++; /* always forward, whatever the text */
        }
    }
    if (*c->p == '[') {
        c->p++;
        for (size_t i = 0;; i++) {
            skip_ws(c);
            if (c->p >= c->end || *c->p == ']') {
                c->p++;
                return true;
            }
            if (*c->p == ',') {
                c->p++;
                i--;
                continue;
            }
            pathf(sub, "%s[%zu]", path, i);
            const char *at = c->p;
            if (!scan_value(c, sub, depth + 1))
                return false;
            if (c->p == at && c->p < c->end)
                c->p++; /* always forward, whatever the text */
        }
    }
    if (*c->p == '"' || *c->p == '\'') {
        scan_string(c, NULL, 0);
        return true;
    }
    const char *num = c->p;
    while (c->p < c->end && !strchr(",]} \t\r\n", *c->p))
        c->p++;
    if (!c->big_at && !number_fits(num, c->p))
        c->big_at = num;
    return true;
}

static int fail(ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(ctx *c, const char *path, const char *fmt, ...)
{
    long line = 0;
    int col = 0;
    /* The value's own position, else that of its nearest recorded ancestor (a path the
     * scanner spelled differently, or cut at PATH_LEN): the document's is always there. */
    size_t best = 0;
    bool found = false;
    for (size_t i = 0; i < c->n_pos; i++) {
        const char *q = c->pos[i].path;
        size_t n = strlen(q);
        if (strncmp(q, path, n) || (path[n] && path[n] != '.' && path[n] != '[' && n) ||
            (found && n <= best))
            continue;
        found = true;
        best = n;
        line = c->pos[i].line;
        col = c->pos[i].col;
        if (!path[n])
            break;
    }
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sim_diag_set(c->d, SIM_EPARSE, c->file, line, col, "%s", msg);
}

/* ---- helpers ---------------------------------------------------------------------- */

static const char *type_name(json_object *o)
{
    return json_type_to_name(json_object_get_type(o));
}

/* What scalar_text failed on: "string" becomes "a string longer than N bytes". */
static const char *not_scalar(json_object *o, size_t size, char *buf, size_t bsize)
{
    if (!json_object_is_type(o, json_type_string))
        return type_name(o);
    snprintf(buf, bsize, "a string longer than %zu bytes", size - 1);
    return buf;
}

/* A scalar as text: strings as they are, numbers and booleans as JSON writes them.
 * False for other types, and for a string that does not fit in buf (*too_long set). */
static bool scalar_text(json_object *o, char *buf, size_t size)
{
    switch (json_object_get_type(o)) {
    case json_type_string:
        return (size_t)snprintf(buf, size, "%s", json_object_get_string(o)) < size;
    case json_type_int:
        /* json-c holds integers past 2^63 - 1 as unsigned. */
        if (json_object_get_int64(o) == INT64_MAX)
            snprintf(buf, size, "%llu", (unsigned long long)json_object_get_uint64(o));
        else
            snprintf(buf, size, "%lld", (long long)json_object_get_int64(o));
        return true;
    case json_type_double: {
        double v = json_object_get_double(o);
        snprintf(buf, size, "%.15g", v);
        return true;
    }
    case json_type_boolean:
        snprintf(buf, size, "%s", json_object_get_boolean(o) ? "true" : "false");
        return true;
    default:
        return false;
    }
}

/* The base name without directories and the extensions .csv, .gz, .json, .txt. */
static void short_name(const char *s, char *buf, size_t size)
{
    const char *b = strrchr(s, '/');
    snprintf(buf, size, "%s", b ? b + 1 : s);
    for (;;) {
        char *dot = strrchr(buf, '.');
        if (!dot || dot == buf ||
            (strcmp(dot, ".csv") && strcmp(dot, ".gz") && strcmp(dot, ".json") &&
             strcmp(dot, ".txt")))
            break;
        *dot = '\0';
    }
}

/* Characters safe in a directory name: others become '-'. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._-=+", *s))
            *s = '-';
}

static bool is_file(const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0)
        return false;
    if (S_ISREG(st.st_mode))
        return true;
    errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    return false;
}

static bool looks_like_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 4 && !strcmp(s + n - 4, ".csv")) ||
           (n > 3 && !strcmp(s + n - 3, ".gz"));
}

/* ---- sections --------------------------------------------------------------------- */

typedef struct known_opt {
    const char *name;
    bool is_flag;
} known_opt;

static const known_opt run_opts[] = {
    {"catalog", false},
    {"checkpoint-interval", false},
    {"restart-penalty", false},
    {"stall-limit", false},
    {"failures", false},
    {"mtbf", false},
    {"mttr", false},
    {"horizon", false},
    {"sample-interval", false},
    {"frag-workload", false},
    {"tenant-rows", false},
    {"quotas", false},
    {"quota-share", false},
    {"ref-gpu-type", false},
    {"cluster-gpu-type", false},
    {"interference", false},
    {"throughput", false},
    {"zoo-ref", false},
    {"zoo-over", false},
    {"zoo-slo", false},
    {"zoo", true},
    {"no-prefetch", true},
    {"check-invariants", true},
    {"skip-bad-rows", true},
    {NULL, false},
};
static const known_opt pack_opts[] = {
    {"catalog", false},
    {"demand", false},
    {"skip-bad-rows", true},
    {NULL, false},
};

static const known_opt *find_opt(grid_kind k, const char *name)
{
    for (const known_opt *o = k == GRID_PACK ? pack_opts : run_opts; o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

static void list_opts(grid_kind k, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const known_opt *o = k == GRID_PACK ? pack_opts : run_opts; o->name && n < size; o++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", o->name);
}

static int oom(ctx *c)
{
    return sim_diag_set(c->d, SIM_ENOMEM, c->file, 0, 0, "out of memory");
}

/* A string member of an object, or NULL when absent; an error when not a string. */
static int member_string(ctx *c, json_object *o, const char *path, const char *key,
                         const char **out)
{
    json_object *v;
    *out = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        return SIM_OK;
    char sub[PATH_LEN];
    pathf(sub, "%s.%s", path, key);
    if (!json_object_is_type(v, json_type_string))
        return fail(c, sub, "grid: '%s' must be a string, got %s", key, type_name(v));
    *out = json_object_get_string(v);
    return SIM_OK;
}

static int check_members(ctx *c, json_object *o, const char *path, const char *const *allowed)
{
    json_object_object_foreach(o, key, val)
    {
        (void)val;
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            ok = ok || !strcmp(*a, key);
        if (!ok) {
            char sub[PATH_LEN], known[256];
            size_t n = 0;
            known[0] = '\0';
            for (const char *const *a = allowed; *a; a++)
                n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", n ? ", " : "", *a);
            pathf(sub, "%s%s%s", path, *path ? "." : "", key);
            return fail(c, sub, "grid: unknown member '%s'%s%s (known: %s)", key,
                        *path ? " in " : "", path, known);
        }
    }
    return SIM_OK;
}

/* The array at key (a lone value counts as a one-element list); NULL when absent. */
static json_object *as_list(json_object *o, const char *key, json_object **tmp)
{
    json_object *v;
    *tmp = NULL;
    if (!json_object_object_get_ex(o, key, &v))
        return NULL;
    if (json_object_is_type(v, json_type_array))
        return v;
    *tmp = json_object_new_array();
    json_object_array_add(*tmp, json_object_get(v));
    return *tmp;
}

/* One entry of the traces or clusters: a string (the value of its main member) or an
 * object with the main member, "name" and the members `allowed` lists. */
typedef struct entry {
    const char *main, *name;
    json_object *obj; /* the object, or NULL for a string */
    char path[PATH_LEN];
} entry;

/* The list `key` of root (a lone value is a list of one) for read_entry; *n its length.
 * Fails when it is missing or empty. Release *tmp with json_object_put. */
static int entry_list(ctx *c, json_object *root, const char *key, const char *what,
                      json_object **list, json_object **tmp, size_t *n)
{
    *list = as_list(root, key, tmp);
    *n = *list ? json_object_array_length(*list) : 0;
    if (!*list)
        return fail(c, "", "grid: '%s' is missing: give at least one %s", key, what);
    if (*n == 0)
        return fail(c, key, "grid: '%s' is empty: give at least one %s", key, what);
    return SIM_OK;
}

/* Entry i of list (`lone`: the list as_list made of a single value) under key. */
static int read_entry(ctx *c, json_object *list, bool lone, const char *key, size_t i,
                      const char *main_key, const char *const *allowed, const char *what, entry *e)
{
    json_object *t = json_object_array_get_idx(list, i);
    *e = (entry){0};
    pathf(e->path, lone ? "%s" : "%s[%zu]", key, i);
    if (json_object_is_type(t, json_type_string)) {
        e->main = json_object_get_string(t);
        return SIM_OK;
    }
    if (!json_object_is_type(t, json_type_object))
        return fail(c, e->path, "grid: a %s is a string or an object {\"%s\": ...}, got %s", what,
                    main_key, type_name(t));
    e->obj = t;
    int st;
    if ((st = check_members(c, t, e->path, allowed)) ||
        (st = member_string(c, t, e->path, main_key, &e->main)) ||
        (st = member_string(c, t, e->path, "name", &e->name)))
        return st;
    if (!e->main)
        return fail(c, e->path, "grid: a %s needs \"%s\"", what, main_key);
    return SIM_OK;
}

/* Entry names must differ: names[0..n) so far, the new one last. */
static int unique_name(ctx *c, const entry *e, const char *what, const char *const *names, size_t n)
{
    for (size_t k = 0; k + 1 < n; k++)
        if (!strcmp(names[k], names[n - 1]))
            return fail(c, e->path, "grid: two %ss are named '%s' (give one a \"name\")", what,
                        names[n - 1]);
    return SIM_OK;
}

/* A trace's "options" (each a --trace-opt KEY=VALUE) and "skip-bad-rows". */
static int trace_args(ctx *c, const entry *e, grid_trace *gt)
{
    json_object *v;
    if (json_object_object_get_ex(e->obj, "skip-bad-rows", &v) && json_object_get_boolean(v))
        gt->args[gt->n_args++] = sim_strdup("--skip-bad-rows");
    if (!json_object_object_get_ex(e->obj, "options", &v))
        return SIM_OK;
    char sub[PATH_LEN];
    pathf(sub, "%s.options", e->path);
    if (!json_object_is_type(v, json_type_object))
        return fail(c, sub,
                    "grid: a trace's \"options\" must be an object {\"KEY\": VALUE}, "
                    "got %s",
                    type_name(v));
    json_object_object_foreach(v, key, val)
    {
        char text[256], kv[320], why[64];
        pathf(sub, "%s.options.%s", e->path, key);
        if (!scalar_text(val, text, sizeof text))
            return fail(c, sub,
                        "grid: trace option '%s' must be a string, number or boolean, "
                        "got %s",
                        key, not_scalar(val, sizeof text, why, sizeof why));
        if (gt->n_args + 2 > GRID_MAX_ARGS)
            return fail(c, sub, "grid: too many trace options (at most %d)", GRID_MAX_ARGS / 2 - 1);
        snprintf(kv, sizeof kv, "%s=%s", key, text);
        gt->args[gt->n_args++] = sim_strdup("--trace-opt");
        gt->args[gt->n_args++] = sim_strdup(kv);
    }
    return SIM_OK;
}

/* Fill element i of a list from entry e and say its name (the callbacks below). */
typedef int (*entry_fn)(ctx *c, const entry *e, size_t i, const char **name);

/* The list `key`, each entry given to fn (its array has room for list_length); names
 * must differ. */
static int read_entries(ctx *c, json_object *root, const char *key, const char *what,
                        const char *main_key, const char *const *allowed, entry_fn fn)
{
    json_object *list, *tmp;
    size_t n;
    int st = entry_list(c, root, key, what, &list, &tmp, &n);
    const char **names = NULL;
    if (st == SIM_OK && !(names = sim_calloc(n, sizeof *names)))
        st = oom(c);
    for (size_t i = 0; i < n && st == SIM_OK; i++) {
        entry e;
        if ((st = read_entry(c, list, tmp != NULL, key, i, main_key, allowed, what, &e)) ||
            (st = fn(c, &e, i, &names[i])))
            break;
        st = unique_name(c, &e, what, names, i + 1);
    }
    sim_free(names);
    json_object_put(tmp);
    return st;
}

static int trace_entry(ctx *c, const entry *e, size_t i, const char **name)
{
    grid *g = c->g;
    grid_trace *gt = &g->traces[i];
    g->n_traces = i + 1;
    const char *format = NULL;
    int st;
    if (e->obj && ((st = member_string(c, e->obj, e->path, "format", &format)) ||
                   (st = trace_args(c, e, gt))))
        return st;
    char sn[128];
    short_name(e->main, sn, sizeof sn);
    gt->path = sim_strdup(e->main);
    gt->name = sim_strdup(e->name ? e->name : sn);
    gt->format = format ? sim_strdup(format) : NULL;
    bool ok = gt->path && gt->name && (!format || gt->format);
    for (size_t k = 0; k < gt->n_args; k++)
        ok = ok && gt->args[k];
    if (!ok)
        return oom(c);
    sanitize(gt->name);
    *name = gt->name;
    if (is_file(gt->path))
        return SIM_OK;
    char sub[PATH_LEN];
    pathf(sub, e->obj ? "%s.path" : "%s", e->path);
    return fail(c, sub, "grid: trace file '%s' cannot be read: %s", gt->path, strerror(errno));
}

static int cluster_entry(ctx *c, const entry *e, size_t i, const char **name)
{
    grid *g = c->g;
    grid_cluster *gc = &g->clusters[i];
    g->n_clusters = i + 1;
    char sn[128];
    short_name(e->main, sn, sizeof sn);
    gc->spec = sim_strdup(e->main);
    gc->name = sim_strdup(e->name ? e->name : sn);
    if (!gc->spec || !gc->name)
        return oom(c);
    sanitize(gc->name);
    *name = gc->name;
    if (looks_like_path(gc->spec) && !is_file(gc->spec))
        return fail(c, e->path, "grid: cluster file '%s' cannot be read: %s", gc->spec,
                    strerror(errno));
    return SIM_OK;
}

/* The number of entries of the list `key` (a lone value counts as one). */
static size_t list_length(json_object *root, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(root, key, &v))
        return 0;
    return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
}

static int read_traces(ctx *c, json_object *root)
{
    static const char *const allowed[] = {"path",    "name",          "format",
                                          "options", "skip-bad-rows", NULL};
    size_t n = list_length(root, "traces");
    if (!(c->g->traces = sim_calloc(n ? n : 1, sizeof *c->g->traces)))
        return oom(c);
    return read_entries(c, root, "traces", "trace", "path", allowed, trace_entry);
}

static int read_clusters(ctx *c, json_object *root)
{
    static const char *const allowed[] = {"spec", "name", NULL};
    size_t n = list_length(root, "clusters");
    if (!(c->g->clusters = sim_calloc(n ? n : 1, sizeof *c->g->clusters)))
        return oom(c);
    return read_entries(c, root, "clusters", "cluster", "spec", allowed, cluster_entry);
}

/* Add the variants of policy ops with option lists opts (an object or NULL). */
static int add_policy(ctx *c, const policy_ops *ops, json_object *opts, const char *path)
{
    grid *g = c->g;
    const char *key[GRID_MAX_ARGS];
    char vals[GRID_MAX_ARGS][16][128];
    size_t nv[GRID_MAX_ARGS], nk = 0, combos = 1;
    if (opts) {
        json_object_object_foreach(opts, k, v)
        {
            char sub[PATH_LEN];
            pathf(sub, "%s.options.%s", path, k);
            if (!policy_has_option(ops, k, strlen(k))) {
                char known[512];
                size_t n = 0;
                known[0] = '\0';
                for (const policy_option *o = ops->options; o && o->name; o++)
                    n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", n ? ", " : "",
                                          o->name);
                return fail(c, sub, "grid: policy '%s' has no option '%s' (its options: %s)",
                            ops->name, k, n ? known : "none");
            }
            if (policy_option_writes(ops, k, strlen(k)))
                return fail(c, sub,
                            "grid: option '%s' of policy '%s' names a file the policy writes, "
                            "which every cell of the grid would write over; give it to "
                            "'clustersim run' instead",
                            k, ops->name);
            if (nk == GRID_MAX_ARGS)
                return fail(c, sub, "grid: too many options (at most %d)", GRID_MAX_ARGS);
            size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
            if (n == 0 || n > 16)
                return fail(c, sub, "grid: option '%s' needs 1 to 16 values, got %zu", k, n);
            for (size_t i = 0; i < n; i++) {
                json_object *x =
                    json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v;
                char why[64];
                if (!scalar_text(x, vals[nk][i], sizeof vals[nk][i]))
                    return fail(c, sub,
                                "grid: option '%s': expected a string, number or "
                                "boolean, got %s",
                                k, not_scalar(x, sizeof vals[nk][i], why, sizeof why));
            }
            key[nk] = k;
            nv[nk++] = n;
            combos *= n;
            if (g->n_policies + combos > GRID_MAX_VARIANTS)
                return fail(c, sub,
                            "grid: more than %d policy variants (each combination of option "
                            "values is one)",
                            GRID_MAX_VARIANTS);
        }
    }
    grid_policy *np = sim_reallocarray(g->policies, g->n_policies + combos, sizeof *np);
    if (!np)
        return oom(c);
    g->policies = np;
    for (size_t k = 0; k < combos; k++) {
        grid_policy *p = &g->policies[g->n_policies++];
        *p = (grid_policy){0};
        char label[512], name[512];
        size_t ln = (size_t)snprintf(label, sizeof label, "%s", ops->name);
        size_t nn = (size_t)snprintf(name, sizeof name, "%s", ops->name);
        size_t r = k;
        for (size_t o = 0; o < nk; o++) {
            const char *v = vals[o][r % nv[o]];
            r /= nv[o];
            char kv[256];
            snprintf(kv, sizeof kv, "%s=%s", key[o], v);
            p->opts[p->n_opts++] = sim_strdup(kv);
            if (ln < sizeof label)
                ln += (size_t)snprintf(label + ln, sizeof label - ln, " %s", kv);
            if (nn < sizeof name)
                nn += (size_t)snprintf(name + nn, sizeof name - nn, "_%s-%s", key[o], v);
        }
        p->policy = sim_strdup(ops->name);
        p->label = sim_strdup(label);
        p->name = sim_strdup(name);
        if (!p->policy || !p->label || !p->name)
            return oom(c);
        for (size_t o = 0; o < p->n_opts; o++)
            if (!p->opts[o])
                return oom(c);
        sanitize(p->name);
    }
    return SIM_OK;
}

static int read_policies(ctx *c, json_object *root)
{
    json_object *tmp, *list = as_list(root, "policies", &tmp);
    int st = SIM_OK;
    if (!list)
        return fail(c, "", "grid: 'policies' is missing: give at least one policy");
    if (json_object_array_length(list) == 0)
        return fail(c, "policies", "grid: 'policies' is empty: give at least one policy");
    for (size_t i = 0; i < json_object_array_length(list) && st == SIM_OK; i++) {
        json_object *t = json_object_array_get_idx(list, i), *opts = NULL;
        char path[PATH_LEN];
        pathf(path, tmp ? "policies" : "policies[%zu]", i);
        const char *name = NULL;
        if (json_object_is_type(t, json_type_string)) {
            name = json_object_get_string(t);
        } else if (json_object_is_type(t, json_type_object)) {
            static const char *const allowed[] = {"name", "options", NULL};
            if ((st = check_members(c, t, path, allowed)) ||
                (st = member_string(c, t, path, "name", &name)))
                break;
            if (!name) {
                st = fail(c, path, "grid: a policy needs \"name\"");
                break;
            }
            if (json_object_object_get_ex(t, "options", &opts) &&
                !json_object_is_type(opts, json_type_object)) {
                char sub[PATH_LEN];
                pathf(sub, "%s.options", path);
                st = fail(c, sub, "grid: a policy's \"options\" must be an object, got %s",
                          type_name(opts));
                break;
            }
        } else {
            st = fail(c, path, "grid: a policy is a name or an object {\"name\": ...}, got %s",
                      type_name(t));
            break;
        }
        const policy_ops *ops = policy_find(name);
        if (!ops) {
            char known[512];
            policy_known_names(known, sizeof known);
            char sub[PATH_LEN];
            pathf(sub, "%s%s", path, json_object_is_type(t, json_type_object) ? ".name" : "");
            st = fail(c, sub, "grid: unknown policy '%s' (known: %s)", name, known);
            break;
        }
        st = add_policy(c, ops, opts, path);
    }
    for (size_t i = 0; st == SIM_OK && i < c->g->n_policies; i++)
        for (size_t k = 0; k < i; k++) {
            const grid_policy *a = &c->g->policies[k], *b = &c->g->policies[i];
            if (!strcmp(b->label, a->label)) {
                st = fail(c, "policies", "grid: policy '%s' is given twice", b->label);
                break;
            }
            if (!strcmp(b->name, a->name)) {
                st = fail(c, "policies",
                          "grid: policy variants '%s' and '%s' both appear as '%s' in cell "
                          "names (give option values that differ in letters, digits or "
                          "._-=+)",
                          a->label, b->label, b->name);
                break;
            }
        }
    json_object_put(tmp);
    return st;
}

static int read_options(ctx *c, json_object *root)
{
    json_object *opts;
    grid *g = c->g;
    if (!json_object_object_get_ex(root, "options", &opts))
        return SIM_OK;
    if (!json_object_is_type(opts, json_type_object))
        return fail(c, "options",
                    "grid: 'options' must be an object {\"OPTION\": VALUE or "
                    "[VALUES]}, got %s",
                    type_name(opts));
    json_object_object_foreach(opts, key, v)
    {
        char path[PATH_LEN];
        pathf(path, "options.%s", key);
        const known_opt *ko = find_opt(g->kind, key);
        if (!ko) {
            char known[512];
            list_opts(g->kind, known, sizeof known);
            return fail(c, path,
                        "grid: unknown option '%s' for `clustersim %s` cells "
                        "(known: %s)",
                        key, grid_kind_name(g->kind), known);
        }
        if (g->n_axes == GRID_MAX_AXES)
            return fail(c, path, "grid: too many options (at most %d)", GRID_MAX_AXES);
        grid_axis *a = &g->axes[g->n_axes++];
        size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
        if (n == 0)
            return fail(c, path, "grid: option '%s' has no value", key);
        a->name = sim_strdup(key);
        size_t fl = strlen(key) + 3;
        a->flag = sim_malloc(fl);
        a->values = sim_calloc(n, sizeof *a->values);
        a->short_values = sim_calloc(n, sizeof *a->short_values);
        if (!a->name || !a->flag || !a->values || !a->short_values)
            return oom(c);
        snprintf(a->flag, fl, "--%s", key);
        a->is_flag = ko->is_flag;
        a->numeric = !ko->is_flag;
        for (size_t i = 0; i < n; i++) {
            json_object *x =
                json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v;
            char sub[PATH_LEN], text[512], sn[128], why[64];
            pathf(sub, json_object_is_type(v, json_type_array) ? "%s[%zu]" : "%s", path, i);
            if (ko->is_flag && !json_object_is_type(x, json_type_boolean))
                return fail(c, sub,
                            "grid: option '%s' is a flag: expected true or false, got "
                            "%s",
                            key, type_name(x));
            if (!scalar_text(x, text, sizeof text))
                return fail(c, sub, "grid: option '%s': expected a string or a number, got %s", key,
                            not_scalar(x, sizeof text, why, sizeof why));
            if (!ko->is_flag && looks_like_path(text) && !is_file(text))
                return fail(c, sub, "grid: option '%s': file '%s' cannot be read: %s", key, text,
                            strerror(errno));
            char *e;
            errno = 0;
            double num = strtod(text, &e);
            if (e == text || *e || !isfinite(num))
                a->numeric = false;
            for (size_t k = 0; k < i; k++)
                if (!strcmp(a->values[k], text))
                    return fail(c, sub, "grid: option '%s': value '%s' is given twice", key, text);
            short_name(text, sn, sizeof sn);
            a->values[i] = sim_strdup(text);
            a->short_values[i] = sim_strdup(sn);
            a->n_values++;
            if (!a->values[i] || !a->short_values[i])
                return oom(c);
            sanitize(a->short_values[i]);
            /* Two values one cell name cannot tell apart would share a cell directory. */
            for (size_t k = 0; k < i && !a->is_flag; k++)
                if (!strcmp(a->short_values[k], a->short_values[i]))
                    return fail(c, sub,
                                "grid: option '%s': values '%s' and '%s' both appear as '%s' "
                                "in cell names (give files different names, or values that "
                                "differ in letters, digits or ._-=+)",
                                key, a->values[k], text, a->short_values[i]);
        }
    }
    return SIM_OK;
}

static int seed_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Seeds: N, "A..B", "A,B,C" or [A, B, C]; default 1. */
static int read_seeds(ctx *c, json_object *root)
{
    grid *g = c->g;
    json_object *v;
    if (!(g->seeds = sim_calloc(GRID_MAX_SEEDS, sizeof *g->seeds)))
        return oom(c);
    if (!json_object_object_get_ex(root, "seeds", &v)) {
        g->seeds[g->n_seeds++] = 1;
        return SIM_OK;
    }
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *x = json_object_array_get_idx(v, i);
            char sub[PATH_LEN];
            pathf(sub, "seeds[%zu]", i);
            if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0)
                return fail(c, sub, "grid: a seed is a non-negative integer, got %s",
                            json_object_is_type(x, json_type_int) ? json_object_get_string(x)
                                                                  : type_name(x));
            if (g->n_seeds == GRID_MAX_SEEDS)
                return fail(c, sub, "grid: at most %d seeds", GRID_MAX_SEEDS);
            g->seeds[g->n_seeds++] = json_object_get_uint64(x);
        }
        if (g->n_seeds == 0)
            return fail(c, "seeds", "grid: 'seeds' is an empty list: give at least one seed");
    } else {
        char num[32];
        const char *text;
        if (json_object_is_type(v, json_type_string))
            text = json_object_get_string(v);
        else if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
            text = (snprintf(num, sizeof num, "%llu",
                             (unsigned long long)json_object_get_uint64(v)),
                    num);
        else
            return fail(c, "seeds", "grid: 'seeds' is N, \"A..B\", \"A,B,C\" or a list, got %s",
                        json_object_is_type(v, json_type_int) ? json_object_get_string(v)
                                                              : type_name(v));
        for (const char *p = text; *p;) {
            char *e;
            if (!isdigit((unsigned char)*p))
                return fail(c, "seeds", "grid: seeds: expected N, A..B or A,B,C, got \"%.200s\"",
                            text);
            errno = 0;
            unsigned long long a = strtoull(p, &e, 10), b = a;
            if (!strncmp(e, "..", 2)) {
                if (!isdigit((unsigned char)e[2]))
                    return fail(c, "seeds", "grid: seeds: expected A..B, got \"%.200s\"", text);
                b = strtoull(e + 2, &e, 10);
            }
            if (errno == ERANGE)
                return fail(c, "seeds", "grid: seeds: a seed is at most %llu, got \"%.200s\"",
                            (unsigned long long)UINT64_MAX, text);
            if (b < a || b - a >= GRID_MAX_SEEDS || (*e && *e != ','))
                return fail(c, "seeds",
                            "grid: seeds: expected N, A..B (A <= B) or A,B,C with "
                            "at most %d seeds, got \"%.200s\"",
                            GRID_MAX_SEEDS, text);
            for (unsigned long long s = a;; s++) {
                if (g->n_seeds == GRID_MAX_SEEDS)
                    return fail(c, "seeds", "grid: at most %d seeds", GRID_MAX_SEEDS);
                g->seeds[g->n_seeds++] = s;
                if (s == b)
                    break;
            }
            p = *e ? e + 1 : e;
            if (*e && !*p)
                return fail(c, "seeds", "grid: seeds: a comma ends \"%.200s\"", text);
        }
        if (g->n_seeds == 0)
            return fail(c, "seeds", "grid: 'seeds' is empty: give at least one seed");
    }
    /* Each seed once (sorted copy: a long list stays cheap to check). */
    uint64_t *sorted = sim_calloc(g->n_seeds, sizeof *sorted);
    if (!sorted)
        return oom(c);
    memcpy(sorted, g->seeds, g->n_seeds * sizeof *sorted);
    qsort(sorted, g->n_seeds, sizeof *sorted, seed_cmp);
    for (size_t i = 1; i < g->n_seeds; i++)
        if (sorted[i] == sorted[i - 1]) {
            unsigned long long dup = sorted[i];
            sim_free(sorted);
            return fail(c, "seeds", "grid: seed %llu is given twice", dup);
        }
    sim_free(sorted);
    return SIM_OK;
}

/* ---- exclusions and cells ------------------------------------------------------- */

#define EX_ANY UINT32_MAX

/* One exclusion: per axis, a set of value indices as a bit mask (up to 64 values
 * matchable per axis; NULL mask = any). Axes: 0 trace, 1 cluster, 2 policy, 3 seed,
 * 4.. run options. */
typedef struct excl {
    uint64_t *mask[4 + GRID_MAX_AXES];
    size_t n_words[4 + GRID_MAX_AXES];
} excl;

static bool excl_has(const excl *e, size_t axis, size_t idx)
{
    if (!e->mask[axis])
        return true;
    return idx / 64 < e->n_words[axis] && (e->mask[axis][idx / 64] >> (idx % 64) & 1);
}

/* The indices of axis `axis` a value text names (a policy name names every variant). */
static int excl_value(ctx *c, excl *e, size_t axis, json_object *x, const char *path,
                      const char *axis_name)
{
    grid *g = c->g;
    char text[512], why[64];
    if (!scalar_text(x, text, sizeof text))
        return fail(c, path,
                    "grid: exclusion value for '%s' must be a string or a number, got "
                    "%s",
                    axis_name, not_scalar(x, sizeof text, why, sizeof why));
    size_t n = axis == 0   ? g->n_traces
               : axis == 1 ? g->n_clusters
               : axis == 2 ? g->n_policies
               : axis == 3 ? g->n_seeds
                           : g->axes[axis - 4].n_values;
    if (!e->mask[axis]) {
        e->n_words[axis] = (n + 63) / 64;
        if (!(e->mask[axis] = sim_calloc(e->n_words[axis], sizeof *e->mask[axis])))
            return oom(c);
    }
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        char sv[32];
        const char *v = axis == 0   ? g->traces[i].name
                        : axis == 1 ? g->clusters[i].name
                        : axis == 3
                            ? (snprintf(sv, sizeof sv, "%llu", (unsigned long long)g->seeds[i]), sv)
                        : axis == 2 ? g->policies[i].label
                                    : g->axes[axis - 4].values[i];
        bool hit = !strcmp(v, text) || (axis == 2 && !strcmp(g->policies[i].policy, text)) ||
                   (axis == 0 && !strcmp(g->traces[i].path, text)) ||
                   (axis == 1 && !strcmp(g->clusters[i].spec, text));
        if (hit) {
            e->mask[axis][i / 64] |= 1ull << (i % 64);
            any = true;
        }
    }
    if (!any)
        return fail(c, path, "grid: exclusion: '%s' is not a value of '%s'", text, axis_name);
    return SIM_OK;
}

static int read_exclusions(ctx *c, json_object *root, excl **out, size_t *n_out)
{
    json_object *list;
    *out = NULL;
    *n_out = 0;
    if (!json_object_object_get_ex(root, "exclude", &list))
        return SIM_OK;
    if (!json_object_is_type(list, json_type_array))
        return fail(c, "exclude",
                    "grid: 'exclude' must be a list of objects {\"AXIS\": VALUE "
                    "or [VALUES]}, got %s",
                    type_name(list));
    size_t n = json_object_array_length(list);
    excl *ex = sim_calloc(n ? n : 1, sizeof *ex);
    if (!ex)
        return oom(c);
    *out = ex;
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(list, i);
        char path[PATH_LEN];
        pathf(path, "exclude[%zu]", i);
        *n_out = i + 1;
        if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) == 0)
            return fail(c, path,
                        "grid: an exclusion is a non-empty object {\"AXIS\": VALUE "
                        "or [VALUES]}, got %s",
                        type_name(o));
        json_object_object_foreach(o, key, v)
        {
            char sub[PATH_LEN];
            pathf(sub, "%s.%s", path, key);
            size_t axis = SIZE_MAX;
            if (!strcmp(key, "trace"))
                axis = 0;
            else if (!strcmp(key, "cluster"))
                axis = 1;
            else if (!strcmp(key, "policy"))
                axis = 2;
            else if (!strcmp(key, "seed"))
                axis = 3;
            for (size_t a = 0; a < c->g->n_axes && axis == SIZE_MAX; a++)
                if (!strcmp(key, c->g->axes[a].name))
                    axis = 4 + a;
            if (axis == SIZE_MAX)
                return fail(c, sub,
                            "grid: exclusion names an unknown axis '%s' (axes: trace, "
                            "cluster, policy, seed and the grid's options)",
                            key);
            if (json_object_is_type(v, json_type_array)) {
                for (size_t k = 0; k < json_object_array_length(v); k++) {
                    char s2[PATH_LEN];
                    pathf(s2, "%s[%zu]", sub, k);
                    int st = excl_value(c, &ex[i], axis, json_object_array_get_idx(v, k), s2, key);
                    if (st)
                        return st;
                }
            } else {
                int st = excl_value(c, &ex[i], axis, v, sub, key);
                if (st)
                    return st;
            }
        }
    }
    return SIM_OK;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void cell_name(const grid *g, grid_cell *cell)
{
    char full[2048];
    size_t n = (size_t)snprintf(full, sizeof full, "%s_%s_%s", g->traces[cell->trace].name,
                                g->clusters[cell->cluster].name, g->policies[cell->policy].name);
    for (size_t a = 0; a < g->n_axes && n < sizeof full; a++) {
        const grid_axis *ax = &g->axes[a];
        if (ax->is_flag)
            n +=
                (size_t)snprintf(full + n, sizeof full - n, "_%s%s",
                                 strcmp(ax->values[cell->value[a]], "true") ? "no-" : "", ax->name);
        else
            n += (size_t)snprintf(full + n, sizeof full - n, "_%s-%s", ax->name,
                                  ax->short_values[cell->value[a]]);
    }
    if (n < sizeof full)
        snprintf(full + n, sizeof full - n, "_s%llu", (unsigned long long)cell->seed);
    sanitize(full);
    if (strlen(full) <= GRID_NAME_MAX)
        snprintf(cell->name, sizeof cell->name, "%.*s", GRID_NAME_MAX, full);
    else
        snprintf(cell->name, sizeof cell->name, "%.*s-%016llx", GRID_NAME_MAX - 17, full,
                 (unsigned long long)fnv1a(full));
}

/* Every cell has its own directory: two names alike (parts that run together, "a_b" +
 * "c" and "a" + "b_c") are an error naming both cells' parameters. */
static int unique_cells(ctx *c)
{
    const grid *g = c->g;
    size_t cap = 16;
    while (cap < 2 * g->n_cells)
        cap *= 2;
    uint32_t *slot = sim_calloc(cap, sizeof *slot); /* cell index + 1; 0 = empty */
    if (!slot)
        return oom(c);
    int st = SIM_OK;
    for (size_t i = 0; i < g->n_cells && st == SIM_OK; i++) {
        size_t h = (size_t)fnv1a(g->cells[i].name) & (cap - 1);
        for (; slot[h]; h = (h + 1) & (cap - 1)) {
            const grid_cell *a = &g->cells[slot[h] - 1], *b = &g->cells[i];
            if (strcmp(a->name, b->name))
                continue;
            st = fail(c, "",
                      "grid: two cells get the same name '%s': trace '%s', cluster '%s', "
                      "policy '%s' and trace '%s', cluster '%s', policy '%s' (give traces and "
                      "clusters a \"name\" so that the parts of a cell name cannot run "
                      "together)",
                      b->name, g->traces[a->trace].name, g->clusters[a->cluster].name,
                      g->policies[a->policy].label, g->traces[b->trace].name,
                      g->clusters[b->cluster].name, g->policies[b->policy].label);
            break;
        }
        slot[h] = (uint32_t)i + 1;
    }
    sim_free(slot);
    return st;
}

static int expand(ctx *c, const excl *ex, size_t n_ex)
{
    grid *g = c->g;
    size_t dims[4 + GRID_MAX_AXES], nd = 3, total = 1;
    dims[0] = g->n_traces;
    dims[1] = g->n_clusters;
    dims[2] = g->n_policies;
    for (size_t a = 0; a < g->n_axes; a++)
        dims[nd++] = g->axes[a].n_values;
    dims[nd++] = g->n_seeds;
    for (size_t k = 0; k < nd; k++) {
        if (dims[k] == 0 || total > (size_t)GRID_MAX_CELLS / dims[k])
            return fail(c, "", "grid: more than %d cells (the cross product of the axes)",
                        GRID_MAX_CELLS);
        total *= dims[k];
    }
    if (!(g->cells = sim_calloc(total, sizeof *g->cells)))
        return oom(c);
    size_t idx[4 + GRID_MAX_AXES] = {0};
    for (size_t k = 0; k < total; k++) {
        /* Mixed-radix counter, the seed (last) fastest. */
        size_t r = k;
        for (size_t q = nd; q-- > 0;) {
            idx[q] = r % dims[q];
            r /= dims[q];
        }
        grid_cell *cell = &g->cells[g->n_cells];
        *cell = (grid_cell){.trace = (uint32_t)idx[0],
                            .cluster = (uint32_t)idx[1],
                            .policy = (uint32_t)idx[2],
                            .seed = g->seeds[idx[nd - 1]]};
        for (size_t a = 0; a < g->n_axes; a++)
            cell->value[a] = (uint32_t)idx[3 + a];
        bool out = false;
        for (size_t e = 0; e < n_ex && !out; e++) {
            bool all = excl_has(&ex[e], 0, idx[0]) && excl_has(&ex[e], 1, idx[1]) &&
                       excl_has(&ex[e], 2, idx[2]) && excl_has(&ex[e], 3, idx[nd - 1]);
            for (size_t a = 0; a < g->n_axes && all; a++)
                all = excl_has(&ex[e], 4 + a, idx[3 + a]);
            out = all;
        }
        if (out) {
            g->n_excluded++;
            continue;
        }
        cell_name(g, cell);
        g->n_cells++;
    }
    if (g->n_cells == 0)
        return fail(c, "exclude", "grid: the exclusions leave no cell to run");
    return unique_cells(c);
}

/* The numeric members of a cell's summary.json, as the report names them (nested as
 * "a.b"; sim/output.c, study/runner.c, study/quotas.c write them, study/sweep.c writes a
 * pack cell's). A group with per_name has one object per qos or tenant: NAME.FIELD. */
typedef struct metric_group {
    const char *name;          /* top-level member ("jct_s", "quota_metrics.tenants") */
    bool per_name;             /* members are name.NAME.FIELD */
    const char *const *fields; /* NULL: the member is a number itself */
} metric_group;

static const char *const m_cluster[] = {"nodes", "gpus", NULL};
static const char *const m_jobs[] = {"arrived", "done", "rejected", "unfinished", NULL};
static const char *const m_dist[] = {"count", "mean", "median", "p95", "p99", "max", NULL};
static const char *const m_groups[] = {"arrived", "done",  "mean_s", "p50_s",
                                       "p99_s",   "max_s", NULL};
static const char *const m_alloc_eff[] = {"allocated", "effective", NULL};
static const char *const m_elastic[] = {"scale_events",       "scale_in_lost_work_s",
                                        "offline_done",       "offline_jct_mean_s",
                                        "cpu_util_allocated", NULL};
static const char *const m_online[] = {"services", "demand_gpu_hours", "shortfall_gpu_seconds",
                                       "shortfall_periods", NULL};
static const char *const m_slo[] = {"jobs", "violations", NULL};
static const char *const m_qos[] = {"done", "jct_mean", "jct_p95", "wait_mean", NULL};
static const char *const m_tenant[] = {"done",      "rejected",   "jct_mean", "wait_mean",
                                       "gpu_hours", "quota_gpus", NULL};
static const char *const m_quota[] = {"samples", "jain_mean", NULL};
static const char *const m_quota_tenant[] = {"quota_gpus",  "used_gpus_mean",      "above_quota",
                                             "below_quota", "below_quota_waiting", NULL};

/* Longer names first, so that quota_metrics.tenants is matched before quota_metrics. */
/* clang-format off */
static const metric_group run_metrics[] = {
    {"cluster", false, m_cluster},
    {"jobs", false, m_jobs},
    {"jobs_not_arrived", false, NULL},
    {"jct_s", false, m_dist},
    {"wait_s", false, m_dist},
    {"makespan_s", false, NULL},
    {"job_groups", false, m_groups},
    {"gpu_util", false, m_alloc_eff},
    {"gpu_hours", false, m_alloc_eff},
    {"preemptions", false, NULL},
    {"failures", false, NULL},
    {"lost_work_s", false, NULL},
    {"lost_gpu_hours", false, NULL},
    {"elastic", false, m_elastic},
    {"online", false, m_online},
    {"slo", false, m_slo},
    {"by_qos", true, m_qos},
    {"tenants", true, m_tenant},
    {"probes", false, NULL}, /* probes.NAME_mean: checked on its own */
    {"samples", false, NULL},
    {"events", false, NULL},
    {"rows_skipped", false, NULL},
    {"stalled_at_s", false, NULL},
    {"clock_ended_at_s", false, NULL},
    {"quota_metrics.tenants", true, m_quota_tenant},
    {"quota_metrics", false, m_quota},
    {NULL, false, NULL},
};
/* clang-format on */

static const metric_group pack_metrics[] = {
    {"demand_pct", false, NULL}, {"alloc", false, NULL},  {"frag_amount", false, NULL},
    {"frag_ratio", false, NULL}, {"failed", false, NULL}, {NULL, false, NULL},
};

static bool in_list(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++)
        if (!strcmp(list[i], s))
            return true;
    return false;
}

static void join(char *buf, size_t size, const char *const *list, const char *prefix)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; list[i] && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s%s", i ? ", " : "", prefix, list[i]);
}

/* Check metric name against the members a cell of this kind writes; an error at path
 * lists the known ones (of the group the name starts with, when it names one). */
static int check_metric(ctx *c, const char *path, const char *name)
{
    const metric_group *gs = c->g->kind == GRID_PACK ? pack_metrics : run_metrics;
    char known[560];
    const char *kind = grid_kind_name(c->g->kind);
    for (const metric_group *mg = gs; mg->name; mg++) {
        size_t n = strlen(mg->name);
        if (strncmp(name, mg->name, n) || (name[n] && name[n] != '.'))
            continue;
        const char *rest = name[n] ? name + n + 1 : NULL;
        if (!strcmp(mg->name, "probes")) {
            size_t r = rest ? strlen(rest) : 0;
            if (r > 5 && !strcmp(rest + r - 5, "_mean"))
                return SIM_OK;
            return fail(c, path,
                        "grid: unknown metric '%s' (a probe's metric is probes.NAME_mean, "
                        "NAME a probe of the policy)",
                        name);
        }
        if (!mg->fields && !rest)
            return SIM_OK;
        if (mg->fields && rest) {
            const char *field = rest;
            if (mg->per_name) {
                const char *dot = strrchr(rest, '.');
                field = dot && dot > rest ? dot + 1 : NULL;
            }
            if (field && in_list(mg->fields, field))
                return SIM_OK;
        }
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s.%s", mg->name, mg->per_name ? "NAME." : "");
        if (mg->fields)
            join(known, sizeof known, mg->fields, prefix);
        else
            snprintf(known, sizeof known, "%s", mg->name);
        return fail(c, path, "grid: unknown metric '%s' (known: %s)", name, known);
    }
    size_t o = 0;
    known[0] = '\0';
    for (const metric_group *mg = gs; mg->name && o < sizeof known; mg++)
        if (strncmp(mg->name, "quota_metrics.", 14))
            o += (size_t)snprintf(known + o, sizeof known - o, "%s%s%s", o ? ", " : "", mg->name,
                                  mg->fields || !strcmp(mg->name, "probes") ? ".*" : "");
    return fail(c, path, "grid: unknown metric '%s' for `clustersim %s` cells (known: %s%s)", name,
                kind, known, c->g->kind == GRID_PACK ? "" : "; nested members as a.b");
}

static int read_report(ctx *c, json_object *root)
{
    json_object *r, *m;
    if (!json_object_object_get_ex(root, "report", &r))
        return SIM_OK;
    static const char *const allowed[] = {"metrics", NULL};
    if (!json_object_is_type(r, json_type_object))
        return fail(c, "report", "grid: 'report' must be an object {\"metrics\": [...]}");
    int st = check_members(c, r, "report", allowed);
    if (st || !json_object_object_get_ex(r, "metrics", &m))
        return st;
    if (!json_object_is_type(m, json_type_array))
        return fail(c, "report.metrics",
                    "grid: 'metrics' must be a list of summary.json "
                    "members, got %s",
                    type_name(m));
    size_t n = json_object_array_length(m);
    if (!(c->g->metrics = sim_calloc(n ? n : 1, sizeof *c->g->metrics)))
        return oom(c);
    for (size_t i = 0; i < n; i++) {
        json_object *x = json_object_array_get_idx(m, i);
        char sub[PATH_LEN];
        pathf(sub, "report.metrics[%zu]", i);
        if (!json_object_is_type(x, json_type_string))
            return fail(c, sub, "grid: a metric is a string, got %s", type_name(x));
        if ((st = check_metric(c, sub, json_object_get_string(x))) != SIM_OK)
            return st;
        if (!(c->g->metrics[c->g->n_metrics++] = sim_strdup(json_object_get_string(x))))
            return oom(c);
    }
    return SIM_OK;
}

/* ---- entry points ------------------------------------------------------------------ */

const char *grid_kind_name(grid_kind k)
{
    return k == GRID_PACK ? "pack" : "run";
}

int grid_parse(const char *text, size_t len, const char *name, grid *g, sim_diag *d)
{
    *g = (grid){0};
    ctx c = {.text = text, .end = text + len, .p = text, .file = name, .g = g, .d = d};
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return sim_diag_set(d, SIM_ENOMEM, name, 0, 0, "out of memory");
    /* Strict RFC 8259 JSON (no single quotes, trailing commas, NaN): the position scanner
     * reads that grammar. */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    int st = SIM_OK;
    if (!root || je != json_tokener_success) {
        long line;
        int col;
        where(&c, text + (used < len ? used : len), &line, &col);
        st = sim_diag_set(d, SIM_EPARSE, name, line, col, "grid: bad JSON: %s",
                          je == json_tokener_continue ? "the document ends too early"
                                                      : json_tokener_error_desc(je));
        goto out;
    }
    for (size_t k = used; k < len; k++)
        if (!strchr(" \t\r\n", text[k])) {
            long line;
            int col;
            where(&c, text + k, &line, &col);
            st = sim_diag_set(d, SIM_EPARSE, name, line, col,
                              "grid: bad JSON: text after the document");
            goto out;
        }
    if (!scan_value(&c, "", 0)) {
        st = oom(&c);
        goto out;
    }
    if (c.dup_at) {
        st = SIM_EPARSE;
        goto out;
    }
    const char *bad_at = c.quote_at ? c.quote_at : c.big_at ? c.big_at : c.nul_at;
    if (bad_at) {
        long line;
        int col;
        where(&c, bad_at, &line, &col);
        st = sim_diag_set(
            d, SIM_EPARSE, name, line, col, "%s",
            c.quote_at ? "grid: bad JSON: a member name in single quotes (JSON takes double quotes)"
            : c.big_at ? "grid: a number out of range (integers from -9223372036854775808 to "
                         "18446744073709551615, others within a double's range, about 2.2e-308 "
                         "to 1.8e308 in magnitude, or 0)"
                       : "grid: a string holds a NUL character (\\u0000), which no name, path or "
                         "option value can hold");
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        st = fail(&c, "", "grid: the document must be an object {\"traces\": ..., ...}");
        goto out;
    }
    static const char *const allowed[] = {"command", "traces",  "clusters", "policies", "options",
                                          "seeds",   "exclude", "report",   NULL};
    if ((st = check_members(&c, root, "", allowed)))
        goto out;
    const char *kind = NULL;
    if ((st = member_string(&c, root, "", "command", &kind)))
        goto out;
    if (kind && strcmp(kind, "run") && strcmp(kind, "pack")) {
        st = fail(&c, "command", "grid: 'command' is \"run\" or \"pack\", got \"%s\"", kind);
        goto out;
    }
    g->kind = kind && !strcmp(kind, "pack") ? GRID_PACK : GRID_RUN;
    excl *ex = NULL;
    size_t n_ex = 0;
    if ((st = read_traces(&c, root)) || (st = read_clusters(&c, root)) ||
        (st = read_policies(&c, root)) || (st = read_options(&c, root)) ||
        (st = read_seeds(&c, root)) || (st = read_report(&c, root)) ||
        (st = read_exclusions(&c, root, &ex, &n_ex)) || (st = expand(&c, ex, n_ex))) {
    }
    for (size_t e = 0; e < n_ex; e++)
        for (size_t a = 0; a < 4 + GRID_MAX_AXES; a++)
            sim_free(ex[e].mask[a]);
    sim_free(ex);
    if (st == SIM_OK && !(g->path = sim_strdup(name)))
        st = oom(&c);
out:
    json_object_put(root);
    json_tokener_free(tok);
    sim_free(c.pos);
    if (st != SIM_OK)
        grid_free(g);
    return st;
}

int grid_load(const char *path, grid *g, sim_diag *d)
{
    *g = (grid){0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot open the grid file: %s",
                            strerror(errno));
    /* A grid file is small: its size, then one read. */
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size < 0 || size > (64L << 20) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return sim_diag_set(d, SIM_EIO, path, 0, 0,
                            "cannot read the grid file (not a regular "
                            "file of at most 64 MiB)");
    }
    char *text = sim_malloc((size_t)size + 1);
    size_t got = text ? fread(text, 1, (size_t)size, f) : 0;
    fclose(f);
    int st;
    if (!text)
        st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    else if (got != (size_t)size)
        st = sim_diag_set(d, SIM_EIO, path, 0, 0, "cannot read the grid file");
    else
        st = grid_parse(text, got, path, g, d);
    sim_free(text);
    return st;
}

void grid_free(grid *g)
{
    for (size_t i = 0; i < g->n_traces; i++) {
        sim_free(g->traces[i].name);
        sim_free(g->traces[i].path);
        sim_free(g->traces[i].format);
        for (size_t k = 0; k < g->traces[i].n_args; k++)
            sim_free(g->traces[i].args[k]);
    }
    sim_free(g->traces);
    for (size_t i = 0; i < g->n_clusters; i++) {
        sim_free(g->clusters[i].name);
        sim_free(g->clusters[i].spec);
    }
    sim_free(g->clusters);
    for (size_t i = 0; i < g->n_policies; i++) {
        sim_free(g->policies[i].policy);
        sim_free(g->policies[i].label);
        sim_free(g->policies[i].name);
        for (size_t k = 0; k < g->policies[i].n_opts; k++)
            sim_free(g->policies[i].opts[k]);
    }
    sim_free(g->policies);
    for (size_t a = 0; a < g->n_axes; a++) {
        for (size_t i = 0; i < g->axes[a].n_values; i++) {
            sim_free(g->axes[a].values[i]);
            sim_free(g->axes[a].short_values[i]);
        }
        sim_free(g->axes[a].values);
        sim_free(g->axes[a].short_values);
        sim_free(g->axes[a].name);
        sim_free(g->axes[a].flag);
    }
    for (size_t i = 0; i < g->n_metrics; i++)
        sim_free(g->metrics[i]);
    sim_free(g->metrics);
    sim_free(g->seeds);
    sim_free(g->cells);
    sim_free(g->path);
    *g = (grid){0};
}

size_t grid_cell_argv(const grid *g, const grid_cell *c, const char *self, const char *dir,
                      char *seed_buf, char **argv)
{
    size_t o = 0;
    const grid_trace *t = &g->traces[c->trace];
    const grid_policy *p = &g->policies[c->policy];
    argv[o++] = (char *)self;
    argv[o++] = (char *)grid_kind_name(g->kind);
    argv[o++] = "--trace";
    argv[o++] = t->path;
    if (t->format) {
        argv[o++] = "--format";
        argv[o++] = t->format;
    }
    for (size_t k = 0; k < t->n_args; k++)
        argv[o++] = t->args[k];
    argv[o++] = "--cluster";
    argv[o++] = g->clusters[c->cluster].spec;
    argv[o++] = g->kind == GRID_PACK ? "--policies" : "--policy";
    argv[o++] = p->policy;
    for (size_t k = 0; k < p->n_opts; k++) {
        argv[o++] = "--policy-opt";
        argv[o++] = p->opts[k];
    }
    for (size_t a = 0; a < g->n_axes; a++) {
        const grid_axis *ax = &g->axes[a];
        const char *v = ax->values[c->value[a]];
        if (ax->is_flag) {
            if (!strcmp(v, "true"))
                argv[o++] = ax->flag;
            continue;
        }
        argv[o++] = ax->flag;
        argv[o++] = (char *)v;
    }
    snprintf(seed_buf, 24, "%llu", (unsigned long long)c->seed);
    argv[o++] = g->kind == GRID_PACK ? "--seeds" : "--seed";
    argv[o++] = seed_buf;
    argv[o++] = "--out";
    argv[o++] = (char *)dir;
    if (g->kind == GRID_PACK) {
        argv[o++] = "--no-figure";
    } else {
        argv[o++] = "--quiet";
    }
    argv[o] = NULL;
    return o;
}

void grid_cell_config(const grid *g, const grid_cell *c, size_t skip_axis, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (n < size)                                                                              \
            n += (size_t)snprintf(buf + n, size - n, __VA_ARGS__);                                 \
    } while (0)
    if (g->n_traces > 1)
        ADD("%s", g->traces[c->trace].name);
    if (g->n_clusters > 1)
        ADD("%s%s", n ? " " : "", g->clusters[c->cluster].name);
    for (size_t a = 0; a < g->n_axes; a++)
        if (g->axes[a].n_values > 1 && a != skip_axis)
            ADD("%s%s=%s", n ? " " : "", g->axes[a].name, g->axes[a].short_values[c->value[a]]);
    if (!n)
        ADD("%s %s", g->traces[c->trace].name, g->clusters[c->cluster].name);
#undef ADD
}
