/*
 * table_int.h: helpers shared by the models/ files that read small CSV tables (spec
 * sheets, measurements, calibration files) and write derived ones. Private to models/.
 * Reading goes through base/csvin.h, so every bad field is reported as
 * file:line:column with the field name, what was expected and what was found.
 */
#ifndef MODELS_TABLE_INT_H
#define MODELS_TABLE_INT_H

#include "base/csvin.h"

#include <stdio.h>

/*
 * Open `path` and map its header to `cols` (n names): ix[i] = column of cols[i] or -1.
 * A column with required[i] true (all when required is NULL) must be present, else
 * SIM_EPARSE naming it and the expected header `expected`. On success *in is open and
 * *n_header (when not NULL) holds the header's field count, for model__table_next.
 */
int model__table_open(csvin **in, const char *path, const char *const *cols, size_t n,
                      const bool *required, const char *expected, int32_t *ix, uint32_t *n_header,
                      sim_diag *d);

/* The next data row (as csvin_next: 1, 0 at the end, or a negative SIM_E*), which must
 * have the header's n_header fields: a short or long row is SIM_EPARSE at its line and
 * column, as in traces. */
int model__table_next(csvin *in, csvin_row *row, uint32_t n_header, sim_diag *d);

/* Field col of row as a string ("" when the column is absent or the row is short). */
const char *model__field(const csvin_row *row, int32_t col);

/* Case-insensitive ASCII equality. */
bool model__str_ieq(const char *a, const char *b);

/* SIM_EIO with d filled when f has a write error, else SIM_OK. */
int model__check_write(FILE *f, const char *what, sim_diag *d);

#endif
