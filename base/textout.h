/*
 * textout.h: the two text encodings every output of clustersim uses — a CSV field,
 * quoted only when it must be (RFC 4180), and a JSON string literal (RFC 8259). One
 * definition each, so all files quote the same way.
 */
#ifndef BASE_TEXTOUT_H
#define BASE_TEXTOUT_H

#include <stdbool.h>
#include <stdio.h>

/* Whether s must be quoted as a CSV field: it holds a comma, a quote or a line break. */
bool sim_csv_needs_quotes(const char *s);

/* Write s as a CSV field: as is, or quoted with inner quotes doubled when it holds a
 * comma, a quote or a line break. */
void sim_csv_put_field(FILE *f, const char *s);

/* Write s as a JSON string literal: quotes and backslashes escaped, control characters
 * as \uXXXX, other bytes (UTF-8) as they are. */
void sim_json_put_string(FILE *f, const char *s);

#endif
