#!/bin/bash
# musl-sysroot.sh DIR: what `make build` needs to link the binary against
# musl (musl-gcc) instead of glibc, made in DIR as symbolic links to the
# host's files:
#   DIR/include  linux/, asm/, asm-generic/ (the kernel's headers, which
#                musl-gcc's include path leaves out) and seccomp*.h
#   DIR/lib      libseccomp.a alone (not the directory it is in, whose
#                libc.a is glibc's)
# libseccomp's archive is the distribution's, built against glibc; the one
# glibc symbol it needs that musl lacks (__fprintf_chk, from
# _FORTIFY_SOURCE) is in libbox/nsenter/muslcompat.c.
#
# Why musl: a static glibc binary probes the CPU's caches and features at
# every start (tens of cpuid instructions, each a VM exit under a
# hypervisor): an empty static program takes 0.34 ms of CPU with glibc and
# 0.06 ms with musl on the 2-CPU development VM, and a run starts the
# binary twice (the runtime, and the nsenter stage).
set -euo pipefail
dir=${1:?usage: musl-sysroot.sh DIR}
die() {
	echo "musl-sysroot: $*" >&2
	exit 1
}
command -v pkg-config >/dev/null || die "pkg-config is missing: apt-get install pkg-config (or build with LIBC=glibc)"
pkg-config --exists libseccomp || die "libseccomp is missing: apt-get install libseccomp-dev (or build with LIBC=glibc)"
inc=$(pkg-config --variable=includedir libseccomp)
lib=$(pkg-config --variable=libdir libseccomp)
[[ -e "$lib/libseccomp.a" ]] || die "$lib/libseccomp.a is missing: apt-get install libseccomp-dev"
multiarch=$(gcc -print-multiarch 2>/dev/null || true)
asm=/usr/include/asm
[[ -d "$asm" || -z "$multiarch" ]] || asm=/usr/include/$multiarch/asm
for d in /usr/include/linux /usr/include/asm-generic "$asm"; do
	[[ -d "$d" ]] || die "$d is missing: apt-get install linux-libc-dev"
done
mkdir -p "$dir/include" "$dir/lib"
ln -sfn /usr/include/linux "$dir/include/linux"
ln -sfn /usr/include/asm-generic "$dir/include/asm-generic"
ln -sfn "$asm" "$dir/include/asm"
for h in "$inc"/seccomp*.h; do
	ln -sf "$h" "$dir/include/${h##*/}"
done
ln -sf "$lib/libseccomp.a" "$dir/lib/libseccomp.a"
