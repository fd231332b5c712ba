package libbox

// Options -> Config: the sandbox is an ordinary container Config, filled in
// here, then created, started and torn down by the same code as every OCI
// container (container_linux.go, init_linux.go). Nothing here is a second
// engine; it decides the defaults of a sandbox:
//
//   - the root: a tmpfs (rootfs_tmpfs_linux.go) holding read-only binds of
//     the host's /usr, /etc and /lib*, /bin, /sbin (symlinks where the host
//     has symlinks), made read-only after set-up; the secrets of /etc
//     masked (SecretPaths); a private /tmp, /proc, a minimal /dev with
//     pts and a private /dev/shm; nothing copied, nothing written on the
//     host;
//   - every namespace new: user (the sandbox's uid and gid mapped to the
//     caller's, or to Namespaces.HostUID/HostGID), mount, pid, ipc, uts,
//     cgroup and network (unless the network is the host's);
//   - no capabilities, no_new_privs, a new session keyring, seccomp;
//   - the limits as planned by planLimits (limits_linux.go).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// SystemDirs are the host directories a sandbox without a rootfs sees,
// read-only; those that are symlinks on the host (a merged /usr) become
// the same symlinks. /lib* stands for every /lib, /lib32, /lib64, /libx32.
var SystemDirs = []string{"/usr", "/bin", "/sbin", "/lib*", "/etc"}

// SecretPaths are the host files and directories hidden from a sandbox that
// sees the host's /etc (an empty file or directory is bound over each one
// that exists): password hashes, private keys, credentials. Globs are
// expanded when the sandbox is made.
var SecretPaths = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/security/opasswd",
	"/etc/sudoers", "/etc/sudoers.d",
	"/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_*_key.pub",
	"/etc/ssl/private",
	"/etc/krb5.keytab",
	"/etc/credstore", "/etc/credstore.encrypted",
	"/etc/NetworkManager/system-connections",
	"/etc/wpa_supplicant",
	"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
	"/etc/ipsec.secrets", "/etc/ipsec.d/private",
	"/etc/wireguard",
	"/etc/letsencrypt",
	"/etc/kubernetes/pki", "/etc/kubernetes/admin.conf",
	"/etc/rancher",
	"/etc/docker/key.json",
	"/etc/containerd/certs.d",
	"/etc/machine-id",
}

// procMasked and procReadonly are the OCI runtime's default masks of
// /proc, as in `nanobox-runc spec`.
var (
	procMasked = []string{
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
	}
	procReadonly = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// Defaults of a sandbox.
const (
	defaultHostname = "sandbox"
	defaultWorkDir  = "/tmp"
	// defaultTmpSize caps the default /tmp and a Tmpfs without a size.
	defaultTmpSize = 64 * MB
	// defaultTmpDirSize caps the default /tmp.
	defaultTmpDirSize = 256 * MB
)

// hostLayout is what New learns from the host once: how the system
// directories look and which secrets exist.
type hostLayout struct {
	binds    []string  // host directories bound read-only at the same path
	symlinks []Symlink // host symlinks among SystemDirs, recreated
	secrets  []string  // existing SecretPaths
}

func scanHostLayout() (*hostLayout, error) {
	h := &hostLayout{}
	for _, pattern := range SystemDirs {
		paths := []string{pattern}
		if strings.ContainsAny(pattern, "*?[") {
			var err error
			if paths, err = filepath.Glob(pattern); err != nil {
				return nil, fmt.Errorf("system directory %s: %w", pattern, err)
			}
		}
		for _, p := range paths {
			fi, err := os.Lstat(p)
			if err != nil {
				continue // a host without /lib32, say
			}
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				target, err := os.Readlink(p)
				if err != nil {
					return nil, fmt.Errorf("system directory %s: %w", p, err)
				}
				h.symlinks = append(h.symlinks, Symlink{Path: p, Target: target})
			case fi.IsDir():
				h.binds = append(h.binds, p)
			}
		}
	}
	if !slices.Contains(h.binds, "/usr") {
		return nil, fmt.Errorf("this host has no /usr directory to build the sandbox's root from: give a rootfs")
	}
	for _, pattern := range SecretPaths {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("secret path %s: %w", pattern, err)
		}
		h.secrets = append(h.secrets, matches...)
	}
	return h, nil
}

// idMapping is who the sandbox's user is on the host.
type idMapping struct {
	hostUID, hostGID uint32
}

// sandboxV1Hierarchies are the cgroup v1 hierarchies a sandbox is placed
// in: those of its limits (memory, pids, cpu), of its report (memory's
// peak and OOM kills, cpuacct's usage), of pause and kill (freezer), and
// devices, which holds its device rules. The others (cpuset, blkio,
// perf_event, name=systemd, ...) would each cost a directory made and
// removed, and files written, for nothing a sandbox uses; there it stays
// in the caller's cgroups, as under bubblewrap or isolate's rlimits.
var sandboxV1Hierarchies = []string{"memory", "pids", "cpu", "cpuacct", "freezer", "devices"}

// containerConfig is the Config for one run of args: everything but the
// per-run annotations. Its slices are shared between runs and never
// modified.
func (s *Sandbox) containerConfig(args []string) *Config {
	o := &s.opts
	cfg := &Config{
		Readonlyfs:        true,
		Hostname:          o.Hostname,
		ParentDeathSignal: int(unix.SIGKILL),
		Seccomp:           s.seccomp,
		Landlock:          o.Landlock,
		Resources:         s.plan.resources,
		V1Hierarchies:     sandboxV1Hierarchies,
		Annotations:       map[string]string{},
		Network:           s.networkConfig(),
	}
	if cfg.Hostname == "" {
		cfg.Hostname = defaultHostname
	}
	cfg.Namespaces = []Namespace{{Type: NEWUSER}, {Type: NEWNS}, {Type: NEWPID}, {Type: NEWIPC}, {Type: NEWUTS}, {Type: NEWCGROUP}}
	if o.Network.mode() != NetworkHost {
		cfg.Namespaces = append(cfg.Namespaces, Namespace{Type: NEWNET})
	}
	cfg.UIDMappings = []IDMap{{ContainerID: o.User.UID, HostID: s.ids.hostUID, Size: 1}}
	cfg.GIDMappings = []IDMap{{ContainerID: o.User.GID, HostID: s.ids.hostGID, Size: 1}}

	switch {
	case o.Rootfs != "":
		cfg.Rootfs = o.Rootfs
	case s.specRootfs != "":
		// An OCI bundle has no tmpfs root and cannot make symlinks: its
		// (empty) rootfs gets binds of the symlinks' targets instead.
		cfg.Rootfs = s.specRootfs
		for _, l := range s.layout.symlinks {
			cfg.Mounts = append(cfg.Mounts, roBind(l.Path, l.Path))
		}
		for _, d := range s.layout.binds {
			cfg.Mounts = append(cfg.Mounts, roBind(d, d))
		}
		cfg.MaskedPaths = append(cfg.MaskedPaths, s.layout.secrets...)
	default:
		cfg.Rootfs = s.rt.Root
		cfg.RootfsTmpfs = &TmpfsRoot{Symlinks: s.layout.symlinks}
		for _, d := range s.layout.binds {
			cfg.Mounts = append(cfg.Mounts, roBind(d, d))
		}
		cfg.MaskedPaths = append(cfg.MaskedPaths, s.layout.secrets...)
	}
	cfg.Mounts = append(cfg.Mounts, sandboxSpecialMounts()...)
	if !slices.ContainsFunc(o.Tmpfs, func(t Tmpfs) bool { return filepath.Clean(t.Target) == "/tmp" }) {
		cfg.Mounts = append(cfg.Mounts, tmpfsMount("/tmp", defaultTmpDirSize))
	}
	for _, b := range s.binds {
		if b.ReadOnly {
			cfg.Mounts = append(cfg.Mounts, roBind(b.Source, b.Target))
		} else {
			cfg.Mounts = append(cfg.Mounts, Mount{
				Source: b.Source, Destination: b.Target, Type: "bind",
				Flags: unix.MS_BIND | unix.MS_REC | unix.MS_NOSUID | unix.MS_NODEV,
			})
		}
	}
	for _, t := range o.Tmpfs {
		size := t.Size
		if size == 0 {
			size = defaultTmpSize
		}
		m := tmpfsMount(t.Target, size)
		if t.ReadOnly {
			m.Flags |= unix.MS_RDONLY
			m.Data = "mode=755,size=4096"
		}
		cfg.Mounts = append(cfg.Mounts, m)
	}
	cfg.MaskedPaths = append(cfg.MaskedPaths, procMasked...)
	cfg.ReadonlyPaths = slices.Clone(procReadonly)

	workDir := o.WorkDir
	if workDir == "" {
		workDir = defaultWorkDir
	}
	cfg.Process = Process{
		Args:            slices.Clone(args),
		Env:             slices.Clone(o.Env),
		Cwd:             workDir,
		User:            User{UID: o.User.UID, GID: o.User.GID, Umask: o.User.Umask},
		Capabilities:    &Capabilities{},
		Rlimits:         s.plan.rlimits,
		NoNewPrivileges: true,
	}
	return cfg
}

// roBind is a read-only bind of src at dst, with the host's mounts beneath
// src, every one of them read-only too: in a user namespace a bind that
// left them out would fail (they are locked), and one that took them along
// writable would leak (a remount makes only the top mount read-only).
func roBind(src, dst string) Mount {
	return Mount{
		Source: src, Destination: dst, Type: "bind",
		Flags:             unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV,
		RecursiveReadonly: true,
	}
}

func tmpfsMount(dst string, size int64) Mount {
	return Mount{
		Source: "tmpfs", Destination: dst, Type: "tmpfs",
		Flags: unix.MS_NOSUID | unix.MS_NODEV,
		Data:  "mode=1777,size=" + strconv.FormatInt(size, 10),
	}
}

// sandboxSpecialMounts are /proc and a minimal /dev: the device nodes of
// DefaultDevices (made by the set-up of /dev), a devpts instance of the
// sandbox's own and a private /dev/shm.
func sandboxSpecialMounts() []Mount {
	return []Mount{
		{Source: "proc", Destination: "/proc", Type: "proc", Flags: unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{Source: "tmpfs", Destination: "/dev", Type: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "mode=755,size=65536"},
		{Source: "devpts", Destination: "/dev/pts", Type: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "newinstance,ptmxmode=0666,mode=0620"},
		{Source: "shm", Destination: "/dev/shm", Type: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, Data: "mode=1777,size=" + strconv.FormatInt(defaultTmpSize, 10)},
	}
}

// ContainerConfig is the container a sandbox made from opts runs args in,
// for an OCI runtime (`nanobox-runc spec --preset`): the same mounts,
// namespaces, id maps, masks, filters and rlimits, with rootfs (an empty
// directory, relative to the bundle) as the root, which the system
// directories are bound into. The limits that need a cgroup are cgroup
// resources whatever this host can enforce: the OCI runtime that runs the
// bundle decides. sandboxOnly lists, in words, what only the sandbox
// runtime enforces and the Config cannot carry.
func ContainerConfig(opts Options, rootfs string, args []string) (cfg *Config, sandboxOnly []string, err error) {
	if opts.Namespaces.None {
		return nil, nil, errors.New("sandbox options: namespaces.none has no container form")
	}
	s, err := prepare(opts, true)
	if err != nil {
		return nil, nil, err
	}
	if rootfs == "" {
		rootfs = "rootfs"
	}
	s.specRootfs = rootfs
	cfg = s.containerConfig(args)
	cfg.ParentDeathSignal = 0
	if len(cfg.Annotations) == 0 {
		cfg.Annotations = nil
	}
	l := opts.Limits
	if l.WallTime != 0 {
		sandboxOnly = append(sandboxOnly, fmt.Sprintf("the wall time limit (%s)", l.WallTime))
	}
	if l.Output != 0 {
		sandboxOnly = append(sandboxOnly, fmt.Sprintf("the output limit (%d bytes)", l.Output))
	}
	if l.CPUTime != 0 {
		sandboxOnly = append(sandboxOnly, "the CPU time limit of the sandbox as a whole (RLIMIT_CPU per process is kept)")
	}
	return cfg, sandboxOnly, nil
}
