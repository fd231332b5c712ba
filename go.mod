module github.com/nanobox-sandbox/nanobox-runc

go 1.26.0

require (
	github.com/containerd/console v1.0.5
	github.com/cyphar/filepath-securejoin v0.7.0
	github.com/moby/sys/mountinfo v0.7.3
	github.com/moby/sys/user v0.5.0
	github.com/opencontainers/runtime-spec v1.3.0
	github.com/sirupsen/logrus v1.10.2
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.50.0
)

require (
	cyphar.com/go-pathrs v0.2.5 // indirect
	github.com/coreos/go-systemd/v22 v22.6.0
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/godbus/dbus/v5 v5.1.0
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/moby/profiles/seccomp v0.3.0
	github.com/moby/sys/userns v0.2.1
	github.com/opencontainers/cgroups v0.1.0
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/seccomp/libseccomp-golang v0.11.1
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
