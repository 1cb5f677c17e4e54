/* harness.c: the test harness around regex.c and glob.c, a WASI reactor whose
 * exports the Go tests call. Inputs are written into buf; re_test and
 * glob_test read them from there. */
#include <string.h>

#include "../../glob.h"
#include "../../regex.h"

static char buf[1 << 20];
static char errbuf[1 << 16];

__attribute__((export_name("buf"))) char *h_buf(void) { return buf; }

__attribute__((export_name("errbuf"))) char *h_errbuf(void) { return errbuf; }

/* re_test compiles buf[0:pn] and matches it against each of the lines that
 * follow it: nlines strings of lens[i] bytes, lens being ints at buf+lensoff.
 * It returns -1 when compiling fails (errbuf holds the error), else the
 * number of lines that match; results[i] (bytes at buf+resoff) say which. */
__attribute__((export_name("re_test"))) int re_test(int pn, int icase, int nlines, int lensoff, int resoff) {
    struct re *re;
    const int *lens = (const int *)(buf + lensoff);
    const char *at = buf + pn;
    int i, n = 0;
    if (re_compile(&re, buf, (size_t)pn, icase, errbuf, sizeof errbuf) != 0) return -1;
    for (i = 0; i < nlines; i++) {
        int m = re_match(re, at, (size_t)lens[i]);
        buf[resoff + i] = (char)m;
        n += m;
        at += lens[i];
    }
    re_free(re);
    return n;
}

/* glob_test returns 2*glob_valid + glob_match for pattern buf[0:pn] and path
 * buf[pn:pn+n]. */
__attribute__((export_name("glob_test"))) int glob_test(int pn, int n) {
    return 2 * glob_valid(buf, (size_t)pn) + glob_match(buf, (size_t)pn, buf + pn, (size_t)n);
}

/* err_len returns the length of the error text in errbuf. */
__attribute__((export_name("err_len"))) int err_len(void) { return (int)strlen(errbuf); }
