/* glob.h: doublestar (github.com/bmatcuk/doublestar/v4) path patterns.
 *
 * A pattern is matched against a slash-separated path: '*' matches any run of
 * characters within one path segment, '**' as a whole segment matches any number
 * of segments, '?' one character other than '/', '[...]' a class ('[!...]' or
 * '[^...]' negated, ranges with '-'), '{a,b}' alternatives (nested), '\' escapes
 * the next character. Patterns and paths are UTF-8; an invalid byte counts as
 * U+FFFD, as in Go. */
#ifndef CAIRN_GLOB_H
#define CAIRN_GLOB_H

#include <stddef.h>

/* glob_valid reports (1 or 0) whether pat is a well-formed pattern, as
 * doublestar.ValidatePattern does: classes and alternatives closed, no
 * trailing backslash. */
int glob_valid(const char *pat, size_t n);

/* glob_match returns 1 when path matches pat, as doublestar.Match(pat, path)
 * returns true; it returns 0 when it does not match, and also when Match would
 * return ErrBadPattern (call glob_valid first to tell the two apart). */
int glob_match(const char *pat, size_t pn, const char *path, size_t n);

#endif
