/* regex.c: Go's RE2 regular-expression syntax, compiled to an NFA program and
 * matched by simulating every thread at once (the Pike VM without captures).
 *
 * The parser is a port of Go's regexp/syntax parser (parse.go) with the Perl
 * flags regexp.Compile uses, written so that the same patterns are refused
 * with the same words. It builds a tree on an explicit stack, as Go's does;
 * the compiler expands counted repetitions into copies, as Go's simplify does;
 * the matcher keeps a set of program counters per input position, so its time
 * is linear in the input for a given program. Since the only question is
 * whether a match exists, no captures or thread priorities are tracked. */
#include "regex.h"
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "regex_tables.h"

#define MAX_RUNE 0x10FFFF
#define MIN_FOLD 0x0041
#define MAX_FOLD 0x1E943

/* Go's limits: repeat counts, nesting depth, and program size (maxSize). */
#define MAX_REPEAT 1000
#define MAX_HEIGHT 1000
#define GO_MAX_SIZE ((128 << 20) / 40)
/* MAX_INST bounds the compiled program here, below Go's limit, so that a
 * pattern cannot make a small instance allocate hundreds of megabytes. */
#define MAX_INST (1 << 20)

/* Parse flags, with Go's bit values (parsePerlFlags inverts them whole). */
enum {
    F_FOLD = 1, F_LITERAL = 2, F_CLASSNL = 4, F_DOTNL = 8, F_ONELINE = 16,
    F_NONGREEDY = 32, F_PERLX = 64, F_UNICODE = 128, F_WASDOLLAR = 256,
    F_PERL = F_CLASSNL | F_ONELINE | F_PERLX | F_UNICODE
};

/* Node operators; those from OP_PSEUDO on live only on the parse stack. */
enum {
    OP_NOMATCH = 1, OP_EMPTY, OP_LITERAL, OP_CLASS, OP_BOL, OP_EOL, OP_BOT,
    OP_EOT, OP_WORDB, OP_NWORDB, OP_CAPTURE, OP_STAR, OP_PLUS, OP_QUEST,
    OP_REPEAT, OP_CONCAT, OP_ALT, OP_PSEUDO = 64, OP_LPAREN, OP_VBAR
};

/* Go's error codes. */
static const char E_CLASS_RANGE[] = "invalid character class range";
static const char E_ESCAPE[] = "invalid escape sequence";
static const char E_NAMED[] = "invalid named capture";
static const char E_PERL_OP[] = "invalid or unsupported Perl syntax";
static const char E_REPEAT_OP[] = "invalid nested repetition operator";
static const char E_REPEAT_SIZE[] = "invalid repeat count";
static const char E_UTF8[] = "invalid UTF-8";
static const char E_BRACKET[] = "missing closing ]";
static const char E_PAREN[] = "missing closing )";
static const char E_REPEAT_ARG[] = "missing argument to repetition operator";
static const char E_BACKSLASH[] = "trailing backslash at end of expression";
static const char E_UNEXPECTED_PAREN[] = "unexpected )";
static const char E_NESTING[] = "expression nests too deeply";
static const char E_LARGE[] = "expression too large";
static const char E_UNICODE[] = "Unicode classes are not supported, use explicit ranges";
static const char E_MEMORY[] = "out of memory";

/* ---- UTF-8 and case folding ---- */

/* decode is utf8_decode for this file's unsigned bytes and int widths. */
static int decode(const unsigned char *s, size_t n, int *width) {
    size_t w;
    int r = utf8_decode((const char *)s, n, &w);
    *width = (int)w;
    return r;
}

/* valid_at reports whether s (n > 0 bytes) starts with a valid rune. */
static int valid_at(const unsigned char *s, size_t n) {
    int w;
    return !(decode(s, n, &w) == RUNE_ERROR && w == 1);
}

/* simple_fold is Go's unicode.SimpleFold: the next rune of r's case orbit. */
static int simple_fold(int r) {
    size_t lo = 0, hi = sizeof fold_table / sizeof fold_table[0];
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (fold_table[m][1] < r) lo = m + 1;
        else hi = m;
    }
    if (lo == sizeof fold_table / sizeof fold_table[0] || fold_table[lo][0] > r) return r;
    if (fold_table[lo][2] != 0) return r + fold_table[lo][2];
    return (r - fold_table[lo][0]) % 2 == 0 ? r + 1 : r - 1;
}

/* ---- rune ranges ---- */

/* A class is a vector of [lo, hi] pairs. */
struct ranges {
    int *r;
    size_t n, cap; /* in ints, two per range */
    int oom;
};

static void rg_push(struct ranges *c, int lo, int hi) {
    if (c->n + 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        int *r = realloc(c->r, cap * sizeof *r);
        if (r == NULL) { c->oom = 1; return; }
        c->r = r;
        c->cap = cap;
    }
    c->r[c->n++] = lo;
    c->r[c->n++] = hi;
}

/* rg_add is Go's appendRange: it merges with either of the last two ranges
 * when it can, to keep runs of single runes short. */
static void rg_add(struct ranges *c, int lo, int hi) {
    size_t i;
    for (i = 2; i <= 4; i += 2) {
        if (c->n >= i) {
            int *p = c->r + c->n - i;
            if (lo <= p[1] + 1 && p[0] <= hi + 1) {
                if (lo < p[0]) p[0] = lo;
                if (hi > p[1]) p[1] = hi;
                return;
            }
        }
    }
    rg_push(c, lo, hi);
}

/* rg_add_folded is Go's appendFoldedRange: the range and every rune's case
 * orbit. */
static void rg_add_folded(struct ranges *c, int lo, int hi) {
    int ch, f;
    if ((lo <= MIN_FOLD && hi >= MAX_FOLD) || hi < MIN_FOLD || lo > MAX_FOLD) {
        rg_add(c, lo, hi);
        return;
    }
    if (lo < MIN_FOLD) { rg_add(c, lo, MIN_FOLD - 1); lo = MIN_FOLD; }
    if (hi > MAX_FOLD) { rg_add(c, MAX_FOLD + 1, hi); hi = MAX_FOLD; }
    for (ch = lo; ch <= hi; ch++) {
        rg_add(c, ch, ch);
        for (f = simple_fold(ch); f != ch; f = simple_fold(f)) rg_add(c, f, f);
    }
}

static int cmp_range(const void *a, const void *b) {
    const int *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1]) return x[1] > y[1] ? -1 : 1;
    return 0;
}

/* rg_clean sorts the ranges and merges those that overlap or touch. */
static void rg_clean(struct ranges *c) {
    size_t i, w = 2;
    if (c->n < 4) return;
    qsort(c->r, c->n / 2, 2 * sizeof(int), cmp_range);
    for (i = 2; i < c->n; i += 2) {
        int lo = c->r[i], hi = c->r[i + 1];
        if (lo <= c->r[w - 1] + 1) {
            if (hi > c->r[w - 1]) c->r[w - 1] = hi;
            continue;
        }
        c->r[w] = lo;
        c->r[w + 1] = hi;
        w += 2;
    }
    c->n = w;
}

/* rg_negate replaces clean ranges with their complement in 0..MAX_RUNE. */
static void rg_negate(struct ranges *c) {
    int next = 0;
    size_t i, w = 0;
    for (i = 0; i < c->n; i += 2) {
        int lo = c->r[i], hi = c->r[i + 1];
        if (next <= lo - 1) {
            c->r[w++] = next;
            c->r[w++] = lo - 1;
        }
        next = hi + 1;
    }
    c->n = w;
    if (next <= MAX_RUNE) rg_push(c, next, MAX_RUNE);
}

/* rg_add_negated is Go's appendNegatedClass for a clean class x. */
static void rg_add_negated(struct ranges *c, const int *x, size_t xn) {
    int next = 0;
    size_t i;
    for (i = 0; i < xn; i += 2) {
        if (next <= x[i] - 1) rg_add(c, next, x[i] - 1);
        next = x[i + 1] + 1;
    }
    if (next <= MAX_RUNE) rg_add(c, next, MAX_RUNE);
}

/* ---- Perl and POSIX classes ---- */

struct group {
    const char *name;
    int sign;
    int n;        /* ints in r */
    const int *r;
};

static const int g_digit[] = {0x30, 0x39};
static const int g_space[] = {0x9, 0xa, 0xc, 0xd, 0x20, 0x20};
static const int g_word[] = {0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a};
static const int g_alnum[] = {0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a};
static const int g_alpha[] = {0x41, 0x5a, 0x61, 0x7a};
static const int g_ascii[] = {0x0, 0x7f};
static const int g_blank[] = {0x9, 0x9, 0x20, 0x20};
static const int g_cntrl[] = {0x0, 0x1f, 0x7f, 0x7f};
static const int g_graph[] = {0x21, 0x7e};
static const int g_lower[] = {0x61, 0x7a};
static const int g_print[] = {0x20, 0x7e};
static const int g_punct[] = {0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e};
static const int g_pspace[] = {0x9, 0xd, 0x20, 0x20};
static const int g_upper[] = {0x41, 0x5a};
static const int g_xdigit[] = {0x30, 0x39, 0x41, 0x46, 0x61, 0x66};

#define G(name, sign, arr) {name, sign, (int)(sizeof arr / sizeof arr[0]), arr}

static const struct group perl_groups[] = {
    G("\\d", 1, g_digit), G("\\D", -1, g_digit), G("\\s", 1, g_space),
    G("\\S", -1, g_space), G("\\w", 1, g_word), G("\\W", -1, g_word),
};

static const struct group posix_groups[] = {
    G("[:alnum:]", 1, g_alnum), G("[:^alnum:]", -1, g_alnum),
    G("[:alpha:]", 1, g_alpha), G("[:^alpha:]", -1, g_alpha),
    G("[:ascii:]", 1, g_ascii), G("[:^ascii:]", -1, g_ascii),
    G("[:blank:]", 1, g_blank), G("[:^blank:]", -1, g_blank),
    G("[:cntrl:]", 1, g_cntrl), G("[:^cntrl:]", -1, g_cntrl),
    G("[:digit:]", 1, g_digit), G("[:^digit:]", -1, g_digit),
    G("[:graph:]", 1, g_graph), G("[:^graph:]", -1, g_graph),
    G("[:lower:]", 1, g_lower), G("[:^lower:]", -1, g_lower),
    G("[:print:]", 1, g_print), G("[:^print:]", -1, g_print),
    G("[:punct:]", 1, g_punct), G("[:^punct:]", -1, g_punct),
    G("[:space:]", 1, g_pspace), G("[:^space:]", -1, g_pspace),
    G("[:upper:]", 1, g_upper), G("[:^upper:]", -1, g_upper),
    G("[:word:]", 1, g_word), G("[:^word:]", -1, g_word),
    G("[:xdigit:]", 1, g_xdigit), G("[:^xdigit:]", -1, g_xdigit),
};

/* find_group returns the group named by the l bytes at s, or NULL. */
static const struct group *find_group(const struct group *gs, size_t ng, const char *s, size_t l) {
    size_t i;
    for (i = 0; i < ng; i++) {
        if (strlen(gs[i].name) == l && memcmp(gs[i].name, s, l) == 0) return &gs[i];
    }
    return NULL;
}

/* add_group is Go's appendGroup: the group, case-folded under (?i). */
static void add_group(struct ranges *c, const struct group *g, unsigned flags) {
    struct ranges tmp = {0};
    int i;
    if (!(flags & F_FOLD)) {
        if (g->sign < 0) {
            rg_add_negated(c, g->r, (size_t)g->n);
        } else {
            for (i = 0; i < g->n; i += 2) rg_add(c, g->r[i], g->r[i + 1]);
        }
        return;
    }
    for (i = 0; i < g->n; i += 2) rg_add_folded(&tmp, g->r[i], g->r[i + 1]);
    rg_clean(&tmp);
    if (tmp.oom) c->oom = 1;
    if (g->sign < 0) {
        rg_add_negated(c, tmp.r, tmp.n);
    } else {
        for (i = 0; (size_t)i < tmp.n; i += 2) rg_add(c, tmp.r[i], tmp.r[i + 1]);
    }
    free(tmp.r);
}

/* ---- the parse tree ---- */

struct node {
    unsigned char op;
    unsigned flags;
    int min, max, cap;
    int nsub;
    int *sub;       /* node indices */
    size_t roff;    /* ranges of a literal or class: ints in the pool */
    size_t rn;
    int64_t size;   /* Go's calcSize, saturated */
    int height;
};

struct parser {
    const char *s;
    size_t n;
    unsigned flags;
    struct node *nodes;
    int nnodes, capnodes;
    int *stack;
    int nstack, capstack;
    struct ranges pool; /* the ranges of every literal and class */
    int numcap;
    const char *code;   /* error code, NULL while all is well */
    size_t eoff, elen;  /* the error's expression: s[eoff:eoff+elen] */
    int oom;
};

/* fail records an error whose expression is s[off:end]; it returns -1. */
static int fail(struct parser *p, const char *code, size_t off, size_t end) {
    if (p->code == NULL) {
        p->code = code;
        p->eoff = off;
        p->elen = end - off;
    }
    return -1;
}

static int fail_oom(struct parser *p) {
    p->oom = 1;
    return fail(p, E_MEMORY, 0, p->n);
}

static int new_node(struct parser *p, int op) {
    struct node *nd;
    if (p->nnodes == p->capnodes) {
        int cap = p->capnodes ? p->capnodes * 2 : 32;
        struct node *ns = realloc(p->nodes, (size_t)cap * sizeof *ns);
        if (ns == NULL) return fail_oom(p);
        p->nodes = ns;
        p->capnodes = cap;
    }
    nd = &p->nodes[p->nnodes];
    memset(nd, 0, sizeof *nd);
    nd->op = (unsigned char)op;
    nd->flags = p->flags;
    nd->size = 1;
    nd->height = 1;
    return p->nnodes++;
}

/* set_subs gives node i its children and computes its size and height as
 * Go's calcSize and calcHeight do. */
static int set_subs(struct parser *p, int i, const int *subs, int nsub) {
    struct node *nd = &p->nodes[i];
    int64_t size = 0, sub;
    int k;
    nd->sub = malloc((size_t)(nsub ? nsub : 1) * sizeof(int));
    if (nd->sub == NULL) return fail_oom(p);
    memcpy(nd->sub, subs, (size_t)nsub * sizeof(int));
    nd->nsub = nsub;
    for (k = 0; k < nsub; k++) {
        struct node *c = &p->nodes[subs[k]];
        if (c->height + 1 > nd->height) nd->height = c->height + 1;
        size += c->size;
    }
    sub = nsub ? p->nodes[subs[0]].size : 0;
    switch (nd->op) {
    case OP_CAPTURE: case OP_STAR: size = 2 + sub; break;
    case OP_PLUS: case OP_QUEST: size = 1 + sub; break;
    case OP_ALT: if (nsub > 1) size += nsub - 1; break;
    case OP_REPEAT:
        if (nd->max == -1) size = nd->min == 0 ? 2 + sub : 1 + (int64_t)nd->min * sub;
        else size = (int64_t)nd->max * sub + (nd->max - nd->min);
        break;
    }
    if (size > GO_MAX_SIZE) size = GO_MAX_SIZE + 1;
    nd->size = size < 1 ? 1 : size;
    return 0;
}

/* check_limits is Go's checkLimits for a node about to be pushed. */
static int check_limits(struct parser *p, int i) {
    if (p->nodes[i].size > GO_MAX_SIZE) return fail(p, E_LARGE, 0, p->n);
    if (p->nodes[i].height > MAX_HEIGHT) return fail(p, E_NESTING, 0, p->n);
    return 0;
}

static int push(struct parser *p, int i) {
    if (i < 0) return -1;
    if (p->nstack == p->capstack) {
        int cap = p->capstack ? p->capstack * 2 : 32;
        int *st = realloc(p->stack, (size_t)cap * sizeof *st);
        if (st == NULL) return fail_oom(p);
        p->stack = st;
        p->capstack = cap;
    }
    p->stack[p->nstack++] = i;
    return check_limits(p, i);
}

/* push_class pushes a node of op with the given ranges, moved to the pool. */
static int push_class(struct parser *p, int op, struct ranges *c) {
    int i;
    size_t k;
    if (c->oom) return fail_oom(p);
    i = new_node(p, op);
    if (i < 0) return -1;
    p->nodes[i].roff = p->pool.n;
    p->nodes[i].rn = c->n;
    for (k = 0; k < c->n; k += 2) rg_push(&p->pool, c->r[k], c->r[k + 1]);
    if (p->pool.oom) return fail_oom(p);
    return push(p, i);
}

static int push_literal(struct parser *p, int r) {
    struct ranges c = {0};
    int rc;
    if (p->flags & F_FOLD) {
        rg_add_folded(&c, r, r);
        rg_clean(&c);
    } else {
        rg_add(&c, r, r);
    }
    rc = push_class(p, OP_LITERAL, &c);
    free(c.r);
    return rc;
}

static int push_op(struct parser *p, int op) {
    return push(p, new_node(p, op));
}

static int push_dot(struct parser *p) {
    struct ranges c = {0};
    int rc;
    if (p->flags & F_DOTNL) {
        rg_add(&c, 0, MAX_RUNE);
    } else {
        rg_add(&c, 0, '\n' - 1);
        rg_add(&c, '\n' + 1, MAX_RUNE);
    }
    rc = push_class(p, OP_CLASS, &c);
    free(c.r);
    return rc;
}

/* collapse replaces the stack items from index from up with one node of op
 * (concatenation or alternation), flattening children of the same op. */
static int collapse(struct parser *p, int from, int op) {
    int n = p->nstack - from, total = 0, k, i, rc;
    int *subs;
    if (n == 1) return 0;
    for (k = from; k < p->nstack; k++) {
        struct node *c = &p->nodes[p->stack[k]];
        total += c->op == op ? c->nsub : 1;
    }
    subs = malloc((size_t)(total ? total : 1) * sizeof(int));
    if (subs == NULL) return fail_oom(p);
    total = 0;
    for (k = from; k < p->nstack; k++) {
        struct node *c = &p->nodes[p->stack[k]];
        if (c->op == op) {
            for (i = 0; i < c->nsub; i++) subs[total++] = c->sub[i];
        } else {
            subs[total++] = p->stack[k];
        }
    }
    p->nstack = from;
    i = new_node(p, op);
    rc = i < 0 ? -1 : set_subs(p, i, subs, total);
    free(subs);
    return rc < 0 ? -1 : push(p, i);
}

/* concat collapses the items above the innermost '(' or '|' into one. */
static int concat(struct parser *p) {
    int i = p->nstack;
    while (i > 0 && p->nodes[p->stack[i - 1]].op < OP_PSEUDO) i--;
    if (i == p->nstack) return push_op(p, OP_EMPTY);
    return collapse(p, i, OP_CONCAT);
}

/* alternate collapses the alternatives above the innermost '(' into one. */
static int alternate(struct parser *p) {
    int i = p->nstack;
    while (i > 0 && p->nodes[p->stack[i - 1]].op < OP_PSEUDO) i--;
    if (i == p->nstack) return push_op(p, OP_NOMATCH);
    return collapse(p, i, OP_ALT);
}

/* swap_vbar moves a '|' marker below the top back on top; it reports whether
 * there was one. */
static int swap_vbar(struct parser *p) {
    int n = p->nstack, t;
    if (n >= 2 && p->nodes[p->stack[n - 2]].op == OP_VBAR) {
        t = p->stack[n - 1];
        p->stack[n - 1] = p->stack[n - 2];
        p->stack[n - 2] = t;
        return 1;
    }
    return 0;
}

static int parse_vbar(struct parser *p) {
    if (concat(p) < 0) return -1;
    if (!swap_vbar(p)) return push_op(p, OP_VBAR);
    return 0;
}

/* finish_level closes the alternation of the innermost group. */
static int finish_level(struct parser *p) {
    if (concat(p) < 0) return -1;
    if (swap_vbar(p)) p->nstack--;
    return alternate(p);
}

static int parse_right_paren(struct parser *p) {
    int re1, re2;
    if (finish_level(p) < 0) return -1;
    if (p->nstack < 2) return fail(p, E_UNEXPECTED_PAREN, 0, p->n);
    re1 = p->stack[p->nstack - 1];
    re2 = p->stack[p->nstack - 2];
    p->nstack -= 2;
    if (p->nodes[re2].op != OP_LPAREN) return fail(p, E_UNEXPECTED_PAREN, 0, p->n);
    p->flags = p->nodes[re2].flags;
    if (p->nodes[re2].cap == 0) return push(p, re1);
    p->nodes[re2].op = OP_CAPTURE;
    if (set_subs(p, re2, &re1, 1) < 0) return -1;
    return push(p, re2);
}

/* repeat_valid is Go's repeatIsValid: nested counts multiply to at most n. */
static int repeat_valid(struct parser *p, int i, int n) {
    struct node *nd = &p->nodes[i];
    int k;
    if (nd->op == OP_REPEAT) {
        int m = nd->max;
        if (m == 0) return 1;
        if (m < 0) m = nd->min;
        if (m > n) return 0;
        if (m > 0) n /= m;
    }
    for (k = 0; k < nd->nsub; k++) {
        if (!repeat_valid(p, nd->sub[k], n)) return 0;
    }
    return 1;
}

/* repeat applies a repetition operator s[before:after] to the top of the
 * stack; last is where the previous operator began, or -1. It returns the
 * offset after the operator (and a lazy '?'), or -1. */
static long repeat(struct parser *p, int op, int min, int max, size_t before, size_t after, long last) {
    unsigned flags = p->flags;
    int sub, i;
    if (after < p->n && p->s[after] == '?') {
        after++;
        flags ^= F_NONGREEDY;
    }
    if (last >= 0) return fail(p, E_REPEAT_OP, (size_t)last, after);
    if (p->nstack == 0 || p->nodes[p->stack[p->nstack - 1]].op >= OP_PSEUDO) {
        return fail(p, E_REPEAT_ARG, before, after);
    }
    sub = p->stack[p->nstack - 1];
    i = new_node(p, op);
    if (i < 0) return -1;
    p->nodes[i].min = min;
    p->nodes[i].max = max;
    p->nodes[i].flags = flags;
    if (set_subs(p, i, &sub, 1) < 0) return -1;
    p->stack[p->nstack - 1] = i;
    if (check_limits(p, i) < 0) return -1;
    if (op == OP_REPEAT && (min >= 2 || max >= 2) && !repeat_valid(p, i, MAX_REPEAT)) {
        return fail(p, E_REPEAT_SIZE, before, after);
    }
    return (long)after;
}

/* parse_int is Go's parseInt: decimal digits without a leading zero; a value
 * of 1e8 or more is -1. It returns the offset after the digits, or -1. */
static long parse_int(struct parser *p, size_t at, int *v) {
    size_t start = at;
    *v = 0;
    if (at >= p->n || p->s[at] < '0' || p->s[at] > '9') return -1;
    if (at + 1 < p->n && p->s[at] == '0' && p->s[at + 1] >= '0' && p->s[at + 1] <= '9') return -1;
    while (at < p->n && p->s[at] >= '0' && p->s[at] <= '9') at++;
    for (; start < at; start++) {
        if (*v >= 100000000) { *v = -1; break; }
        *v = *v * 10 + (p->s[start] - '0');
    }
    return (long)at;
}

/* parse_repeat is Go's parseRepeat for '{' at at: it returns the offset after
 * '}', or -1 when this is not a repetition (then '{' is a literal). */
static long parse_repeat(struct parser *p, size_t at, int *min, int *max) {
    long t;
    at++;
    if ((t = parse_int(p, at, min)) < 0) return -1;
    at = (size_t)t;
    if (at >= p->n) return -1;
    if (p->s[at] != ',') {
        *max = *min;
    } else {
        at++;
        if (at >= p->n) return -1;
        if (p->s[at] == '}') {
            *max = -1;
        } else {
            if ((t = parse_int(p, at, max)) < 0) return -1;
            at = (size_t)t;
            if (*max < 0) *min = -1;
        }
    }
    if (at >= p->n || p->s[at] != '}') return -1;
    return (long)at + 1;
}

/* next_rune decodes the rune at at, failing on invalid UTF-8 as Go does. */
static long next_rune(struct parser *p, size_t at, int *r) {
    int w;
    *r = decode((const unsigned char *)p->s + at, p->n - at, &w);
    if (*r == RUNE_ERROR && w == 1) return fail(p, E_UTF8, at, p->n);
    return (long)(at + (size_t)w);
}

/* check_utf8 fails on the first invalid byte of s[at:end]; the error's
 * expression runs to end, as Go's checkUTF8 of that substring. */
static int check_utf8(struct parser *p, size_t at, size_t end) {
    int w;
    while (at < end) {
        if (!valid_at((const unsigned char *)p->s + at, end - at)) return fail(p, E_UTF8, at, end);
        decode((const unsigned char *)p->s + at, end - at, &w);
        at += (size_t)w;
    }
    return 0;
}

static int unhex(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int is_alnum(int c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* parse_hex parses what follows "\x" at at: {hex digits} or two digits. It
 * returns the offset after it, -1 on an invalid escape (*bad_end set) or -2
 * on invalid UTF-8. */
static long parse_hex(struct parser *p, size_t at, int *r, size_t *bad_end) {
    int c, x, y, nhex = 0;
    long t;
    *bad_end = at;
    if (at >= p->n) return -1;
    if ((t = next_rune(p, at, &c)) < 0) return -2;
    at = (size_t)t;
    *bad_end = at;
    if (c == '{') {
        *r = 0;
        for (;;) {
            if (at >= p->n) { *bad_end = at; return -1; }
            if ((t = next_rune(p, at, &c)) < 0) return -2;
            at = (size_t)t;
            *bad_end = at;
            if (c == '}') break;
            if ((x = unhex(c)) < 0) return -1;
            *r = *r * 16 + x;
            if (*r > MAX_RUNE) return -1;
            nhex++;
        }
        return nhex == 0 ? -1 : (long)at;
    }
    x = unhex(c);
    if (at < p->n) {
        if ((t = next_rune(p, at, &c)) < 0) return -2;
        at = (size_t)t;
    } else {
        c = RUNE_ERROR;
    }
    *bad_end = at;
    y = unhex(c);
    if (x < 0 || y < 0) return -1;
    *r = x * 16 + y;
    return (long)at;
}

/* parse_escape is Go's parseEscape for the '\' at at: it returns the offset
 * after the escape and sets *r, or -1. */
static long parse_escape(struct parser *p, size_t at, int *r) {
    size_t start = at, bad_end;
    long t;
    int c, i;
    at++;
    if (at >= p->n) return fail(p, E_BACKSLASH, p->n, p->n);
    if ((t = next_rune(p, at, &c)) < 0) return -1;
    at = (size_t)t;
    switch (c) {
    case '1': case '2': case '3': case '4': case '5': case '6': case '7':
        if (at >= p->n || p->s[at] < '0' || p->s[at] > '7') break;
        /* fall through */
    case '0':
        *r = c - '0';
        for (i = 1; i < 3; i++) {
            if (at >= p->n || p->s[at] < '0' || p->s[at] > '7') break;
            *r = *r * 8 + (p->s[at] - '0');
            at++;
        }
        return (long)at;
    case 'x':
        t = parse_hex(p, at, r, &bad_end);
        if (t == -2) return -1;
        if (t >= 0) return t;
        return fail(p, E_ESCAPE, start, bad_end);
    case 'a': *r = '\a'; return (long)at;
    case 'f': *r = '\f'; return (long)at;
    case 'n': *r = '\n'; return (long)at;
    case 'r': *r = '\r'; return (long)at;
    case 't': *r = '\t'; return (long)at;
    case 'v': *r = '\v'; return (long)at;
    default:
        if (c < 0x80 && !is_alnum(c)) {
            *r = c;
            return (long)at;
        }
    }
    return fail(p, E_ESCAPE, start, at);
}

/* perl_group returns the Perl class (\d \s \w and negations) at at, or NULL. */
static const struct group *perl_group(struct parser *p, size_t at) {
    if (at + 2 > p->n || p->s[at] != '\\') return NULL;
    return find_group(perl_groups, sizeof perl_groups / sizeof perl_groups[0], p->s + at, 2);
}

/* known_class reports whether Go's regexp knows the Unicode class named by
 * s[at:end]: its canonicalName (separators dropped, first letter upper case,
 * the rest lower case) is in unicode_class_names. */
static int known_class(const struct parser *p, size_t at, size_t end) {
    char name[64];
    size_t n = 0, lo = 0, hi = sizeof unicode_class_names / sizeof unicode_class_names[0];
    int first = 1;
    for (; at < end; at++) {
        char c = p->s[at];
        if (c == '_' || c == '-' || c == ' ') continue;
        if (first) {
            if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
            first = 0;
        } else if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (n == sizeof name - 1) return 0;
        name[n++] = c;
    }
    name[n] = 0;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        int c = strcmp(unicode_class_names[m], name);
        if (c == 0) return 1;
        if (c < 0) lo = m + 1;
        else hi = m;
    }
    return 0;
}

/* unicode_class handles \p and \P at at. Classes Go knows are refused with
 * an error naming them, others with Go's error. It returns 0 when s[at:] is
 * not such a class, else -1. */
static int unicode_class(struct parser *p, size_t at) {
    size_t end, name, seq;
    int c;
    long t;
    if (at + 2 > p->n || p->s[at] != '\\' || (p->s[at + 1] != 'p' && p->s[at + 1] != 'P')) return 0;
    if (at + 2 >= p->n) return fail(p, E_CLASS_RANGE, at, p->n);
    if ((t = next_rune(p, at + 2, &c)) < 0) return -1;
    if (c != '{') {
        name = at + 2;
        end = seq = (size_t)t;
    } else {
        for (end = at; end < p->n && p->s[end] != '}'; end++) {}
        if (end == p->n) {
            if (check_utf8(p, at, p->n) < 0) return -1;
            return fail(p, E_CLASS_RANGE, at, p->n);
        }
        if (check_utf8(p, at + 3, end) < 0) return -1;
        name = at + 3;
        seq = end + 1;
    }
    if (name < end && p->s[name] == '^') name++;
    return fail(p, known_class(p, name, end) ? E_UNICODE : E_CLASS_RANGE, at, seq);
}

/* class_char parses one character of a class at at (wholeclass starts at
 * cls); it returns the offset after it, or -1. */
static long class_char(struct parser *p, size_t at, size_t cls, int *r) {
    if (at >= p->n) return fail(p, E_BRACKET, cls, p->n);
    if (p->s[at] == '\\') return parse_escape(p, at, r);
    return next_rune(p, at, r);
}

/* named_class handles [:name:] at at: it returns the offset after it, 0 when
 * there is none, or -1. */
static long named_class(struct parser *p, size_t at, struct ranges *c) {
    size_t i;
    const struct group *g;
    if (at + 2 > p->n || p->s[at] != '[' || p->s[at + 1] != ':') return 0;
    for (i = at + 2; i + 1 < p->n; i++) {
        if (p->s[i] == ':' && p->s[i + 1] == ']') break;
    }
    if (i + 1 >= p->n) return 0;
    g = find_group(posix_groups, sizeof posix_groups / sizeof posix_groups[0], p->s + at, i + 2 - at);
    if (g == NULL) return fail(p, E_CLASS_RANGE, at, i + 2);
    add_group(c, g, p->flags);
    return (long)(i + 2);
}

/* class_item parses one item of a class at at into c. */
static long class_item(struct parser *p, size_t at, size_t cls, struct ranges *c) {
    const struct group *g;
    long t;
    int lo, hi, u;
    size_t rng = at;
    if (at + 2 < p->n && p->s[at] == '[' && p->s[at + 1] == ':') {
        if ((t = named_class(p, at, c)) != 0) return t;
    }
    if ((u = unicode_class(p, at)) != 0) return -1;
    if ((g = perl_group(p, at)) != NULL) {
        add_group(c, g, p->flags);
        return (long)at + 2;
    }
    if ((t = class_char(p, at, cls, &lo)) < 0) return -1;
    at = (size_t)t;
    hi = lo;
    if (at + 1 < p->n && p->s[at] == '-' && p->s[at + 1] != ']') {
        if ((t = class_char(p, at + 1, cls, &hi)) < 0) return -1;
        at = (size_t)t;
        if (hi < lo) return fail(p, E_CLASS_RANGE, rng, at);
    }
    if (p->flags & F_FOLD) rg_add_folded(c, lo, hi);
    else rg_add(c, lo, hi);
    return (long)at;
}

/* parse_class is Go's parseClass for the '[' at at. */
static long parse_class(struct parser *p, size_t at) {
    struct ranges c = {0};
    size_t cls = at;
    int neg = 0, first = 1, rc;
    long t;
    at++;
    if (at < p->n && p->s[at] == '^') {
        neg = 1;
        at++;
    }
    while (at >= p->n || p->s[at] != ']' || first) {
        first = 0;
        if ((t = class_item(p, at, cls, &c)) < 0) {
            free(c.r);
            return -1;
        }
        at = (size_t)t;
    }
    at++;
    rg_clean(&c);
    if (neg) rg_negate(&c);
    rc = push_class(p, OP_CLASS, &c);
    free(c.r);
    return rc < 0 ? -1 : (long)at;
}

/* parse_flags is Go's parsePerlFlags for "(?" at at. */
static long parse_flags(struct parser *p, size_t at) {
    size_t rest = p->n - at, end, nstart, t;
    unsigned flags = p->flags;
    int sign = 1, saw = 0, c, i;
    long nt;
    int with_p = rest > 4 && p->s[at + 2] == 'P' && p->s[at + 3] == '<';
    int with_name = rest > 3 && p->s[at + 2] == '<';
    if (with_p || with_name) {
        nstart = at + (with_p ? 4 : 3);
        for (end = at; end < p->n && p->s[end] != '>'; end++) {}
        if (end == p->n) {
            if (check_utf8(p, at, p->n) < 0) return -1;
            return fail(p, E_NAMED, at, p->n);
        }
        if (check_utf8(p, nstart, end) < 0) return -1;
        if (end == nstart) return fail(p, E_NAMED, at, end + 1);
        for (t = nstart; t < end; t++) {
            if (p->s[t] != '_' && !is_alnum((unsigned char)p->s[t])) return fail(p, E_NAMED, at, end + 1);
        }
        i = new_node(p, OP_LPAREN);
        if (i < 0) return -1;
        p->nodes[i].cap = ++p->numcap;
        if (push(p, i) < 0) return -1;
        return (long)end + 1;
    }
    t = at + 2;
    while (t < p->n) {
        if ((nt = next_rune(p, t, &c)) < 0) return -1;
        t = (size_t)nt;
        switch (c) {
        case 'i': flags |= F_FOLD; saw = 1; continue;
        case 'm': flags &= ~(unsigned)F_ONELINE; saw = 1; continue;
        case 's': flags |= F_DOTNL; saw = 1; continue;
        case 'U': flags |= F_NONGREEDY; saw = 1; continue;
        case '-':
            if (sign < 0) break;
            sign = -1;
            flags = ~flags;
            saw = 0;
            continue;
        case ':': case ')':
            if (sign < 0) {
                if (!saw) break;
                flags = ~flags;
            }
            if (c == ':' && push_op(p, OP_LPAREN) < 0) return -1;
            p->flags = flags;
            return (long)t;
        }
        break;
    }
    return fail(p, E_PERL_OP, at, t);
}

/* parse_backslash handles a '\' at at outside a class. */
static long parse_backslash(struct parser *p, size_t at) {
    const struct group *g;
    size_t end;
    long t;
    int r;
    if (at + 1 < p->n) {
        switch (p->s[at + 1]) {
        case 'A': return push_op(p, OP_BOT) < 0 ? -1 : (long)at + 2;
        case 'b': return push_op(p, OP_WORDB) < 0 ? -1 : (long)at + 2;
        case 'B': return push_op(p, OP_NWORDB) < 0 ? -1 : (long)at + 2;
        case 'z': return push_op(p, OP_EOT) < 0 ? -1 : (long)at + 2;
        case 'C': return fail(p, E_ESCAPE, at, at + 2);
        case 'Q':
            at += 2;
            for (end = at; end + 1 < p->n && !(p->s[end] == '\\' && p->s[end + 1] == 'E'); end++) {}
            if (end + 1 >= p->n) end = p->n;
            while (at < end) {
                int w;
                r = decode((const unsigned char *)p->s + at, end - at, &w);
                if (r == RUNE_ERROR && w == 1) return fail(p, E_UTF8, at, end);
                if (push_literal(p, r) < 0) return -1;
                at += (size_t)w;
            }
            return end == p->n ? (long)p->n : (long)end + 2;
        }
    }
    if (unicode_class(p, at) != 0) return -1;
    if ((g = perl_group(p, at)) != NULL) {
        struct ranges c = {0};
        int rc;
        add_group(&c, g, p->flags);
        rc = push_class(p, OP_CLASS, &c);
        free(c.r);
        return rc < 0 ? -1 : (long)at + 2;
    }
    if ((t = parse_escape(p, at, &r)) < 0) return -1;
    return push_literal(p, r) < 0 ? -1 : t;
}

/* parse_one handles the token at at; *rep is set to at when it was a
 * repetition operator. It returns the offset after the token, or -1. */
static long parse_one(struct parser *p, size_t at, long last, long *rep) {
    int r, min, max, i;
    long t;
    switch (p->s[at]) {
    case '(':
        if (at + 1 < p->n && p->s[at + 1] == '?') return parse_flags(p, at);
        i = new_node(p, OP_LPAREN);
        if (i < 0) return -1;
        p->nodes[i].cap = ++p->numcap;
        return push(p, i) < 0 ? -1 : (long)at + 1;
    case '|':
        return parse_vbar(p) < 0 ? -1 : (long)at + 1;
    case ')':
        return parse_right_paren(p) < 0 ? -1 : (long)at + 1;
    case '^':
        return push_op(p, p->flags & F_ONELINE ? OP_BOT : OP_BOL) < 0 ? -1 : (long)at + 1;
    case '$':
        return push_op(p, p->flags & F_ONELINE ? OP_EOT : OP_EOL) < 0 ? -1 : (long)at + 1;
    case '.':
        return push_dot(p) < 0 ? -1 : (long)at + 1;
    case '[':
        return parse_class(p, at);
    case '*': case '+': case '?':
        *rep = (long)at;
        r = p->s[at] == '*' ? OP_STAR : p->s[at] == '+' ? OP_PLUS : OP_QUEST;
        return repeat(p, r, 0, 0, at, at + 1, last);
    case '{':
        if ((t = parse_repeat(p, at, &min, &max)) < 0) {
            return push_literal(p, '{') < 0 ? -1 : (long)at + 1;
        }
        if (min < 0 || min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) {
            return fail(p, E_REPEAT_SIZE, at, (size_t)t);
        }
        *rep = (long)at;
        return repeat(p, OP_REPEAT, min, max, at, (size_t)t, last);
    case '\\':
        return parse_backslash(p, at);
    default:
        if ((t = next_rune(p, at, &r)) < 0) return -1;
        return push_literal(p, r) < 0 ? -1 : t;
    }
}

/* parse builds the tree of p->s; it returns the root node, or -1. */
static int parse(struct parser *p) {
    size_t at = 0;
    long last = -1, rep, t;
    p->flags = F_PERL;
    while (at < p->n) {
        rep = -1;
        if ((t = parse_one(p, at, last, &rep)) < 0) return -1;
        at = (size_t)t;
        last = rep;
    }
    if (finish_level(p) < 0) return -1;
    if (p->nstack != 1) return fail(p, E_PAREN, 0, p->n);
    return p->stack[0];
}

/* ---- the program ---- */

enum { I_CHAR = 1, I_SPLIT, I_JMP, I_EMPTY, I_MATCH, I_FAIL };

/* Empty-width conditions, met or not at a position. */
enum { C_BOL = 1, C_EOL = 2, C_BOT = 4, C_EOT = 8, C_WORDB = 16, C_NWORDB = 32 };

struct inst {
    unsigned char op;
    unsigned char cond; /* I_EMPTY: the C_ condition */
    int x, y;           /* I_CHAR: ranges r[x..x+y) (ints); else targets */
};

/* sparse is a set of program counters with O(1) insert, test and clear. */
struct sparse {
    int *dense, *index;
    int n;
};

struct re {
    struct inst *prog;
    int ninst;
    int *runes;         /* the ranges of every I_CHAR */
    int anchored;       /* the program starts with \A */
    struct sparse cur, next;
    int *stack;
};

struct compiler {
    struct parser *p;
    struct inst *prog;
    int n, cap;
    int oom, large;
};

static int emit(struct compiler *c, int op, int x, int y) {
    if (c->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        struct inst *pr;
        if (cap > MAX_INST) cap = MAX_INST;
        if (c->n == cap) { c->large = 1; return -1; }
        pr = realloc(c->prog, (size_t)cap * sizeof *pr);
        if (pr == NULL) { c->oom = 1; return -1; }
        c->prog = pr;
        c->cap = cap;
    }
    c->prog[c->n].op = (unsigned char)op;
    c->prog[c->n].cond = 0;
    c->prog[c->n].x = x;
    c->prog[c->n].y = y;
    return c->n++;
}

static int compile_node(struct compiler *c, int i);

/* compile_opt emits x? with its SPLIT's second target left to patch. */
static int compile_opt(struct compiler *c, int sub, int *split) {
    if ((*split = emit(c, I_SPLIT, 0, 0)) < 0) return -1;
    c->prog[*split].x = c->n;
    return compile_node(c, sub);
}

/* compile_repeat expands x{min,max} into copies, as Go's simplify does. */
static int compile_repeat(struct compiler *c, int sub, int min, int max) {
    int k, split, loop, *splits;
    if (max == -1) {
        for (k = 0; k < (min > 0 ? min - 1 : 0); k++) {
            if (compile_node(c, sub) < 0) return -1;
        }
        if (min == 0) {
            if (compile_opt(c, sub, &split) < 0 || emit(c, I_JMP, split, 0) < 0) return -1;
            c->prog[split].y = c->n;
            return 0;
        }
        loop = c->n;
        if (compile_node(c, sub) < 0) return -1;
        return emit(c, I_SPLIT, loop, c->n + 1) < 0 ? -1 : 0;
    }
    for (k = 0; k < min; k++) {
        if (compile_node(c, sub) < 0) return -1;
    }
    if (max == min) return 0;
    splits = malloc((size_t)(max - min) * sizeof *splits);
    if (splits == NULL) { c->oom = 1; return -1; }
    for (k = 0; k < max - min; k++) {
        if (compile_opt(c, sub, &splits[k]) < 0) { free(splits); return -1; }
    }
    for (k = 0; k < max - min; k++) c->prog[splits[k]].y = c->n;
    free(splits);
    return 0;
}

static int compile_alt(struct compiler *c, const struct node *nd) {
    int k, split, *jmps = malloc((size_t)nd->nsub * sizeof(int));
    if (jmps == NULL) { c->oom = 1; return -1; }
    for (k = 0; k < nd->nsub - 1; k++) {
        if (compile_opt(c, nd->sub[k], &split) < 0 || (jmps[k] = emit(c, I_JMP, 0, 0)) < 0) {
            free(jmps);
            return -1;
        }
        c->prog[split].y = c->n;
    }
    if (compile_node(c, nd->sub[nd->nsub - 1]) < 0) { free(jmps); return -1; }
    for (k = 0; k < nd->nsub - 1; k++) c->prog[jmps[k]].x = c->n;
    free(jmps);
    return 0;
}

static int compile_empty(struct compiler *c, int cond) {
    int i = emit(c, I_EMPTY, 0, 0);
    if (i < 0) return -1;
    c->prog[i].cond = (unsigned char)cond;
    c->prog[i].x = i + 1;
    return 0;
}

/* compile_node appends the program for node i; control leaves it at the end. */
static int compile_node(struct compiler *c, int i) {
    const struct node *nd = &c->p->nodes[i];
    int k, split;
    switch (nd->op) {
    case OP_NOMATCH: return emit(c, I_FAIL, 0, 0) < 0 ? -1 : 0;
    case OP_EMPTY: return 0;
    case OP_LITERAL: case OP_CLASS: return emit(c, I_CHAR, (int)nd->roff, (int)nd->rn) < 0 ? -1 : 0;
    case OP_BOL: return compile_empty(c, C_BOL);
    case OP_EOL: return compile_empty(c, C_EOL);
    case OP_BOT: return compile_empty(c, C_BOT);
    case OP_EOT: return compile_empty(c, C_EOT);
    case OP_WORDB: return compile_empty(c, C_WORDB);
    case OP_NWORDB: return compile_empty(c, C_NWORDB);
    case OP_CAPTURE: return compile_node(c, nd->sub[0]);
    case OP_STAR: return compile_repeat(c, nd->sub[0], 0, -1);
    case OP_PLUS: return compile_repeat(c, nd->sub[0], 1, -1);
    case OP_QUEST:
        if (compile_opt(c, nd->sub[0], &split) < 0) return -1;
        c->prog[split].y = c->n;
        return 0;
    case OP_REPEAT: return compile_repeat(c, nd->sub[0], nd->min, nd->max);
    case OP_CONCAT:
        for (k = 0; k < nd->nsub; k++) {
            if (compile_node(c, nd->sub[k]) < 0) return -1;
        }
        return 0;
    case OP_ALT: return compile_alt(c, nd);
    }
    return 0;
}

/* starts_anchored reports whether every match of node i begins at \A. */
static int starts_anchored(const struct parser *p, int i) {
    const struct node *nd = &p->nodes[i];
    if (nd->op == OP_BOT) return 1;
    if ((nd->op == OP_CONCAT || nd->op == OP_CAPTURE) && nd->nsub > 0) return starts_anchored(p, nd->sub[0]);
    return 0;
}

/* ---- compile ---- */

static void set_error(char *err, size_t errlen, const char *code, const char *expr, size_t elen) {
    static const char prefix[] = "error parsing regexp: ";
    size_t n = 0, k;
    const char *parts[4];
    size_t lens[4];
    parts[0] = prefix; lens[0] = sizeof prefix - 1;
    parts[1] = code; lens[1] = strlen(code);
    parts[2] = ": `"; lens[2] = 3;
    parts[3] = expr; lens[3] = elen;
    if (errlen == 0) return;
    for (k = 0; k < 4; k++) {
        size_t m = lens[k];
        if (m > errlen - 1 - n) m = errlen - 1 - n;
        memcpy(err + n, parts[k], m);
        n += m;
    }
    if (n < errlen - 1) err[n++] = '`';
    err[n] = 0;
}

static void free_parser(struct parser *p) {
    int k;
    for (k = 0; k < p->nnodes; k++) free(p->nodes[k].sub);
    free(p->nodes);
    free(p->stack);
    free(p->pool.r);
}

/* build turns a parsed tree into a runnable re. */
static int build(struct parser *p, int root, struct re **out) {
    struct compiler c = {0};
    struct re *re;
    c.p = p;
    if (compile_node(&c, root) < 0 || emit(&c, I_MATCH, 0, 0) < 0) {
        free(c.prog);
        return fail(p, c.large ? E_LARGE : E_MEMORY, 0, p->n);
    }
    re = calloc(1, sizeof *re);
    if (re == NULL) { free(c.prog); return fail_oom(p); }
    re->prog = c.prog;
    re->ninst = c.n;
    re->runes = p->pool.r;
    p->pool.r = NULL;
    re->anchored = starts_anchored(p, root);
    re->cur.dense = malloc((size_t)c.n * sizeof(int));
    re->next.dense = malloc((size_t)c.n * sizeof(int));
    re->cur.index = calloc((size_t)c.n, sizeof(int));
    re->next.index = calloc((size_t)c.n, sizeof(int));
    re->stack = malloc((size_t)(2 * c.n + 2) * sizeof(int));
    if (!re->cur.dense || !re->next.dense || !re->cur.index || !re->next.index || !re->stack) {
        re_free(re);
        return fail_oom(p);
    }
    *out = re;
    return 0;
}

int re_compile(struct re **out, const char *pat, size_t n, int icase, char *err, size_t errlen) {
    struct parser p;
    char *buf = NULL;
    int root, rc = -1;
    *out = NULL;
    if (errlen > 0) err[0] = 0;
    memset(&p, 0, sizeof p);
    if (icase) {
        buf = malloc(n + 4);
        if (buf == NULL) {
            set_error(err, errlen, E_MEMORY, "", 0);
            return -1;
        }
        memcpy(buf, "(?i)", 4);
        memcpy(buf + 4, pat, n);
        pat = buf;
        n += 4;
    }
    p.s = pat;
    p.n = n;
    root = parse(&p);
    if (root >= 0) rc = build(&p, root, out);
    if (rc < 0) set_error(err, errlen, p.code ? p.code : E_MEMORY, p.s + p.eoff, p.elen);
    free_parser(&p);
    free(buf);
    return rc < 0 ? 1 : 0;
}

void re_free(struct re *re) {
    if (re == NULL) return;
    free(re->prog);
    free(re->runes);
    free(re->cur.dense);
    free(re->next.dense);
    free(re->cur.index);
    free(re->next.index);
    free(re->stack);
    free(re);
}

/* ---- matching ---- */

static int is_word(int r) {
    return r == '_' || is_alnum(r);
}

/* context gives the conditions met between runes before and after (-1 at
 * either end of the text), as Go's EmptyOpContext. */
static int context(int before, int after) {
    int c = 0;
    if (before < 0) c |= C_BOT | C_BOL;
    if (before == '\n') c |= C_BOL;
    if (after < 0) c |= C_EOT | C_EOL;
    if (after == '\n') c |= C_EOL;
    c |= is_word(before) != is_word(after) ? C_WORDB : C_NWORDB;
    return c;
}

static int in_class(const int *r, int n, int ch) {
    int lo = 0, hi = n / 2;
    if (n <= 8) {
        for (lo = 0; lo < n; lo += 2) {
            if (ch < r[lo]) return 0;
            if (ch <= r[lo + 1]) return 1;
        }
        return 0;
    }
    while (lo < hi) {
        int m = lo + (hi - lo) / 2;
        if (ch > r[2 * m + 1]) lo = m + 1;
        else if (ch < r[2 * m]) hi = m;
        else return 1;
    }
    return 0;
}

/* add puts pc and everything reachable from it without reading a rune into
 * set, under the conditions cond; it returns 1 when that reaches a match. */
static int add(const struct re *re, struct sparse *set, int pc, int cond) {
    int top = 0;
    re->stack[top++] = pc;
    while (top > 0) {
        const struct inst *in;
        pc = re->stack[--top];
        if (set->index[pc] < set->n && set->dense[set->index[pc]] == pc) continue;
        set->index[pc] = set->n;
        set->dense[set->n++] = pc;
        in = &re->prog[pc];
        switch (in->op) {
        case I_MATCH: return 1;
        case I_JMP: re->stack[top++] = in->x; break;
        case I_SPLIT:
            re->stack[top++] = in->y;
            re->stack[top++] = in->x;
            break;
        case I_EMPTY:
            if (in->cond & cond) re->stack[top++] = in->x;
            break;
        }
    }
    return 0;
}

/* rune_at decodes the rune at pos, or -1 at the end. */
static int rune_at(const char *s, size_t n, size_t pos, int *w) {
    if (pos >= n) { *w = 0; return -1; }
    return decode((const unsigned char *)s + pos, n - pos, w);
}

int re_match(const struct re *re, const char *s, size_t n) {
    struct sparse a = re->cur, b = re->next, *cur = &a, *next = &b, *t;
    size_t pos = 0;
    int w, w2, k, r, r2, cond;
    cur->n = 0;
    r = rune_at(s, n, 0, &w);
    cond = context(-1, r);
    for (;;) {
        if ((!re->anchored || pos == 0) && add(re, cur, 0, cond)) return 1;
        if (cur->n == 0 || r < 0) return 0;
        r2 = rune_at(s, n, pos + (size_t)w, &w2);
        cond = context(r, r2);
        next->n = 0;
        for (k = 0; k < cur->n; k++) {
            const struct inst *in = &re->prog[cur->dense[k]];
            if (in->op == I_CHAR && in_class(re->runes + in->x, in->y, r) &&
                add(re, next, cur->dense[k] + 1, cond)) {
                return 1;
            }
        }
        t = cur; cur = next; next = t;
        pos += (size_t)w;
        r = r2;
        w = w2;
    }
}
