/*
 * line.c: rows assembled in memory (see line.h).
 */
#include "base/line.h"

#include "base/alloc.h"
#include "base/numfmt.h"
#include "base/textout.h"
#include "base/types.h"

#include <string.h>

bool sim_line_grow(sim_line *l, size_t n)
{
    if (l->oom)
        return false;
    size_t cap = l->cap ? l->cap : 256;
    while (cap - l->len < n) {
        if (cap > SIZE_MAX / 2) {
            l->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *b = sim_reallocarray(l->buf, cap, 1);
    if (!b) {
        l->oom = true;
        return false;
    }
    l->buf = b;
    l->cap = cap;
    return true;
}

static void put_bytes(sim_line *l, const char *s, size_t n)
{
    /* Nothing to copy: a fresh line has no buffer yet. */
    if (n && sim_line_room(l, n)) {
        memcpy(l->buf + l->len, s, n);
        l->len += n;
    }
}

void sim_line_str(sim_line *l, const char *s)
{
    put_bytes(l, s, strlen(s));
}

void sim_line_csv(sim_line *l, const char *s)
{
    size_t n = strlen(s);
    if (!sim_csv_needs_quotes(s)) {
        put_bytes(l, s, n);
        return;
    }
    /* At most every byte doubled, and the two quotes. */
    if (n > (SIZE_MAX - 2) / 2 || !sim_line_room(l, 2 * n + 2)) {
        l->oom = true;
        return;
    }
    char *p = l->buf + l->len;
    *p++ = '"';
    for (; *s; s++) {
        if (*s == '"')
            *p++ = '"';
        *p++ = *s;
    }
    *p++ = '"';
    l->len = (size_t)(p - l->buf);
}

void sim_line_u64(sim_line *l, uint64_t u)
{
    if (sim_line_room(l, SIM_FMT_U64_MAX))
        l->len += sim_fmt_u64(l->buf + l->len, u);
}

void sim_line_i64(sim_line *l, int64_t i)
{
    if (i < 0)
        sim_line_char(l, '-');
    sim_line_u64(l, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
}

void sim_line_fixed(sim_line *l, double x, unsigned digits)
{
    if (!sim_line_room(l, SIM_FMT_FIXED_MAX))
        return;
    size_t n = sim_fmt_fixed(l->buf + l->len, x, digits);
    if (n) {
        l->len += n;
        return;
    }
    /* Beyond the integer path (huge, not finite, or over 9 digits): printf's own. */
    int need = snprintf(NULL, 0, "%.*f", (int)digits, x);
    if (need < 0 || !sim_line_room(l, (size_t)need + 1)) {
        l->oom = true;
        return;
    }
    snprintf(l->buf + l->len, (size_t)need + 1, "%.*f", (int)digits, x);
    l->len += (size_t)need;
}

int sim_line_put(sim_line *l, FILE *f)
{
    int st = SIM_OK;
    if (l->oom)
        st = SIM_ENOMEM;
    else if (l->len && fwrite(l->buf, 1, l->len, f) != l->len)
        st = SIM_EIO;
    l->len = 0;
    l->oom = false;
    return st != SIM_OK ? st : ferror(f) ? SIM_EIO : SIM_OK;
}

void sim_line_free(sim_line *l)
{
    sim_free(l->buf);
    *l = (sim_line){0};
}
