/* files.c: read_file, write_file, edit_file and list_dir, and the path
 * and error rules of all the tools. Each does what its Go definition in
 * ../tools does, with the same texts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "json.h"

#define OUTSIDE "paths are relative to the workspace and cannot leave it"

void path_clean(struct buf *out, const char *s, size_t n)
{
	if (n == 0) {
		buf_byte(out, '.');
		return;
	}
	size_t base = out->n;
	int rooted = s[0] == '/';
	size_t r = 0, dotdot = 0;
	if (rooted) {
		buf_byte(out, '/');
		r = 1, dotdot = 1;
	}
	while (r < n) {
		if (s[r] == '/') {
			r++;
		} else if (s[r] == '.' && (r + 1 == n || s[r + 1] == '/')) {
			r++;
		} else if (s[r] == '.' && s[r + 1] == '.' && (r + 2 == n || s[r + 2] == '/')) {
			r += 2;
			size_t w = out->n - base;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out->p[base + w] != '/')
					w--;
				out->n = base + w;
			} else if (!rooted) {
				if (w > 0)
					buf_byte(out, '/');
				buf_add(out, "..", 2);
				dotdot = out->n - base;
			}
		} else {
			if ((rooted && out->n - base != 1) || (!rooted && out->n - base != 0))
				buf_byte(out, '/');
			for (; r < n && s[r] != '/'; r++)
				buf_byte(out, s[r]);
		}
	}
	if (out->n == base)
		buf_byte(out, '.');
}

void path_join(struct buf *out, const char *a, size_t an, const char *b, size_t bn)
{
	struct buf t = {0};
	if (an == 0 && bn == 0) {
		buf_byte(out, 0);
		out->n--;
		return;
	}
	buf_add(&t, a, an);
	if (an && bn)
		buf_byte(&t, '/');
	buf_add(&t, b, bn);
	path_clean(out, t.p, t.n);
	buf_byte(out, 0);
	out->n--;
	buf_free(&t);
}

int resolve(struct call *c, const struct buf *in, struct buf *full, struct buf *rel)
{
	const char *p = in->n ? in->p : ".";
	size_t n = in->n ? in->n : 1;
	if (p[0] == '/') {
		go_quote(c->err, p, n);
		buf_str(c->err, " is absolute: " OUTSIDE);
		return -1;
	}
	path_clean(rel, p, n);
	if ((rel->n == 2 && memcmp(rel->p, "..", 2) == 0) || (rel->n > 2 && memcmp(rel->p, "../", 3) == 0)) {
		go_quote(c->err, p, n);
		buf_str(c->err, ": " OUTSIDE);
		return -1;
	}
	path_join(full, c->ws.p, c->ws.n, rel->p, rel->n);
	if (full->oom || rel->oom) {
		buf_str(c->err, "out of memory");
		return -1;
	}
	return 0;
}

void describe(struct buf *err, const char *rel, size_t n, int code)
{
	char tmp[32];
	buf_add(err, rel, n);
	if (code == ENOENT) {
		buf_str(err, " does not exist");
	} else if (code == EACCES || code == EPERM) {
		buf_str(err, ": permission denied (the workspace may be read-only for this tool)");
	} else {
		buf_str(err, ": ");
		buf_str(err, errno_text(code, tmp, sizeof tmp));
	}
}

int read_whole(const char *path, size_t n, struct buf *b)
{
	if (memchr(path, 0, n))
		return EINVAL;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 2)
		buf_grow(b, (size_t)st.st_size + 1);
	for (;;) {
		buf_grow(b, 4096);
		if (b->oom) {
			close(fd);
			return ENOMEM;
		}
		ssize_t got = read(fd, b->p + b->n, b->cap - b->n);
		if (got < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			close(fd);
			return e;
		}
		if (got == 0)
			break;
		b->n += got;
	}
	close(fd);
	return 0;
}

/* full_rune is Go's utf8.FullRune. */
static int full_rune(const unsigned char *p, size_t n)
{
	if (n == 0)
		return 0;
	unsigned c = p[0];
	size_t size = c < 0xC2 || c > 0xF4 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
	if (n >= size)
		return 1;
	unsigned lo = 0x80, hi = 0xBF;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (n > 1 && (p[1] < lo || p[1] > hi))
		return 1;
	if (n > 2 && (p[2] < 0x80 || p[2] > 0xBF))
		return 1;
	return 0;
}

int is_binary(const char *b, size_t n)
{
	size_t head = n < 8000 ? n : 8000;
	if (memchr(b, 0, head))
		return 1;
	/* Cut a possibly split final rune off. */
	size_t valid = head;
	for (size_t i = 0; i < 4 && i < head; i++) {
		unsigned char c = b[head - 1 - i];
		if ((c & 0xC0) != 0x80) {
			if (!full_rune((const unsigned char *)b + head - 1 - i, i + 1))
				valid = head - 1 - i;
			break;
		}
	}
	return !utf8_valid(b, valid);
}

static void append_numbered(struct buf *out, int64_t n, const char *line, size_t len)
{
	char d[24];
	int i = sizeof d;
	uint64_t u = (uint64_t)n;
	do {
		d[--i] = '0' + u % 10;
		u /= 10;
	} while (u);
	for (int pad = 6 - ((int)sizeof d - i); pad > 0; pad--)
		buf_byte(out, ' ');
	buf_add(out, d + i, sizeof d - i);
	buf_byte(out, '\t');
	buf_add(out, line, len);
	buf_byte(out, '\n');
}

int tool_read_file(struct call *c, const char *input, size_t n)
{
	struct buf path = {0}, full = {0}, rel = {0}, b = {0};
	int64_t offset = 0, limit = 0;
	struct jfield f[] = {{"path", J_STRING, &path}, {"offset", J_INT, &offset}, {"limit", J_INT, &limit}};
	int rc = -1;
	if (json_decode("read_file", "readIn", input, n, f, 3, c->err) || resolve(c, &path, &full, &rel))
		goto out;
	int e = read_whole(full.p, full.n, &b);
	if (e) {
		describe(c->err, rel.p, rel.n, e);
		goto out;
	}
	if (is_binary(b.p, b.n)) {
		buf_add(c->err, rel.p, rel.n);
		buf_str(c->err, " is a binary file (");
		buf_int(c->err, (int64_t)b.n);
		buf_str(c->err, " bytes); read_file reads text only");
		goto out;
	}
	int64_t first = offset > 1 ? offset : 1;
	if (limit <= 0 || limit > MAX_LINES)
		limit = MAX_LINES;
	const char *rest = b.p, *end = b.p + b.n;
	int64_t skipped = 0;
	for (; skipped < first - 1 && rest < end; skipped++) {
		const char *nl = memchr(rest, '\n', end - rest);
		rest = nl ? nl + 1 : end;
	}
	if (rest == end && skipped > 0) {
		buf_add(c->err, rel.p, rel.n);
		buf_str(c->err, " has ");
		buf_int(c->err, skipped);
		buf_str(c->err, " lines; offset ");
		buf_int(c->err, first);
		buf_str(c->err, " is past the end");
		goto out;
	}
	int64_t last = first - 1;
	while (rest < end && last < first - 1 + limit && c->out->n < MAX_BYTES) {
		const char *nl = memchr(rest, '\n', end - rest);
		const char *stop = nl ? nl : end;
		last++;
		append_numbered(c->out, last, rest, stop - rest);
		rest = nl ? nl + 1 : end;
	}
	if (rest < end) {
		int64_t lines = 0;
		for (const char *q = rest; (q = memchr(q, '\n', end - q)); q++)
			lines++;
		if (end[-1] != '\n')
			lines++;
		buf_byte(c->out, '(');
		buf_add(c->out, rel.p, rel.n);
		buf_str(c->out, " has ");
		buf_int(c->out, last + lines);
		buf_str(c->out, " lines; shown ");
		buf_int(c->out, first);
		buf_str(c->out, " to ");
		buf_int(c->out, last);
		buf_str(c->out, "; read on with offset ");
		buf_int(c->out, last + 1);
		buf_str(c->out, ")\n");
	}
	rc = 0;
out:
	buf_free(&path), buf_free(&full), buf_free(&rel), buf_free(&b);
	return rc;
}

/* mkdir_all is os.MkdirAll: 0 or an errno. */
static int mkdir_all(const char *path, size_t n)
{
	struct stat st;
	struct buf p = {0};
	int rc = 0;
	if (memchr(path, 0, n))
		return EINVAL;
	buf_add(&p, path, n);
	buf_byte(&p, 0);
	if (p.oom)
		return ENOMEM;
	if (stat(p.p, &st) == 0) {
		rc = S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
		goto out;
	}
	size_t i = n;
	while (i > 0 && path[i - 1] == '/')
		i--;
	while (i > 0 && path[i - 1] != '/')
		i--;
	if (i > 0 && i - 1 > 0) {
		/* The parent, path[:i-1], when it is more than the root. */
		if ((rc = mkdir_all(path, i - 1)))
			goto out;
	}
	if (mkdir(p.p, 0755) != 0) {
		rc = errno;
		if (lstat(p.p, &st) == 0 && S_ISDIR(st.st_mode))
			rc = 0;
	}
out:
	buf_free(&p);
	return rc;
}

/* write_whole is os.WriteFile with mode 0644: 0 or an errno. */
static int write_whole(const char *path, size_t pn, const char *b, size_t n)
{
	if (memchr(path, 0, pn))
		return EINVAL;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return errno;
	int rc = 0;
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = errno;
			break;
		}
		b += w;
		n -= w;
	}
	if (close(fd) != 0 && rc == 0)
		rc = errno;
	return rc;
}

/* path_dir appends path.Dir of p. */
static void path_dir(struct buf *out, const char *p, size_t n)
{
	size_t i = n;
	while (i > 0 && p[i - 1] != '/')
		i--;
	path_clean(out, p, i);
}

int tool_write_file(struct call *c, const char *input, size_t n)
{
	struct buf path = {0}, content = {0}, full = {0}, rel = {0}, dir = {0}, reldir = {0};
	struct jfield f[] = {{"path", J_STRING, &path}, {"content", J_STRING, &content}};
	int rc = -1, e;
	if (json_decode("write_file", "writeIn", input, n, f, 2, c->err) || resolve(c, &path, &full, &rel))
		goto out;
	if (rel.n == 1 && rel.p[0] == '.') {
		buf_str(c->err, "path names the workspace itself; give a file path");
		goto out;
	}
	path_dir(&dir, full.p, full.n);
	if ((e = mkdir_all(dir.p, dir.n))) {
		path_dir(&reldir, rel.p, rel.n);
		describe(c->err, reldir.p, reldir.n, e);
		goto out;
	}
	if ((e = write_whole(full.p, full.n, content.p ? content.p : "", content.n))) {
		describe(c->err, rel.p, rel.n, e);
		goto out;
	}
	buf_str(c->out, "wrote ");
	buf_int(c->out, (int64_t)content.n);
	buf_str(c->out, " bytes to ");
	buf_add(c->out, rel.p, rel.n);
	rc = 0;
out:
	buf_free(&path), buf_free(&content), buf_free(&full), buf_free(&rel);
	buf_free(&dir), buf_free(&reldir);
	return rc;
}

/* find is memmem. */
static const char *find(const char *h, size_t hn, const char *nd, size_t nn)
{
	if (nn > hn)
		return NULL;
	for (const char *p = h, *last = h + hn - nn; p <= last; p++) {
		p = memchr(p, nd[0], last - p + 1);
		if (!p)
			return NULL;
		if (memcmp(p, nd, nn) == 0)
			return p;
	}
	return NULL;
}

int tool_edit_file(struct call *c, const char *input, size_t n)
{
	struct buf path = {0}, old = {0}, new = {0}, full = {0}, rel = {0}, b = {0}, out = {0};
	int all = 0, rc = -1, e;
	struct jfield f[] = {{"path", J_STRING, &path}, {"old_text", J_STRING, &old},
			     {"new_text", J_STRING, &new}, {"replace_all", J_BOOL, &all}};
	if (json_decode("edit_file", "editIn", input, n, f, 4, c->err) || resolve(c, &path, &full, &rel))
		goto out;
	if (old.n == 0) {
		buf_str(c->err, "old_text is empty; to write a whole file use write_file");
		goto out;
	}
	if ((e = read_whole(full.p, full.n, &b))) {
		describe(c->err, rel.p, rel.n, e);
		goto out;
	}
	int64_t count = 0;
	const char *p = b.p, *end = b.p + b.n, *hit;
	while ((hit = find(p, end - p, old.p, old.n))) {
		count++;
		buf_add(&out, p, hit - p);
		buf_add(&out, new.p, new.n);
		p = hit + old.n;
	}
	buf_add(&out, p, end - p);
	if (count == 0) {
		buf_str(c->err, "old_text not found in ");
		buf_add(c->err, rel.p, rel.n);
		buf_str(c->err, "; read the file and copy the text exactly");
		goto out;
	}
	if (count > 1 && !all) {
		buf_str(c->err, "old_text occurs ");
		buf_int(c->err, count);
		buf_str(c->err, " times in ");
		buf_add(c->err, rel.p, rel.n);
		buf_str(c->err, "; give more context so it occurs once, or set replace_all");
		goto out;
	}
	if (out.oom) {
		buf_str(c->err, "out of memory");
		goto out;
	}
	if ((e = write_whole(full.p, full.n, out.p ? out.p : "", out.n))) {
		describe(c->err, rel.p, rel.n, e);
		goto out;
	}
	buf_str(c->out, "replaced ");
	buf_int(c->out, count);
	buf_str(c->out, " occurrence(s) in ");
	buf_add(c->out, rel.p, rel.n);
	rc = 0;
out:
	buf_free(&path), buf_free(&old), buf_free(&new), buf_free(&full);
	buf_free(&rel), buf_free(&b), buf_free(&out);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* read_dir is os.ReadDir: the entries of a directory but "." and "..",
 * sorted by name; with sizes, each one's lstat size. 0 or an errno. */
int read_dir(const char *path, size_t pn, struct entry **out, size_t *count, int sizes)
{
	*out = NULL;
	*count = 0;
	if (memchr(path, 0, pn))
		return EINVAL;
	DIR *d = opendir(path);
	if (!d)
		return errno;
	struct entry *e = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct entry *p = realloc(e, cap * sizeof *e);
			if (!p) {
				rc = ENOMEM;
				break;
			}
			e = p;
		}
		e[n].name = strdup(de->d_name);
		if (!e[n].name) {
			rc = ENOMEM;
			break;
		}
		e[n].is_dir = de->d_type == DT_DIR;
		e[n].is_link = de->d_type == DT_LNK;
		e[n].size = -1;
		if (sizes) {
			struct stat st;
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				e[n].size = st.st_size;
		}
		n++;
		errno = 0;
	}
	if (!rc && errno)
		rc = errno;
	closedir(d);
	if (rc) {
		free_entries(e, n);
		return rc;
	}
	qsort(e, n, sizeof *e, by_name);
	*out = e;
	*count = n;
	return 0;
}

void free_entries(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

int tool_list_dir(struct call *c, const char *input, size_t n)
{
	struct buf path = {0}, full = {0}, rel = {0};
	struct jfield f[] = {{"path", J_STRING, &path}};
	struct entry *e = NULL;
	size_t count = 0;
	int rc = -1, err;
	if (json_decode("list_dir", "listIn", input, n, f, 1, c->err) || resolve(c, &path, &full, &rel))
		goto out;
	if ((err = read_dir(full.p, full.n, &e, &count, 1))) {
		describe(c->err, rel.p, rel.n, err);
		goto out;
	}
	if (count == 0) {
		buf_add(c->out, rel.p, rel.n);
		buf_str(c->out, " is empty\n");
	}
	for (size_t i = 0; i < count; i++) {
		buf_str(c->out, e[i].name);
		if (e[i].is_dir) {
			buf_str(c->out, "/\n");
			continue;
		}
		buf_byte(c->out, '\t');
		buf_int(c->out, e[i].size);
		buf_str(c->out, " bytes\n");
	}
	rc = 0;
out:
	free_entries(e, count);
	buf_free(&path), buf_free(&full), buf_free(&rel);
	return rc;
}
