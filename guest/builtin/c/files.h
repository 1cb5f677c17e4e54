/* files.h: what the file tools and the search tools share. */
#ifndef CAIRN_FILES_H
#define CAIRN_FILES_H

#include "cairn.h"

/* Caps on what one call returns. */
#define MAX_LINES 2000
#define MAX_BYTES (256 << 10)
#define MAX_MATCHES 500

/* resolve checks a path the model gave and sets full (NUL-terminated) to
 * it inside the workspace, and rel to its clean relative form; or writes
 * the error and returns -1. */
int resolve(struct call *c, const struct buf *p, struct buf *full, struct buf *rel);
/* path_clean appends path.Clean of s. */
void path_clean(struct buf *out, const char *s, size_t n);
/* path_join appends path.Join(a, b), NUL-terminated. */
void path_join(struct buf *out, const char *a, size_t an, const char *b, size_t bn);
/* describe writes a filesystem error as the Go tools word it. */
void describe(struct buf *err, const char *rel, size_t n, int code);
const char *errno_text(int code, char *tmp, size_t n);
/* read_whole reads the file at path (n bytes, NUL-terminated) into b; 0
 * or an errno: EINVAL for a path that holds a NUL, as Go's. */
int read_whole(const char *path, size_t n, struct buf *b);
/* is_binary guesses as git does: a NUL in the first 8000 bytes, or text
 * that is not UTF-8. */
int is_binary(const char *b, size_t n);

/* An entry of a directory, as list_dir and the walks see it. */
struct entry {
	char *name;
	int is_dir, is_link; /* its own type, a link not followed */
	int64_t size;        /* lstat's, or -1 */
};

/* read_dir is os.ReadDir: the entries of a directory but "." and "..",
 * sorted by name; with sizes, each one's lstat size. 0 or an errno. */
int read_dir(const char *path, size_t n, struct entry **out, size_t *count, int sizes);
void free_entries(struct entry *e, size_t n);

#endif
