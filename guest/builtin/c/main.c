/* main.c: the module's entry point in cairn's fast mode (see abi, "The fast
 * mode"): a WASI reactor that exports cairn_call. A call reads one request
 * from stdin, to its end, and writes one response to stdout. stdio is not
 * used: its state would be the snapshot's, taken after the warm-up call
 * had read stdin to its end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wasi/api.h>

#include "cairn.h"
#include "manifest.h"

#define MAX_MESSAGE (16u << 20)

static int read_all(struct buf *b)
{
	for (;;) {
		buf_grow(b, 4096);
		if (b->oom)
			return -1;
		size_t room = b->cap - b->n;
		if (b->n + room > MAX_MESSAGE + 1)
			room = MAX_MESSAGE + 1 - b->n;
		if (room == 0)
			return 0; /* past the limit: decoding refuses it */
		ssize_t got = read(0, b->p + b->n, room);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (got == 0)
			return 0;
		b->n += got;
	}
}

static int write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= w;
	}
	return 0;
}

/* manifest_asked tells whether this call's first argument is
 * --cairn-manifest, read afresh through WASI: the snapshot's are not the
 * call's. */
static int manifest_asked(void)
{
	static const char flag[] = "--cairn-manifest";
	__wasi_size_t argc, size;
	if (__wasi_args_sizes_get(&argc, &size) != 0 || argc < 2)
		return 0;
	uint8_t **argv = malloc(argc * sizeof *argv);
	uint8_t *buf = malloc(size);
	int asked = argv && buf && __wasi_args_get(argv, buf) == 0 &&
		    strcmp((const char *)argv[1], flag) == 0;
	free(argv);
	free(buf);
	return asked;
}

__attribute__((export_name("cairn_call"))) int cairn_call(void)
{
	struct buf req = {0}, resp = {0};
	if (manifest_asked())
		return write_all((const char *)cairn_manifest, sizeof cairn_manifest) ? 1 : 0;
	if (read_all(&req)) {
		static const char msg[] = "read request: failed\n";
		write(2, msg, sizeof msg - 1);
		buf_free(&req);
		return 1;
	}
	serve(req.p ? req.p : "", req.n, &resp);
	buf_free(&req);
	int rc = resp.oom || write_all(resp.p, resp.n) ? 1 : 0;
	buf_free(&resp);
	return rc;
}
