/*
 * textout.c: CSV fields and JSON strings for the outputs (see textout.h).
 */
#include "base/textout.h"

#include <string.h>

bool sim_csv_needs_quotes(const char *s)
{
    return strpbrk(s, ",\"\r\n") != NULL;
}

void sim_csv_put_field(FILE *f, const char *s)
{
    if (!sim_csv_needs_quotes(s)) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void sim_json_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
