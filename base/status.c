/*
 * status.c: status names and diagnostics. Library code fills a sim_diag; only main()
 * prints it.
 */
#include "base/types.h"

#include <stdarg.h>
#include <stdio.h>

const char *sim_strerror(int status)
{
    switch (status) {
    case SIM_OK:
        return "SIM_OK";
    case SIM_EINVAL:
        return "SIM_EINVAL";
    case SIM_ENOMEM:
        return "SIM_ENOMEM";
    case SIM_EIO:
        return "SIM_EIO";
    case SIM_EPARSE:
        return "SIM_EPARSE";
    case SIM_ELIMIT:
        return "SIM_ELIMIT";
    case SIM_EPOLICY:
        return "SIM_EPOLICY";
    default:
        return "SIM_E?";
    }
}

int sim_diag_set(sim_diag *d, int status, const char *file, long line, int column, const char *fmt,
                 ...)
{
    if (!d)
        return status;
    /* A file named by an empty string (an unset shell variable, most often) is shown as
     * such, not left out as if the message named no file. */
    snprintf(d->file, sizeof d->file, "%s",
             file ? (file[0] ? file : "\"\" (an empty file name)") : "");
    d->line = line;
    d->column = column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return status;
}

const char *sim_diag_format(const sim_diag *d, char *buf, size_t size)
{
    if (d->file[0] && d->line > 0 && d->column > 0)
        snprintf(buf, size, "%s:%ld:%d: error: %s", d->file, d->line, d->column, d->msg);
    else if (d->file[0] && d->line > 0)
        snprintf(buf, size, "%s:%ld: error: %s", d->file, d->line, d->msg);
    else if (d->file[0])
        snprintf(buf, size, "%s: error: %s", d->file, d->msg);
    else
        snprintf(buf, size, "error: %s", d->msg);
    return buf;
}
