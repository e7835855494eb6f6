/*
 * gavel_lp.c: Gavel's max-min fairness LP with GLPK (see gavel_lp.h).
 */
#include "policies/gavel_lp.h"

#include <glpk.h>
#include <math.h>
#include "base/alloc.h"

int gavel_lp_solve(uint32_t n, uint32_t m, const double *coef, const double *scale,
                   const double *workers, double *x, double *t)
{
    if (n == 0 || m == 0)
        return SIM_EINVAL;
    size_t nm = (size_t)n * m;
    /* Rows: n fairness, n time budgets, m worker counts. Columns: n x m, then t. */
    size_t nz_cap = 3 * nm + n + 1;
    int *ia = sim_malloc((nz_cap + 1) * sizeof *ia), *ja = sim_malloc((nz_cap + 1) * sizeof *ja);
    double *ar = sim_malloc((nz_cap + 1) * sizeof *ar);
    if (!ia || !ja || !ar) {
        sim_free(ia);
        sim_free(ja);
        sim_free(ar);
        return SIM_ENOMEM;
    }
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_rows(lp, (int)(2 * n + m));
    glp_add_cols(lp, (int)(nm + 1));
    int tcol = (int)nm + 1;
    for (uint32_t i = 0; i < n; i++) {
        glp_set_row_bnds(lp, (int)i + 1, GLP_UP, 0.0, 0.0);
        glp_set_row_bnds(lp, (int)(n + i) + 1, GLP_UP, 0.0, 1.0);
    }
    for (uint32_t j = 0; j < m; j++)
        glp_set_row_bnds(lp, (int)(2 * n + j) + 1, GLP_UP, 0.0, workers[j]);
    for (size_t c = 0; c < nm; c++)
        glp_set_col_bnds(lp, (int)c + 1, GLP_DB, 0.0, 1.0);
    glp_set_col_bnds(lp, tcol, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, tcol, 1.0);
    int k = 0;
    for (uint32_t i = 0; i < n; i++) {
        ++k;
        ia[k] = (int)i + 1, ja[k] = tcol, ar[k] = 1.0;
        for (uint32_t j = 0; j < m; j++) {
            int col = (int)((size_t)i * m + j) + 1;
            ++k;
            ia[k] = (int)i + 1, ja[k] = col, ar[k] = -coef[(size_t)i * m + j];
            ++k;
            ia[k] = (int)(n + i) + 1, ja[k] = col, ar[k] = 1.0;
            ++k;
            ia[k] = (int)(2 * n + j) + 1, ja[k] = col, ar[k] = scale[i];
        }
    }
    glp_load_matrix(lp, k, ia, ja, ar);
    sim_free(ia);
    sim_free(ja);
    sim_free(ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int rc = glp_simplex(lp, &parm);
    int st = SIM_OK;
    if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
        st = SIM_EPOLICY;
    } else {
        for (size_t c = 0; c < nm; c++) {
            double v = glp_get_col_prim(lp, (int)c + 1);
            x[c] = v < 0 ? 0 : v > 1 ? 1 : v;
        }
        *t = glp_get_obj_val(lp);
    }
    glp_delete_prob(lp);
    return st;
}

/* The LP of one GPU type in closed form. Each job needs x_i >= t / coef_i for t, so the
 * optimum is t* = min(min_i coef_i, workers / sum_i scale_i / coef_i), and x_i = t* /
 * coef_i is optimal: the only optimum when the workers bind, else the least one (the
 * jobs' shares above it are free), which is the vertex GLPK's simplex returns. False
 * (nothing written) for a coefficient that is not a positive finite number. */
static bool single_type(uint32_t n, const double *coef, const double *scale, double workers,
                        double *x)
{
    double least = INFINITY, need = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(coef[i] > 0) || !isfinite(coef[i]))
            return false;
        if (coef[i] < least)
            least = coef[i];
        need += scale[i] / coef[i];
    }
    double t = workers / need < least ? workers / need : least;
    for (uint32_t i = 0; i < n; i++)
        x[i] = t / coef[i];
    return true;
}

int gavel_allocation(uint32_t n, uint32_t m, const double *tput, const double *scale,
                     const double *priority, const double *workers, double *work, double *x)
{
    /* Each job's throughput under the proportional allocation, every type's time in
     * proportion to its GPUs. */
    double gpus = 0.0;
    for (uint32_t j = 0; j < m; j++)
        gpus += workers[j];
    for (uint32_t i = 0; i < n; i++) {
        double prop = 0.0;
        for (uint32_t j = 0; j < m; j++)
            prop += gpus > 0 ? tput[(size_t)i * m + j] * workers[j] / gpus : 0.0;
        for (uint32_t j = 0; j < m; j++)
            work[(size_t)i * m + j] =
                prop > 0 ? tput[(size_t)i * m + j] * scale[i] / (priority[i] * prop) : 0.0;
    }
    if (n > 0 && m == 1 && single_type(n, work, scale, workers[0], x))
        return SIM_OK;
    double t;
    return gavel_lp_solve(n, m, work, scale, workers, x, &t);
}
