// What a C library other than glibc (musl) lacks for libseccomp as Debian
// and others build it: with _FORTIFY_SOURCE its static archive calls
// glibc's checked fprintf (in seccomp_export_pfc). Linked against glibc
// this file is empty.
#include <stdarg.h>
#include <stdio.h>

#ifndef __GLIBC__
int __fprintf_chk(FILE *stream, int flag, const char *format, ...);

int __fprintf_chk(FILE *stream, int flag, const char *format, ...)
{
	va_list ap;
	int n;

	(void)flag;
	va_start(ap, format);
	n = vfprintf(stream, format, ap);
	va_end(ap);
	return n;
}
#endif
