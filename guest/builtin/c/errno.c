/* errno.c: the texts of Go's wasip1 errors (syscall.Errno's Error), which
 * the tools' error messages carry, keyed by wasi-libc's errno values, which
 * are WASI's, as Go's are. */
#include <errno.h>
#include <stddef.h>

#include "files.h"

static const struct {
	int code;
	const char *text;
} errtab[] = {
#ifdef E2BIG
	{E2BIG, "Argument list too long"},
#endif
#ifdef EACCES
	{EACCES, "Permission denied"},
#endif
#ifdef EADDRINUSE
	{EADDRINUSE, "Address already in use"},
#endif
#ifdef EADDRNOTAVAIL
	{EADDRNOTAVAIL, "Address not available"},
#endif
#ifdef EAFNOSUPPORT
	{EAFNOSUPPORT, "Address family not supported by protocol family"},
#endif
#ifdef EAGAIN
	{EAGAIN, "Try again"},
#endif
#ifdef EALREADY
	{EALREADY, "Socket already connected"},
#endif
#ifdef EBADF
	{EBADF, "Bad file number"},
#endif
#ifdef EBADFD
	{EBADFD, "file descriptor in bad state"},
#endif
#ifdef EBADMSG
	{EBADMSG, "Trying to read unreadable message"},
#endif
#ifdef EBUSY
	{EBUSY, "Device or resource busy"},
#endif
#ifdef ECANCELED
	{ECANCELED, "Operation canceled."},
#endif
#ifdef ECHILD
	{ECHILD, "No child processes"},
#endif
#ifdef ECONNABORTED
	{ECONNABORTED, "Connection aborted"},
#endif
#ifdef ECONNREFUSED
	{ECONNREFUSED, "Connection refused"},
#endif
#ifdef ECONNRESET
	{ECONNRESET, "Connection reset by peer"},
#endif
#ifdef EDEADLK
	{EDEADLK, "Deadlock condition"},
#endif
#ifdef EDESTADDRREQ
	{EDESTADDRREQ, "Destination address required"},
#endif
#ifdef EDOM
	{EDOM, "Math arg out of domain of func"},
#endif
#ifdef EDQUOT
	{EDQUOT, "Quota exceeded"},
#endif
#ifdef EEXIST
	{EEXIST, "File exists"},
#endif
#ifdef EFAULT
	{EFAULT, "Bad address"},
#endif
#ifdef EFBIG
	{EFBIG, "File too large"},
#endif
#ifdef EHOSTUNREACH
	{EHOSTUNREACH, "Host is unreachable"},
#endif
#ifdef EIDRM
	{EIDRM, "Identifier removed"},
#endif
#ifdef EILSEQ
	{EILSEQ, "EILSEQ"},
#endif
#ifdef EINPROGRESS
	{EINPROGRESS, "Connection already in progress"},
#endif
#ifdef EINTR
	{EINTR, "Interrupted system call"},
#endif
#ifdef EINVAL
	{EINVAL, "Invalid argument"},
#endif
#ifdef EIO
	{EIO, "I/O error"},
#endif
#ifdef EISCONN
	{EISCONN, "Socket is already connected"},
#endif
#ifdef EISDIR
	{EISDIR, "Is a directory"},
#endif
#ifdef ELOOP
	{ELOOP, "Too many symbolic links"},
#endif
#ifdef EMFILE
	{EMFILE, "Too many open files"},
#endif
#ifdef EMLINK
	{EMLINK, "Too many links"},
#endif
#ifdef EMSGSIZE
	{EMSGSIZE, "Message too long"},
#endif
#ifdef EMULTIHOP
	{EMULTIHOP, "Multihop attempted"},
#endif
#ifdef ENAMETOOLONG
	{ENAMETOOLONG, "File name too long"},
#endif
#ifdef ENETDOWN
	{ENETDOWN, "Network interface is not configured"},
#endif
#ifdef ENETRESET
	{ENETRESET, "Network dropped connection on reset"},
#endif
#ifdef ENETUNREACH
	{ENETUNREACH, "Network is unreachable"},
#endif
#ifdef ENFILE
	{ENFILE, "File table overflow"},
#endif
#ifdef ENOBUFS
	{ENOBUFS, "No buffer space available"},
#endif
#ifdef ENODEV
	{ENODEV, "No such device"},
#endif
#ifdef ENOENT
	{ENOENT, "No such file or directory"},
#endif
#ifdef ENOEXEC
	{ENOEXEC, "Exec format error"},
#endif
#ifdef ENOLCK
	{ENOLCK, "No record locks available"},
#endif
#ifdef ENOLINK
	{ENOLINK, "The link has been severed"},
#endif
#ifdef ENOMEM
	{ENOMEM, "Out of memory"},
#endif
#ifdef ENOMSG
	{ENOMSG, "No message of desired type"},
#endif
#ifdef ENOPROTOOPT
	{ENOPROTOOPT, "Protocol not available"},
#endif
#ifdef ENOSPC
	{ENOSPC, "No space left on device"},
#endif
#ifdef ENOSYS
	{ENOSYS, "Not implemented on wasip1"},
#endif
#ifdef ENOTCONN
	{ENOTCONN, "Socket is not connected"},
#endif
#ifdef ENOTDIR
	{ENOTDIR, "Not a directory"},
#endif
#ifdef ENOTEMPTY
	{ENOTEMPTY, "Directory not empty"},
#endif
#ifdef ENOTRECOVERABLE
	{ENOTRECOVERABLE, "State not recoverable"},
#endif
#ifdef ENOTSOCK
	{ENOTSOCK, "Socket operation on non-socket"},
#endif
#ifdef ENOTSUP
	{ENOTSUP, "Not supported"},
#endif
#ifdef ENOTTY
	{ENOTTY, "Not a typewriter"},
#endif
#ifdef ENXIO
	{ENXIO, "No such device or address"},
#endif
#ifdef EOVERFLOW
	{EOVERFLOW, "Value too large for defined data type"},
#endif
#ifdef EOWNERDEAD
	{EOWNERDEAD, "Owner died"},
#endif
#ifdef EPERM
	{EPERM, "Operation not permitted"},
#endif
#ifdef EPIPE
	{EPIPE, "Broken pipe"},
#endif
#ifdef EPROTO
	{EPROTO, "Protocol error"},
#endif
#ifdef EPROTONOSUPPORT
	{EPROTONOSUPPORT, "Unknown protocol"},
#endif
#ifdef EPROTOTYPE
	{EPROTOTYPE, "Protocol wrong type for socket"},
#endif
#ifdef ERANGE
	{ERANGE, "Math result not representable"},
#endif
#ifdef EROFS
	{EROFS, "Read-only file system"},
#endif
#ifdef ESPIPE
	{ESPIPE, "Illegal seek"},
#endif
#ifdef ESRCH
	{ESRCH, "No such process"},
#endif
#ifdef ESTALE
	{ESTALE, "Stale file handle"},
#endif
#ifdef ETIMEDOUT
	{ETIMEDOUT, "Connection timed out"},
#endif
#ifdef ETXTBSY
	{ETXTBSY, "Text file busy"},
#endif
#ifdef EXDEV
	{EXDEV, "Cross-device link"},
#endif
#ifdef ENOTCAPABLE
	{ENOTCAPABLE, "Capabilities insufficient"},
#endif
};

const char *errno_text(int code, char *tmp, size_t n)
{
	for (size_t i = 0; i < sizeof errtab / sizeof errtab[0]; i++)
		if (errtab[i].code == code)
			return errtab[i].text;
	/* "errno N", as Go words one it has no text for. */
	char d[12];
	int k = sizeof d, v = code < 0 ? -code : code;
	do {
		d[--k] = '0' + v % 10;
		v /= 10;
	} while (v);
	size_t j = 0;
	const char *p = "errno ";
	while (*p && j + 1 < n)
		tmp[j++] = *p++;
	if (code < 0 && j + 1 < n)
		tmp[j++] = '-';
	while (k < (int)sizeof d && j + 1 < n)
		tmp[j++] = d[k++];
	tmp[j] = 0;
	return tmp;
}
