/* search.c: glob and grep, as their Go definitions in ../tools do them:
 * glob's matches in the order doublestar.Glob finds them (a walk of the
 * workspace, each directory's entries sorted, symbolic links to
 * directories followed), grep's in fs.WalkDir's order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "glob.h"
#include "json.h"
#include "regex.h"

/* A list of result lines: the first MAX_MATCHES kept, all counted. */
struct hits {
	struct buf *out;
	int64_t count;
};

static void hit(struct hits *h, const char *s, size_t n)
{
	if (h->count++ < MAX_MATCHES) {
		buf_add(h->out, s, n);
		buf_byte(h->out, '\n');
	}
}

static void cap_note(struct hits *h)
{
	if (h->count > MAX_MATCHES) {
		buf_byte(h->out, '(');
		buf_int(h->out, h->count - MAX_MATCHES);
		buf_str(h->out, " more not shown; narrow the search)\n");
	}
}

/* valid_path is fs.ValidPath. */
static int valid_path(const char *p, size_t n)
{
	if (n == 1 && p[0] == '.')
		return 1;
	if (n == 0)
		return 0;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || p[i] == '/') {
			size_t len = i - start;
			if (len == 0 || (len == 1 && p[start] == '.') ||
			    (len == 2 && p[start] == '.' && p[start + 1] == '.'))
				return 0;
			start = i + 1;
		}
	}
	return 1;
}

/* unescape is doublestar's unescapeMeta: each backslash dropped, the
 * character after it kept. */
static void unescape(struct buf *out, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\' && i + 1 < n)
			i++;
		buf_byte(out, p[i]);
	}
}

/* index_meta is doublestar's indexMeta: where the first unescaped *, ?, [
 * or { is, or -1. */
static long index_meta(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '{')
			return (long)i;
		if (p[i] == '\\')
			i++;
	}
	return -1;
}

struct globber {
	struct call *c;
	const char *pat;
	size_t pn;
	size_t max_segments; /* 0: any depth */
	int files_first;
	struct buf *list;    /* matches, each NUL-terminated */
	size_t count;
};

static int is_dir_entry(const char *full_dir, const struct entry *e, int follow)
{
	if (e->is_dir)
		return 1;
	if (!follow || !e->is_link)
		return 0;
	struct buf p = {0};
	struct stat st;
	path_join(&p, full_dir, strlen(full_dir), e->name, strlen(e->name));
	int dir = !p.oom && stat(p.p, &st) == 0 && S_ISDIR(st.st_mode);
	buf_free(&p);
	return dir;
}

static void glob_walk(struct globber *g, const char *rel, size_t rn, size_t segments, int depth)
{
	struct buf full = {0}, child = {0};
	struct entry *e;
	size_t n;
	path_join(&full, g->c->ws.p, g->c->ws.n, rel, rn);
	if (full.oom || read_dir(full.p, full.n, &e, &n, 0)) {
		buf_free(&full);
		return;
	}
	/* doublestar walks a pattern with ** before its last segment a
	 * directory at a time, its files first; others in the order of the
	 * entries. */
	for (int pass = g->files_first ? 0 : 2; pass < (g->files_first ? 2 : 3); pass++) {
		for (size_t i = 0; i < n; i++) {
			int dir = is_dir_entry(full.p, &e[i], 1);
			if ((pass == 0 && dir) || (pass == 1 && !dir))
				continue;
			child.n = 0;
			if (!(rn == 1 && rel[0] == '.')) {
				buf_add(&child, rel, rn);
				buf_byte(&child, '/');
			}
			buf_str(&child, e[i].name);
			if (dir) {
				if (depth < 64 && (g->max_segments == 0 || segments + 1 < g->max_segments))
					glob_walk(g, child.p, child.n, segments + 1, depth + 1);
			} else if (glob_match(g->pat, g->pn, child.p, child.n)) {
				buf_add(g->list, child.p, child.n);
				buf_byte(g->list, 0);
				g->count++;
			}
		}
	}
	buf_free(&child);
	free_entries(e, n);
	buf_free(&full);
}

/* mid_doublestar is doublestar's hasMidDoubleStar: a ** before the
 * pattern's last three bytes. */
static int mid_doublestar(const char *p, size_t n)
{
	for (size_t i = 0; i + 3 < n; i++) {
		if (p[i] == '\\')
			i++;
		else if (p[i] == '*' && p[i + 1] == '*')
			return 1;
	}
	return 0;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* glob_files is doublestar.Glob(os.DirFS(workspace), pattern,
 * WithFilesOnly()): matches appended to list, NUL-terminated. */
static size_t glob_files(struct call *c, const char *pat, size_t pn, struct buf *list)
{
	long meta = index_meta(pat, pn);
	if (meta < 0) {
		/* No meta: the path itself, if it exists and is no directory. */
		struct buf p = {0}, full = {0};
		size_t count = 0;
		struct stat st;
		unescape(&p, pat, pn);
		size_t n = p.n > 1 && p.p[p.n - 1] == '/' ? p.n - 1 : p.n;
		if (valid_path(p.p, n) && !memchr(p.p, 0, n)) {
			path_join(&full, c->ws.p, c->ws.n, p.p, n);
			if (!full.oom && stat(full.p, &st) == 0 && !S_ISDIR(st.st_mode)) {
				buf_add(list, p.p, p.n);
				buf_byte(list, 0);
				count = 1;
			}
		}
		buf_free(&p);
		buf_free(&full);
		return count;
	}
	if (memchr(pat, 0, pn))
		return 0; /* no name holds a NUL */
	if (meta >= 2 && pat[0] == '.' && pat[1] == '/' && index_meta(pat + 2, pn - 2) == meta - 2) {
		/* doublestar joins "." and each name: "./" is dropped. */
		size_t k = 2;
		while (k < (size_t)meta && pat[k] != '/')
			k++;
		if (k == (size_t)meta) {
			pat += 2, pn -= 2, meta -= 2;
		}
	}
	struct globber g = {c, pat, pn, 0, mid_doublestar(pat, pn), list, 0};
	int doublestar = 0, alts = 0;
	size_t slashes = 0, cut = 0;
	for (size_t i = 0; i < pn; i++) {
		if (pat[i] == '\\') {
			i++;
			continue;
		}
		if (pat[i] == '/') {
			slashes++;
			if ((long)i < meta)
				cut = i;
		}
		if (pat[i] == '*' && i + 1 < pn && pat[i + 1] == '*')
			doublestar = 1;
		if (pat[i] == '{')
			alts = 1;
	}
	if (!doublestar)
		g.max_segments = slashes + 1;
	struct buf start = {0};
	size_t segments = 0;
	if (cut > 0) {
		unescape(&start, pat, cut);
		for (size_t i = 0; i < start.n; i++)
			segments += start.p[i] == '/';
		segments++;
	} else {
		buf_byte(&start, '.');
	}
	if (valid_path(start.p, start.n))
		glob_walk(&g, start.p, start.n, segments, 0);
	buf_free(&start);
	if (alts && g.count > 1 && !list->oom) {
		/* doublestar sorts the matches of alternatives. */
		char **v = malloc(g.count * sizeof *v), *p = list->p;
		if (v) {
			struct buf sorted = {0};
			for (size_t i = 0; i < g.count; i++, p += strlen(p) + 1)
				v[i] = p;
			qsort(v, g.count, sizeof *v, by_string);
			for (size_t i = 0; i < g.count; i++)
				buf_add(&sorted, v[i], strlen(v[i]) + 1);
			free(v);
			buf_free(list);
			*list = sorted;
		}
	}
	return g.count;
}

int tool_glob(struct call *c, const char *input, size_t n)
{
	struct buf pattern = {0}, full = {0}, rel = {0}, list = {0};
	struct jfield f[] = {{"pattern", J_STRING, &pattern}};
	int rc = -1;
	if (json_decode("glob", "globIn", input, n, f, 1, c->err))
		goto out;
	if (!glob_valid(pattern.p ? pattern.p : "", pattern.n)) {
		buf_str(c->err, "pattern ");
		go_quote(c->err, pattern.p, pattern.n);
		buf_str(c->err, " is not valid");
		goto out;
	}
	if (resolve(c, &pattern, &full, &rel))
		goto out;
	size_t count = glob_files(c, pattern.p, pattern.n, &list);
	if (count == 0) {
		buf_str(c->out, "no files match ");
		buf_add(c->out, pattern.p, pattern.n);
		buf_byte(c->out, '\n');
	} else {
		struct hits h = {c->out, 0};
		const char *p = list.p;
		for (size_t i = 0; i < count; i++, p += strlen(p) + 1)
			hit(&h, p, strlen(p));
		cap_note(&h);
	}
	rc = 0;
out:
	buf_free(&pattern), buf_free(&full), buf_free(&rel), buf_free(&list);
	return rc;
}

struct grepper {
	struct call *c;
	struct re *re;
	struct buf *glob;
	struct hits hits;
	struct buf line;
};

/* grep_file adds "path:line: text" for each matching line of a text file,
 * lines split as bufio.Scanner's ScanLines does, up to a line of 1 MiB. */
static void grep_file(struct grepper *g, const char *rel, size_t rn)
{
	struct buf full = {0}, b = {0};
	path_join(&full, g->c->ws.p, g->c->ws.n, rel, rn);
	if (full.oom || read_whole(full.p, full.n, &b) || is_binary(b.p, b.n))
		goto out;
	const char *p = b.p, *end = b.p + b.n;
	for (int64_t n = 1; p < end; n++) {
		const char *nl = memchr(p, '\n', end - p);
		const char *stop = nl ? nl : end;
		if ((size_t)(stop - p) + 1 > (1u << 20))
			break;
		size_t len = stop - p;
		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (re_match(g->re, p, len)) {
			struct buf *l = &g->line;
			l->n = 0;
			buf_add(l, rel, rn);
			buf_byte(l, ':');
			buf_int(l, n);
			buf_str(l, ": ");
			if (len <= 300) {
				buf_add(l, p, len);
			} else {
				buf_add(l, p, 300);
				buf_str(l, "\xE2\x80\xA6");
			}
			hit(&g->hits, l->p, l->n);
		}
		p = nl ? nl + 1 : end;
	}
out:
	buf_free(&full);
	buf_free(&b);
}

/* grep_walk is fs.WalkDir from rel: -1 when it failed (the error
 * written), 1 when the cap was passed, else 0. */
static int grep_walk(struct grepper *g, const char *rel, size_t rn, int is_dir)
{
	if (!is_dir) {
		if (!g->glob->n || glob_match(g->glob->p, g->glob->n, rel, rn))
			grep_file(g, rel, rn);
		return g->hits.count > MAX_MATCHES;
	}
	struct buf full = {0}, child = {0};
	struct entry *e;
	size_t n;
	int rc = 0, err;
	path_join(&full, g->c->ws.p, g->c->ws.n, rel, rn);
	if ((err = full.oom ? ENOMEM : read_dir(full.p, full.n, &e, &n, 0))) {
		describe(g->c->err, rel, rn, err);
		buf_free(&full);
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		child.n = 0;
		path_join(&child, rel, rn, e[i].name, strlen(e[i].name));
		rc = grep_walk(g, child.p, child.n, e[i].is_dir);
	}
	free_entries(e, n);
	buf_free(&child);
	buf_free(&full);
	return rc;
}

int tool_grep(struct call *c, const char *input, size_t n)
{
	struct buf pattern = {0}, path = {0}, glob = {0}, full = {0}, rel = {0};
	int icase = 0, rc = -1;
	struct jfield f[] = {{"pattern", J_STRING, &pattern}, {"path", J_STRING, &path},
			     {"glob", J_STRING, &glob}, {"ignore_case", J_BOOL, &icase}};
	struct grepper g = {c, NULL, &glob, {c->out, 0}, {0}};
	char rerr[512];
	if (json_decode("grep", "grepIn", input, n, f, 4, c->err))
		goto out;
	if (re_compile(&g.re, pattern.p ? pattern.p : "", pattern.n, icase, rerr, sizeof rerr)) {
		g.re = NULL;
		buf_str(c->err, "pattern ");
		go_quote(c->err, pattern.p, pattern.n);
		buf_str(c->err, ": ");
		buf_str(c->err, rerr);
		goto out;
	}
	if (glob.n && !glob_valid(glob.p, glob.n)) {
		buf_str(c->err, "glob ");
		go_quote(c->err, glob.p, glob.n);
		buf_str(c->err, " is not valid");
		goto out;
	}
	if (resolve(c, &path, &full, &rel))
		goto out;
	struct stat st;
	if (memchr(full.p, 0, full.n) || stat(full.p, &st) != 0) {
		describe(c->err, rel.p, rel.n, memchr(full.p, 0, full.n) ? EINVAL : errno);
		goto out;
	}
	if (grep_walk(&g, rel.p, rel.n, S_ISDIR(st.st_mode)) < 0)
		goto out;
	if (g.hits.count == 0) {
		buf_str(c->out, "no lines match ");
		buf_add(c->out, pattern.p, pattern.n);
		buf_byte(c->out, '\n');
	}
	cap_note(&g.hits);
	rc = 0;
out:
	re_free(g.re);
	buf_free(&pattern), buf_free(&path), buf_free(&glob), buf_free(&full), buf_free(&rel);
	buf_free(&g.line);
	return rc;
}
