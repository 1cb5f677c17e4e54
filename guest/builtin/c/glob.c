/* glob.c: a port of doublestar v4's Match and ValidatePattern (separator '/',
 * validating, case-sensitive). The structure follows the library's
 * doMatchWithSeparator closely so that the two agree on every input,
 * malformed patterns included: a single forward scan with one '*' and one '**'
 * backtrack point, and a recursive call per '{...}' alternative on the pattern
 * with that alternative spliced in. */
#include "glob.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>


/* decode is utf8_decode for this file's unsigned bytes and int widths. */
static int decode(const unsigned char *s, size_t n, int *width) {
    size_t w;
    int r = utf8_decode((const char *)s, n, &w);
    *width = (int)w;
    return r;
}

int glob_valid(const char *pat, size_t n) {
    int depth = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        switch (pat[i]) {
        case '\\':
            if (++i >= n) return 0;
            break;
        case '[':
            if (++i >= n) return 0;
            if (pat[i] == '^' || pat[i] == '!') i++;
            if (i >= n || pat[i] == ']') return 0;
            for (; i < n; i++) {
                if (pat[i] == '\\') i++;
                else if (pat[i] == ']') break;
            }
            if (i >= n) return 0;
            break;
        case '{':
            depth++;
            break;
        case '}':
            if (depth == 0) return 0;
            depth--;
            break;
        }
    }
    return depth == 0;
}

/* closing_alt returns the index in s of the '}' that closes an alternative
 * group whose '{' precedes s, or -1. */
static long closing_alt(const char *s, size_t l) {
    int alts = 1;
    size_t i;
    for (i = 0; i < l; i++) {
        if (s[i] == '\\') {
            i++;
        } else if (s[i] == '[') {
            for (i++; i < l; i++) {
                if (s[i] == '\\') i++;
                else if (s[i] == ']') break;
            }
        } else if (s[i] == '{') {
            alts++;
        } else if (s[i] == '}') {
            if (--alts == 0) return (long)i;
        }
    }
    return -1;
}

/* next_alt returns the index in s of the ',' that ends the first alternative
 * at this nesting level, or -1. */
static long next_alt(const char *s, size_t l) {
    int alts = 1;
    size_t i;
    for (i = 0; i < l; i++) {
        if (s[i] == '\\') {
            i++;
        } else if (s[i] == '[') {
            for (i++; i < l; i++) {
                if (s[i] == '\\') i++;
                else if (s[i] == ']') break;
            }
        } else if (s[i] == '{') {
            alts++;
        } else if (s[i] == '}') {
            alts--;
        } else if (s[i] == ',' && alts == 1) {
            return (long)i;
        }
    }
    return -1;
}

/* index_unescaped returns the index of the first c in s not escaped by '\',
 * or -1. */
static long index_unescaped(const char *s, size_t l, char c) {
    size_t i;
    for (i = 0; i < l; i++) {
        if (s[i] == '\\') i++;
        else if (s[i] == c) return (long)i;
    }
    return -1;
}

/* Results of the internal matchers: doublestar's (bool, error) pair. */
enum { NOMATCH = 0, MATCH = 1, BAD = -1 };

/* splice returns a new string a[0:an] + b[0:bn] + c[0:cn], or NULL when out
 * of memory. */
static char *splice(const char *a, size_t an, const char *b, size_t bn,
                    const char *c, size_t cn) {
    char *s = malloc(an + bn + cn + 1);
    if (s == NULL) return NULL;
    memcpy(s, a, an);
    memcpy(s + an, b, bn);
    memcpy(s + an + bn, c, cn);
    return s;
}

/* zero_length reports whether pattern p (l bytes) matches an empty rest of
 * a path: isZeroLengthPattern. */
static int zero_length(const char *p, size_t l) {
    long close, comma;
    size_t at;
    char *alt;
    int r;
    switch (l) {
    case 0: return MATCH;
    case 1: if (p[0] == '*') return MATCH; break;
    case 2: if (p[0] == '*' && p[1] == '*') return MATCH; break;
    case 3:
        if (p[1] == '*' && p[2] == '*' && p[0] == '/') return MATCH;
        if (p[0] == '*' && p[1] == '*' && p[2] == '/') return MATCH;
        break;
    case 4:
        if (p[1] == '*' && p[2] == '*' && p[0] == '/' && p[3] == '/') return MATCH;
        break;
    }
    if (p[0] == '{') {
        close = closing_alt(p + 1, l - 1);
        if (close < 0) return BAD;
        close += 1;
        at = 1;
        for (;;) {
            comma = next_alt(p + at, (size_t)close - at);
            if (comma < 0) break;
            comma += (long)at;
            alt = splice(p + at, (size_t)comma - at, p + close + 1, l - (size_t)close - 1, "", 0);
            if (alt == NULL) return BAD;
            r = zero_length(alt, l - (size_t)close - 1 + (size_t)comma - at);
            free(alt);
            if (r != NOMATCH) return r;
            at = (size_t)comma + 1;
        }
        alt = splice(p + at, (size_t)close - at, p + close + 1, l - (size_t)close - 1, "", 0);
        if (alt == NULL) return BAD;
        r = zero_length(alt, l - (size_t)close - 1 + (size_t)close - at);
        free(alt);
        return r;
    }
    return glob_valid(p, l) ? NOMATCH : BAD;
}

/* State of one scan: doMatchWithSeparator's arguments. */
struct scan {
    const char *pat;
    size_t plen;
    const char *name;
    size_t nlen;
    long dsPat, dsName, starPat, starName; /* backtrack points, -1 if none */
    size_t pi, ni;
};

static int do_match(struct scan s);

/* match_class matches the class at s->pat[s->pi] (just past '[') against the
 * next rune of the name. It returns MATCH and advances past the class, NOMATCH
 * when the rune is not in the class, or BAD. */
static int match_class(struct scan *s) {
    const unsigned char *p = (const unsigned char *)s->pat;
    size_t pi = s->pi, pl = s->plen;
    int nw, pw, nr, pr, last = 0x10FFFF, matched = 0, negate;
    long close;
    if (pi >= pl) return BAD;
    nr = decode((const unsigned char *)s->name + s->ni, s->nlen - s->ni, &nw);
    negate = p[pi] == '!' || p[pi] == '^';
    if (negate) pi++;
    if (pi >= pl || p[pi] == ']') return BAD;
    while (pi < pl && p[pi] != ']') {
        pr = decode(p + pi, pl - pi, &pw);
        pi += (size_t)pw;
        if (last < 0x10FFFF && pr == '-' && pi < pl && p[pi] != ']') {
            if (p[pi] == '\\') pi++;
            pr = decode(p + pi, pl - pi, &pw);
            pi += (size_t)pw;
            if (last <= nr && nr <= pr) { matched = 1; break; }
            last = 0x10FFFF;
            continue;
        }
        if (pr == '\\') {
            pr = decode(p + pi, pl - pi, &pw);
            pi += (size_t)pw;
        }
        if (pr == nr) { matched = 1; break; }
        last = pr;
    }
    if (matched == negate) {
        s->pi = pi;
        return pi >= pl ? BAD : NOMATCH;
    }
    close = pi <= pl ? index_unescaped(s->pat + pi, pl - pi, ']') : -1;
    if (close < 0) return BAD;
    s->pi = pi + (size_t)close + 1;
    s->ni += (size_t)nw;
    return MATCH;
}

/* match_alts tries each alternative of the group whose '{' is at s->pi. */
static int match_alts(struct scan s) {
    size_t before = s.pi, at = s.pi + 1, tail;
    long close, comma;
    struct scan sub = s;
    char *alt;
    int r;
    close = closing_alt(s.pat + at, s.plen - at);
    if (close < 0) return BAD;
    close += (long)at;
    tail = s.plen - (size_t)close - 1;
    sub.pi = before;
    for (;;) {
        comma = next_alt(s.pat + at, (size_t)close - at);
        if (comma >= 0) comma += (long)at;
        else comma = close;
        alt = splice(s.pat, before, s.pat + at, (size_t)comma - at, s.pat + close + 1, tail);
        if (alt == NULL) return BAD;
        sub.pat = alt;
        sub.plen = before + ((size_t)comma - at) + tail;
        r = do_match(sub);
        free(alt);
        if (r != NOMATCH || comma == close) return r;
        at = (size_t)comma + 1;
    }
}

/* backtrack moves the scan to its next candidate after a mismatch: the last
 * '*' takes one more rune, else the last '**' one more segment. It returns 0
 * when there is none. */
static int backtrack(struct scan *s, int *seg) {
    int w, r;
    if (s->starPat >= 0) {
        r = decode((const unsigned char *)s->name + s->starName, s->nlen - (size_t)s->starName, &w);
        if (r != '/') {
            s->starName += w;
            s->pi = (size_t)s->starPat;
            s->ni = (size_t)s->starName;
            *seg = 0;
            return 1;
        }
    }
    if (s->dsPat >= 0) {
        s->ni = (size_t)s->dsName;
        while (s->ni < s->nlen) {
            r = decode((const unsigned char *)s->name + s->ni, s->nlen - s->ni, &w);
            s->ni += (size_t)w;
            if (r == '/') {
                s->dsName = (long)s->ni;
                s->pi = (size_t)s->dsPat;
                *seg = 1;
                return 1;
            }
        }
    }
    return 0;
}

/* step matches one pattern element at s->pi against the name. It returns
 * MATCH when it consumed something, NOMATCH on a mismatch, BAD, or 2 when
 * the whole match is decided by *result (a '**' at the end, or '{'). */
static int step(struct scan *s, int *seg, int *result) {
    const unsigned char *p = (const unsigned char *)s->pat;
    int pw, nw, pr, nr;
    switch (p[s->pi]) {
    case '*':
        if (++s->pi < s->plen && p[s->pi] == '*') {
            s->pi++;
            if (*seg) {
                if (s->pi >= s->plen) { *result = MATCH; return 2; }
                pr = decode(p + s->pi, s->plen - s->pi, &pw);
                if (pr == '/') {
                    s->pi += (size_t)pw;
                    s->dsPat = (long)s->pi;
                    s->dsName = (long)s->ni;
                    s->starPat = s->starName = -1;
                    return MATCH;
                }
            }
        }
        *seg = 0;
        s->starPat = (long)s->pi;
        s->starName = (long)s->ni;
        return MATCH;
    case '?':
        *seg = 0;
        nr = decode((const unsigned char *)s->name + s->ni, s->nlen - s->ni, &nw);
        if (nr == '/') return NOMATCH;
        s->pi++;
        s->ni += (size_t)nw;
        return MATCH;
    case '[':
        *seg = 0;
        s->pi++;
        return match_class(s);
    case '{':
        *result = match_alts(*s);
        return 2;
    case '\\':
        if (++s->pi >= s->plen) return BAD;
        /* fall through */
    default:
        pr = decode(p + s->pi, s->plen - s->pi, &pw);
        nr = decode((const unsigned char *)s->name + s->ni, s->nlen - s->ni, &nw);
        if (pr != nr) {
            if (s->pi > 0 && p[s->pi - 1] == '\\') s->pi--;
            return NOMATCH;
        }
        s->pi += (size_t)pw;
        s->ni += (size_t)nw;
        *seg = pr == '/';
        return MATCH;
    }
}

static int do_match(struct scan s) {
    int seg = s.pi == 0 || s.pat[s.pi - 1] == '/';
    int r, result = NOMATCH;
    while (s.ni < s.nlen) {
        if (s.pi < s.plen) {
            r = step(&s, &seg, &result);
            if (r == 2) return result;
            if (r == BAD) return BAD;
            if (r == MATCH) continue;
        }
        if (backtrack(&s, &seg)) continue;
        if (s.pi < s.plen && !glob_valid(s.pat + s.pi, s.plen - s.pi)) return BAD;
        return NOMATCH;
    }
    return zero_length(s.pat + s.pi, s.plen - s.pi);
}

int glob_match(const char *pat, size_t pn, const char *path, size_t n) {
    struct scan s;
    s.pat = pat;
    s.plen = pn;
    s.name = path;
    s.nlen = n;
    s.dsPat = s.dsName = s.starPat = s.starName = -1;
    s.pi = s.ni = 0;
    return do_match(s) == MATCH;
}
