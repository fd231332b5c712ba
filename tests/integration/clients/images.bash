#!/usr/bin/env bash
# Images for the CRI and Docker suites, made here with no registry: the
# busybox rootfs of clients.bash and a pause image built from
# clients/pause/pause.c, each written as a docker-archive (the format of
# `docker save`, which `docker load` and `ctr images import` both read).
# Needs clients.bash (CLIENTS_WORK, clients_image).

BUSYBOX_REF=localhost/busybox:latest
PAUSE_REF=localhost/nanobox-pause:1

# image_arch: the OCI architecture name of this machine.
image_arch() {
	case "$(uname -m)" in
	x86_64) echo amd64 ;;
	aarch64) echo arm64 ;;
	*) uname -m ;;
	esac
}

# image_archive OUT REF LAYER-TAR CONFIG-JSON: a docker-archive of one
# layer, tagged REF, whose image config's "config" is CONFIG-JSON.
image_archive() {
	local out=$1 ref=$2 layer=$3 cfg=$4 dir diff conf
	mkdir -p "$CLIENTS_WORK"
	dir=$(mktemp -d "$CLIENTS_WORK/image.XXXXXX")
	diff=$(sha256sum "$layer" | cut -d' ' -f1)
	mkdir "$dir/$diff"
	cp "$layer" "$dir/$diff/layer.tar"
	jq -n --arg arch "$(image_arch)" --arg diff "sha256:$diff" --argjson cfg "$cfg" \
		'{architecture: $arch, os: "linux", created: "2024-01-01T00:00:00Z", config: $cfg,
		  rootfs: {type: "layers", diff_ids: [$diff]}}' >"$dir/config.json"
	conf=$(sha256sum "$dir/config.json" | cut -d' ' -f1)
	mv "$dir/config.json" "$dir/$conf.json"
	jq -n --arg c "$conf.json" --arg r "$ref" --arg l "$diff/layer.tar" \
		'[{Config: $c, RepoTags: [$r], Layers: [$l]}]' >"$dir/manifest.json"
	tar -C "$dir" -cf "$out.tmp" manifest.json "$conf.json" "$diff"
	rm -rf "$dir"
	mv "$out.tmp" "$out"
}

# busybox_archive: $CLIENTS_WORK/busybox-image.tar, the busybox image, made
# once per run. Prints its path.
busybox_archive() {
	local out="$CLIENTS_WORK/busybox-image.tar"
	if [[ ! -s "$out" ]]; then
		clients_image
		image_archive "$out" "$BUSYBOX_REF" "$CLIENTS_WORK/busybox.tar" \
			'{"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], "Cmd": ["/bin/sh"]}' ||
			return 1
	fi
	echo "$out"
}

# PAUSE_CONFIG: the sandbox image's config, as registry.k8s.io/pause's.
PAUSE_CONFIG='{"Entrypoint": ["/pause"], "User": "65535:65535"}'

# pause_layer OUT: the sandbox image's one layer, pause.c built static
# (gcc, libc6-dev) as /pause, written to the tar OUT.
pause_layer() {
	local dir rc=0
	dir=$(mktemp -d "${TMPDIR:-/tmp}/pause.XXXXXX")
	gcc -static -Os -s -Wall -o "$dir/pause" "$CLIENTS_DIR/pause/pause.c" >&2 &&
		tar -C "$dir" --owner=0 --group=0 -cf "$1" pause || rc=1
	rm -rf "$dir"
	[[ $rc -eq 0 ]] || fail "cannot build the pause image: gcc -static failed (apt-get install gcc libc6-dev)"
}

# pause_archive: $CLIENTS_WORK/pause-image.tar, the sandbox image: the
# pause program alone (pause_layer). Prints its path.
pause_archive() {
	local out="$CLIENTS_WORK/pause-image.tar"
	if [[ ! -s "$out" ]]; then
		mkdir -p "$CLIENTS_WORK"
		pause_layer "$CLIENTS_WORK/pause-layer.tar" || return 1
		image_archive "$out" "$PAUSE_REF" "$CLIENTS_WORK/pause-layer.tar" "$PAUSE_CONFIG" || return 1
		rm -f "$CLIENTS_WORK/pause-layer.tar"
	fi
	echo "$out"
}
