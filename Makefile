# nanobox-runc: build, test, bench, demo. `make help` lists the targets.

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BINARY := nanobox-runc
RECVTTY := tests/integration/recvtty/recvtty
# The runtime the integration suites test; RUNTIME=$$(which runc) checks
# the suites against the reference runtime.
RUNTIME ?= $(CURDIR)/$(BINARY)
# Suites to run (a directory or .bats files).
TESTS ?= tests/integration

export RUNTIME

.PHONY: all help deps build install uninstall recvtty test unit integration integration-root \
	integration-rootless bench lint clean demo demo-bundle test-clients

all: build

help:
	@echo "make deps                  check Go, install the C toolchain and libseccomp if missing (root)"
	@echo "make build                 build ./$(BINARY)"
	@echo "make install               build and install it as $(BINDIR)/$(BINARY) (root; PREFIX=, BINDIR=, DESTDIR=)"
	@echo "make test                  unit tests, then the integration suites rootful and rootless"
	@echo "make unit                  go test ./..."
	@echo "make integration           bats suites, rootful then rootless (as root)"
	@echo "make integration-root      bats suites, rootful only"
	@echo "make integration-rootless  bats suites, runtime run as an unprivileged user"
	@echo "make test-clients          podman, containerd, its CRI plugin (crictl) and dockerd running their containers on $(BINARY) (root)"
	@echo "make crictl                crictl $(CRICTL_VERSION) for the CRI suite, from the Go module proxy"
	@echo "make test-cgroup2          the cgroup suites on a pure cgroup v2 kernel (QEMU VM), root and rootless"
	@echo "make runtime-tools         the OCI runtime-tools validation suite against \$$RUNTIME (root; ~2 min)"
	@echo "make runc-integration      runc v1.5.3's own bats suite against \$$RUNTIME (root)"
	@echo "make critest               Kubernetes' CRI validation suite (critest) via containerd against \$$RUNTIME (root; ~3 min)"
	@echo "make containerd2           cri.bats, containerd.bats and critest against containerd 2.x built from the Go module proxy (root; ~4 min)"
	@echo "make bench                 time '$(BINARY) run' against runc, the sandbox against bwrap"
	@echo "make lint                  gofmt and go vet"
	@echo "make demo                  run a program in a sandbox with no bundle"
	@echo "make demo-bundle           run a sample busybox bundle end to end"
	@echo "make clean                 remove build outputs"

# --version's commit line (runc's); empty outside a git checkout.
GIT_COMMIT ?= $(shell git describe --always --dirty --abbrev=12 2>/dev/null)

# The runtime binary is started two or three times per container (the
# runtime, its nsenter stage, the container's init), so what a process
# start costs is paid that often (scripts/profile-run.sh measures it):
#   urfave_cli_no_docs  drops urfave/cli's man page and markdown output
#                       (go-md2man, blackfriday), whose package init was
#                       40% of a process start's instructions
#   static linking      no dynamic loader, no relocations of libc and
#                       libseccomp at each start; osusergo and netgo are
#                       what a static glibc binary needs (os/user reads
#                       /etc/passwd and /etc/group itself, net resolves
#                       with Go's own resolver: no NSS modules)
#   -w                  no DWARF (never loaded; the symbol table stays,
#                       for perf and stack traces)
#   -Wl,--wrap=mmap     the Go runtime's heap mappings pass through
#                       libbox/nsenter/thp.c, which asks for transparent
#                       huge pages: the page faults of the Go heap were a
#                       fifth of a run's CPU
#   GOEXPERIMENT=jsonv2 encoding/json on Go's new implementation, with
#                       the same behaviour (only some error texts differ):
#                       the old one builds the encoders of every type a
#                       struct reaches the first time it meets the struct,
#                       config.json's and the state's whole type graphs in
#                       each process; the new one builds what a value uses,
#                       when it uses it (a quarter of the runtime process's
#                       instructions of a run). Every target here uses it,
#                       `make test`'s unit tests too; a plain `go test` (CI's
#                       unit stage) tests the default implementation, the
#                       one a program importing libbox gets unless it is
#                       built with the same setting.
GOEXPERIMENT ?= jsonv2
export GOEXPERIMENT
GO_BUILD_TAGS ?= urfave_cli_no_docs osusergo netgo
GO_LDFLAGS ?= -w -linkmode=external -extldflags "-static -Wl,--wrap=mmap"
GO_BUILDFLAGS = -trimpath -tags '$(GO_BUILD_TAGS)' -ldflags '$(GO_LDFLAGS) -X main.gitCommit=$(GIT_COMMIT)'
export GO_BUILDFLAGS

# What build needs: Go 1.26 (checked), gcc, libc6-dev, pkg-config,
# libseccomp-dev and musl-tools (installed when missing, as root). demo runs it first,
# so that one command does the set-up on a fresh machine.
deps:
	@GO=$(GO) scripts/deps.sh

# The C library the binary is linked with: musl where musl-gcc is
# installed (Debian's musl-tools; `make deps` installs it), glibc
# otherwise or with LIBC=glibc. A static glibc binary probes the CPU's
# caches and features at each start, tens of cpuid instructions that are
# each a VM exit under a hypervisor: 0.34 ms of CPU for an empty program
# against 0.06 ms with musl here, paid twice per container (the runtime
# and the nsenter stage), and `state`, `kill` and `delete` are one start
# each (scripts/musl-sysroot.sh has the details).
LIBC ?= $(if $(shell command -v musl-gcc 2>/dev/null),musl,glibc)
MUSL_SYSROOT := $(CURDIR)/.build/musl
ifeq ($(LIBC),musl)
BUILD_ENV = CC=musl-gcc CGO_CFLAGS='-O2 -g -isystem $(MUSL_SYSROOT)/include' CGO_LDFLAGS='-O2 -g -L$(MUSL_SYSROOT)/lib'
endif

build:
ifeq ($(LIBC),musl)
	@scripts/musl-sysroot.sh $(MUSL_SYSROOT)
endif
	$(BUILD_ENV) $(GO) build $(GO_BUILDFLAGS) -o $(BINARY) .

# Where the client configurations in the README expect it:
# /usr/local/bin/nanobox-runc. Mode 0755, owned by whoever installs it
# (root): the binary re-executes itself as the containers' init, so no one
# else may be able to write it.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin

install: build
	install -D -m 0755 $(BINARY) $(DESTDIR)$(BINDIR)/$(BINARY)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/$(BINARY)

# The console-socket receiver the tty suite uses.
recvtty: $(RECVTTY)

$(RECVTTY): tests/integration/recvtty/main.go
	$(GO) build -o $@ ./tests/integration/recvtty

unit:
	$(GO) test ./...

# Both parts run even if one fails, so a run shows everything that broke.
test: build recvtty
	@rc=0; \
	$(GO) test ./... || rc=1; \
	tests/integration/run.sh --mode both $(TESTS) || rc=1; \
	exit $$rc

integration: build recvtty
	tests/integration/run.sh --mode both $(TESTS)

integration-root: build recvtty
	tests/integration/run.sh --mode root $(TESTS)

integration-rootless: build recvtty
	tests/integration/run.sh --mode rootless $(TESTS)

# podman (conmon), containerd (containerd-shim-runc-v2), containerd's CRI
# plugin driven by crictl, and dockerd, all from apt except crictl, running
# their containers on ./$(BINARY), with private configs, storage and
# daemons of their own; root only. ctrupdate is the Go client (its own
# module, so the runtime's go.mod stays lean) for containerd's Tasks.Update.
CLIENT_SUITES := tests/integration/podman.bats tests/integration/containerd.bats \
	tests/integration/cri.bats tests/integration/docker.bats
test-clients: build crictl
	cd tests/integration/clients/ctrupdate && $(GO) build -o ctrupdate .
	tests/integration/run.sh --mode root $(CLIENT_SUITES)

# crictl for the CRI suite (cri.bats), from the Go module proxy; v1.37
# speaks the CRI v1 API that containerd 1.6 serves. Installed outside the
# runtime's module, into tests/integration/clients/bin.
CRICTL_VERSION ?= v1.37.0
CRICTL := tests/integration/clients/bin/crictl
.PHONY: crictl
crictl: $(CRICTL)

$(CRICTL):
	cd / && GOBIN=$(CURDIR)/tests/integration/clients/bin GOFLAGS= $(GO) install sigs.k8s.io/cri-tools/cmd/crictl@$(CRICTL_VERSION)

bench: build
	scripts/bench.sh

lint:
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -f $(BINARY) $(RECVTTY)

# The README's first command: build, and run a program in a sandbox with
# no bundle and no image.
demo: deps
	@$(MAKE) --no-print-directory build
	./$(BINARY) sandbox -- sh -c 'echo hello from the sandbox; echo "uid $$(id -u) on $$(hostname), pid $$$$, network: $$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " ")"'

# The same through an OCI bundle: install what is missing, build, make a
# busybox bundle in a temporary directory, and run it.
demo-bundle:
	@missing=""; \
	[ -x /bin/busybox ] || missing="$$missing busybox-static"; \
	command -v jq >/dev/null || missing="$$missing jq"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" -ne 0 ]; then echo "demo: please install:$$missing"; exit 1; fi; \
		echo "demo: installing$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@$(MAKE) --no-print-directory build
	@set -e; dir=$$(mktemp -d /tmp/nanobox-demo.XXXXXX); trap 'rm -rf "$$dir"' EXIT; \
	chmod 0755 "$$dir"; \
	tests/integration/mkbundle.sh --runtime "$(CURDIR)/$(BINARY)" "$$dir" \
		sh -c 'echo hello from the sandbox; echo "uid $$(id -u) on $$(hostname), pid $$$$"'; \
	echo "demo: bundle $$dir: busybox rootfs + config.json from '$(BINARY) spec'"; \
	echo "demo: $(BINARY) run -b $$dir demo-$$$$"; \
	./$(BINARY) run -b "$$dir" "demo-$$$$"

# A short coverage-guided pass over each go test -fuzz target, from the
# seed corpora in specconv/ and libbox/testdata/fuzz/: config.json ->
# libbox.Config, the state.json reader, and the network allowlist's parsers
# (TLS SNI and HTTP Host, DNS queries, rules, the proxy's request heads),
# the init config's binary decoder, the JSON fast paths' scanner and
# state.json's generated encoder and decoder.
# FUZZTIME=5m for a longer one.
FUZZTIME ?= 20s
.PHONY: fuzz
FUZZ_TARGETS := ./specconv:FuzzFromSpec ./specconv:FuzzFastJSON ./libbox:FuzzParseState \
	./libbox:FuzzSniff ./libbox:FuzzDNSAnswer ./libbox:FuzzNetRule \
	./libbox:FuzzProxyRequest ./libbox:FuzzCodecDecode ./internal/fastjson:FuzzSkip \
	./libbox:FuzzStateJSON
# Every target runs even if one fails; the last line counts them
# (scripts/fuzz.sh, which also tells Go 1.26's end-of-run deadline race
# from a finding).
fuzz:
	@GO=$(GO) scripts/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS)

# The cgroup v2 stage: libbox's cgroup unit tests and the cgroup suites on a
# pure cgroup v2 kernel, as root and rootless in a delegated subtree, in one
# boot of a throwaway QEMU VM (scripts/cgroup2-vm installs QEMU and fetches a
# Debian kernel the first time; software emulation where there is no usable
# KVM). CGROUP2_FILTER= runs every test of the suites there, not just the
# version-dependent ones.
.PHONY: test-cgroup2
test-cgroup2:
	scripts/test-cgroup2.sh

# The OCI runtime-tools validation suite (fetched through the Go module
# proxy, built once under $$XDG_CACHE_HOME) against $$RUNTIME, as root.
# RUNTIME_TESTS= names validation programs to run; default all.
.PHONY: runtime-tools
runtime-tools: build
	scripts/runtime-tools.sh $(RUNTIME_TESTS)

# runc's own tests/integration (v1.5.3, fetched through the Go module proxy,
# set up once under $$XDG_CACHE_HOME) against $$RUNTIME, as root; not in CI.
# RUNC_SUITES= names bats files to run; default all.
.PHONY: runc-integration
runc-integration: build
	scripts/runc-integration.sh $(RUNC_SUITES)

# Kubernetes' CRI validation suite (critest, built from the Go module proxy)
# through containerd's CRI plugin with the README's runtime handler; images
# from a local registry (tests/integration/critest). Root; .ci/run runs it.
.PHONY: critest
critest: build
	scripts/critest.sh

# The containerd client suites (cri.bats, containerd.bats, critest) against
# containerd 2.x (CONTAINERD2_VERSION), built once from the Go module proxy
# into ~/.cache. Root; .ci/run runs it.
.PHONY: containerd2
containerd2: build
	scripts/containerd2.sh
