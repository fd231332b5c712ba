#!/bin/bash
# modsrc.sh: sourced by the scripts that build a public suite from its Go
# module (critest.sh, runc-integration.sh, runtime-tools.sh).
#
# module_source MODULE@VERSION DEST: DEST is a fresh, writable copy of the
# module's source, fetched through the Go module proxy ($GO mod download).
# Exits with a message naming the module when the download fails.
module_source() {
	local mod=$1 dest=$2 dir
	dir=$(cd /tmp && GOFLAGS=-mod=mod "${GO:-go}" mod download -json "$mod" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [[ ! -d $dir ]]; then
		echo "$(basename "$0"): go mod download $mod gave no directory (is the Go module proxy reachable?)" >&2
		exit 1
	fi
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	cp -r "$dir" "$dest"
	chmod -R u+w "$dest"
}
