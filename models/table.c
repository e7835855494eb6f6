/*
 * table.c: header mapping, field access and CSV writing shared by the models/ readers
 * and derivation tools (see table_int.h). Field values are never copied here; the
 * csvin row owns them until the next read.
 */
#include "models/table_int.h"

#include <ctype.h>
#include <string.h>

int model__table_open(csvin **in, const char *path, const char *const *cols, size_t n,
                      const bool *required, const char *expected, int32_t *ix, uint32_t *n_header,
                      sim_diag *d)
{
    int st = csvin_open(in, path, ',', d);
    if (st != SIM_OK)
        return st;
    csvin_row row;
    st = csvin_next(*in, &row, d);
    if (st == 0)
        st =
            sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected the header %s", expected);
    if (st < 0)
        goto out_close;
    if ((st = csvin_map_header(*in, &row, cols, n, ix, NULL, d)) != SIM_OK)
        goto out_close;
    for (size_t i = 0; i < n; i++)
        if (ix[i] < 0 && (!required || required[i])) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "missing column '%s'; expected the header %s", cols[i], expected);
            goto out_close;
        }
    if (n_header)
        *n_header = row.n;
    return SIM_OK;
out_close:
    csvin_close(*in);
    *in = NULL;
    return st;
}

int model__table_next(csvin *in, csvin_row *row, uint32_t n_header, sim_diag *d)
{
    int st = csvin_next(in, row, d);
    if (st == 1 && (st = csvin_row_width(in, row, n_header, d)) == SIM_OK)
        st = 1;
    return st;
}

const char *model__field(const csvin_row *row, int32_t col)
{
    return col >= 0 && (uint32_t)col < row->n ? row->f[col] : "";
}

bool model__str_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

int model__check_write(FILE *f, const char *what, sim_diag *d)
{
    if (fflush(f) != 0 || ferror(f))
        return sim_diag_set(d, SIM_EIO, what, 0, 0, "cannot write");
    return SIM_OK;
}
