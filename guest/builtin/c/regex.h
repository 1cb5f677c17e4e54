/* regex.h: regular expressions in the RE2 syntax of Go's regexp package,
 * answering one question: does a string contain a match?
 *
 * The syntax is Go's (regexp/syntax with the Perl flags regexp.Compile uses):
 * literals and escapes, '.', classes with ranges, negation, POSIX [[:name:]]
 * and Perl \d \w \s classes, ^ $ \A \z \b \B, groups (capturing, named,
 * non-capturing), flags (?imsU) and (?flags:...), alternation, * + ? {n,m}
 * and their lazy forms. Matching is over UTF-8 runes, an invalid byte reading
 * as U+FFFD; case folding is Unicode simple folding, as in Go. Unicode
 * classes (\pL, \p{Greek}) are refused with an error.
 *
 * Matching simulates the NFA in time linear in the input times the size of
 * the compiled program, so no pattern can make a call take exponential time;
 * counted repetitions are capped at 1000 as in Go. */
#ifndef CAIRN_REGEX_H
#define CAIRN_REGEX_H

#include <stddef.h>

struct re;

/* re_compile compiles the n bytes of pat, as if prefixed with "(?i)" when
 * icase is nonzero. It returns 0 and sets *out on success. Otherwise it
 * returns nonzero and writes into err (errlen bytes, NUL-terminated) the text
 * Go's regexp.Compile gives, such as
 * "error parsing regexp: missing closing ): `(a`". */
int re_compile(struct re **out, const char *pat, size_t n, int icase, char *err, size_t errlen);

/* re_match returns 1 when s (n bytes) contains a match of re, else 0. It uses
 * scratch space inside re, so one re must not be used by two calls at once. */
int re_match(const struct re *re, const char *s, size_t n);

/* re_free releases re; NULL is allowed. */
void re_free(struct re *re);

#endif
