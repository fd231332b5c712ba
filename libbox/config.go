// Package libbox is the Linux isolation engine behind nanobox-runc: namespaces,
// mounts, devices, capabilities, rlimits and the container lifecycle. It knows
// nothing of OCI JSON; specconv fills a Config in from a config.json or a preset.
package libbox

import (
	"os"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// Config is everything the runtime decides about one container. It is filled
// in once (by specconv or a Go caller) and serialised to the init process;
// nothing downstream re-reads config.json.
type Config struct {
	// OCIVersion is the ociVersion of the bundle's config.json, echoed in the
	// state JSON.
	OCIVersion string `json:"ociVersion,omitempty"`
	// Bundle is the absolute path of the bundle directory ("" for bundle-less
	// sandboxes).
	Bundle string `json:"bundle,omitempty"`
	// Rootfs is the absolute host path of the container's root filesystem.
	Rootfs string `json:"rootfs"`
	// RootfsTmpfs, when set, mounts a new tmpfs on Rootfs (any existing
	// directory: it is only covered, in the container's mount namespace)
	// before every other mount, so that Mounts build the root from nothing:
	// a sandbox without a bundle (rootfs_tmpfs_linux.go).
	RootfsTmpfs *TmpfsRoot `json:"rootfsTmpfs,omitempty"`
	// Readonlyfs remounts the root read-only after set-up.
	Readonlyfs bool `json:"readonlyfs,omitempty"`
	// RootPropagation is the mount propagation (MS_SHARED, MS_SLAVE,
	// MS_PRIVATE, optionally with MS_REC) applied to / in the container's
	// mount namespace; 0 means the runc default, MS_SLAVE|MS_REC.
	RootPropagation int `json:"rootPropagation,omitempty"`
	// NoPivotRoot uses MS_MOVE + chroot instead of pivot_root(2), for roots
	// on a ramfs (runc --no-pivot).
	NoPivotRoot bool `json:"noPivotRoot,omitempty"`
	// NoNewKeyring keeps the caller's session keyring (runc --no-new-keyring).
	NoNewKeyring bool `json:"noNewKeyring,omitempty"`

	// ParentDeathSignal, when not 0, is sent to init (and so to its whole
	// pid namespace) if the process that created the container exits
	// first (PR_SET_PDEATHSIG; see pdeathsig_linux.go). The OCI runtime
	// leaves it 0: under create/start, init outlives the runtime.
	ParentDeathSignal int `json:"parentDeathSignal,omitempty"`

	Hostname   string `json:"hostname,omitempty"`
	Domainname string `json:"domainname,omitempty"`

	// Namespaces lists the namespaces of the container: a new one when Path
	// is empty, the one at Path otherwise. A type absent from the list is
	// shared with the runtime.
	Namespaces []Namespace `json:"namespaces,omitempty"`
	// TimeOffsets are the offsets of the monotonic and boottime clocks in
	// a new time namespace (OCI linux.timeOffsets), by clock name.
	TimeOffsets map[string]TimeOffset `json:"timeOffsets,omitempty"`
	// UIDMappings and GIDMappings apply when a new user namespace is made.
	UIDMappings []IDMap `json:"uidMappings,omitempty"`
	GIDMappings []IDMap `json:"gidMappings,omitempty"`

	// Mounts are made in order, relative to the rootfs, after the rootfs
	// itself is bind-mounted.
	Mounts []Mount `json:"mounts,omitempty"`
	// Devices are created in /dev in addition to DefaultDevices.
	Devices []Device `json:"devices,omitempty"`
	// MaskedPaths are hidden: /dev/null bound over files, a read-only tmpfs
	// over directories.
	MaskedPaths []string `json:"maskedPaths,omitempty"`
	// ReadonlyPaths are bind-remounted read-only.
	ReadonlyPaths []string `json:"readonlyPaths,omitempty"`
	// Sysctl keys (dotted or slashed) and values written under /proc/sys.
	Sysctl map[string]string `json:"sysctl,omitempty"`

	Hooks Hooks `json:"hooks,omitempty"`

	// Process is the container's init process.
	Process Process `json:"process"`

	// Seccomp and Landlock confine every process of the container: init,
	// and each one exec adds (with the same policies, whatever its
	// Process). nil means none. See filters_linux.go for when they apply.
	Seccomp  *Seccomp  `json:"seccomp,omitempty"`
	Landlock *Landlock `json:"landlock,omitempty"`

	// Network, in allowlist mode, is the domain allowlist of a container
	// with a network namespace of loopback only (network_linux.go); nil or
	// another mode asks for nothing (the namespaces decide).
	Network *Network `json:"network,omitempty"`

	// Personality, when set, is the execution domain of every process of
	// the container (linux.personality); MemoryPolicy, its NUMA memory
	// policy (linux.memoryPolicy). See personality_linux.go.
	Personality  *Personality  `json:"personality,omitempty"`
	MemoryPolicy *MemoryPolicy `json:"memoryPolicy,omitempty"`

	// NetDevices are host network devices that create moves into the
	// container's network namespace (linux.netDevices; netdev_linux.go).
	NetDevices []NetDevice `json:"netDevices,omitempty"`

	// Annotations are opaque to the runtime and echoed in the state JSON.
	Annotations map[string]string `json:"annotations,omitempty"`

	// InitHugePages lets the container's init and exec'd processes, while
	// they run the runtime's Go code (until they execute the program), ask
	// for transparent huge pages for their Go heap, as the runtime's own
	// commands do under NANOBOX_THP=1 (see libbox/nsenter/thp.c; only in a
	// binary linked with -Wl,--wrap=mmap, as `make build` links
	// nanobox-runc). Neither face sets it. It saves page faults where a
	// fault is dear (a VM whose faults cost 10 us) and costs the zeroing
	// of a 2 MiB page where it is not; it charges the container's memory
	// cgroup up to 4 MiB more until the program starts (as much as the
	// host had free huge pages for), which the cgroup's peak memory keeps;
	// and a created container's init holds those pages until start, so
	// that many containers created at once take fresh huge pages one after
	// another (20 concurrent creates: 164 against 145 ms, median of 8, on
	// the 2-CPU VM this project is developed on).
	InitHugePages bool `json:"initHugePages,omitempty"`

	// CgroupsPath is the cgroup the container is placed in (OCI
	// linux.cgroupsPath): absolute (below the cgroup root), relative (to
	// the caller's own cgroup; the systemd form "slice:prefix:name" is one
	// such name, as in runc without --systemd-cgroup), or "" for one named
	// after the container beside the caller's cgroup (see cgroups_linux.go).
	CgroupsPath string `json:"cgroupsPath,omitempty"`
	// Resources are the cgroup limits and device rules; nil asks for no
	// limit. DefaultDeviceRules are always allowed after the rules given
	// here. Limits that cannot be enforced fail the create.
	Resources *cgroups.Resources `json:"resources,omitempty"`
	// V1Hierarchies, on a cgroup v1 (or hybrid) host, are the only
	// hierarchies the container is placed in, by the names of
	// /proc/self/cgroup ("memory", "pids", "name=systemd"); nil places it
	// in every one that is mounted, as runc does. A sandbox asks for the
	// ones its limits, report and kill use (sandboxV1Hierarchies). The
	// paths made are in the state; this list is not.
	V1Hierarchies []string `json:"-"`
}

// NamespaceType names a Linux namespace the way the OCI spec does.
type NamespaceType string

const (
	NEWNS     NamespaceType = "mount"
	NEWUTS    NamespaceType = "uts"
	NEWIPC    NamespaceType = "ipc"
	NEWUSER   NamespaceType = "user"
	NEWPID    NamespaceType = "pid"
	NEWNET    NamespaceType = "network"
	NEWCGROUP NamespaceType = "cgroup"
	NEWTIME   NamespaceType = "time"
)

// Namespace is one entry of Config.Namespaces.
type Namespace struct {
	Type NamespaceType `json:"type"`
	// Path joins an existing namespace (e.g. /proc/123/ns/net) instead of
	// making a new one.
	Path string `json:"path,omitempty"`
}

// TimeOffset is how far a clock of a new time namespace is ahead of the
// host's.
type TimeOffset struct {
	Secs     int64  `json:"secs"`
	Nanosecs uint32 `json:"nanosecs,omitempty"`
}

// IDMap is one line of /proc/PID/uid_map or gid_map.
type IDMap struct {
	ContainerID uint32 `json:"containerID"`
	HostID      uint32 `json:"hostID"`
	Size        uint32 `json:"size"`
}

// Mount is a mount to make inside the container.
type Mount struct {
	// Source is a host path for bind mounts, a device or a name otherwise.
	Source string `json:"source"`
	// Destination is an absolute path inside the rootfs; it is resolved
	// inside the rootfs, so symlinks cannot lead outside it.
	Destination string `json:"destination"`
	// Type is the filesystem type ("bind" for bind mounts, "proc", "tmpfs"...).
	Type string `json:"type"`
	// Flags are the MS_* flags for mount(2), MS_BIND and MS_REC included.
	Flags int `json:"flags,omitempty"`
	// ClearedFlags are MS_* flags explicitly negated in the options (e.g.
	// "rw", "suid", "dev"), so a remount of a bind mount keeps them off.
	ClearedFlags int `json:"clearedFlags,omitempty"`
	// PropagationFlags are applied one by one after the mount (MS_SHARED,
	// MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE, with or without MS_REC).
	PropagationFlags []int `json:"propagationFlags,omitempty"`
	// Data is the filesystem-specific option string (e.g. "mode=755,size=65536k").
	Data string `json:"data,omitempty"`
	// CopyUp fills a new tmpfs with what the destination directory held
	// (the "tmpcopyup" option podman gives --read-only's tmpfs mounts).
	CopyUp bool `json:"copyUp,omitempty"`
	// RecursiveReadonly makes the whole mounted tree read-only, the
	// mounts beneath it included (mount_setattr AT_RECURSIVE; OCI's "rro"
	// option). A recursive bind (MS_REC) of a host directory with mounts
	// beneath it needs it to be read-only all through; a non-recursive
	// bind of it fails in a user namespace, where those mounts are locked.
	RecursiveReadonly bool `json:"recursiveReadonly,omitempty"`
	// RecAttrSet and RecAttrClr are MOUNT_ATTR_* bits set and cleared on
	// the mount and every mount below it once it is made
	// (mount_setattr(2) with AT_RECURSIVE: the "rnosuid", "rnoexec"...
	// options; RecursiveReadonly is MOUNT_ATTR_RDONLY in RecAttrSet). An atime mode in RecAttrSet needs MOUNT_ATTR__ATIME in
	// RecAttrClr, as the kernel requires.
	RecAttrSet uint64 `json:"recAttrSet,omitempty"`
	RecAttrClr uint64 `json:"recAttrClr,omitempty"`
	// IDMap, when set, makes a bind mount idmapped (mount_setattr(2)
	// MOUNT_ATTR_IDMAP; the OCI "idmap"/"ridmap" options and the mount's
	// uidMappings/gidMappings). It needs root on the host.
	IDMap *MountIDMap `json:"idmap,omitempty"`
}

// MountIDMap is the id mapping of an idmapped mount: a file the source
// filesystem says is owned by ContainerID+n appears owned by HostID+n
// (the user namespace convention: a container with the same mappings sees
// it as ContainerID+n again).
type MountIDMap struct {
	// UIDMappings and GIDMappings are both empty (the mappings of the
	// container's user namespace) or both set.
	UIDMappings []IDMap `json:"uidMappings,omitempty"`
	GIDMappings []IDMap `json:"gidMappings,omitempty"`
	// Recursive maps every mount of an rbind, not only its top ("ridmap").
	Recursive bool `json:"recursive,omitempty"`
}

// IsBind reports whether m is a bind mount.
func (m *Mount) IsBind() bool { return m.Flags&unix.MS_BIND != 0 }

// Device is a device node to create in the container's /dev.
type Device struct {
	// Type is 'c' (or 'u'), 'b' or 'p'.
	Type rune `json:"type"`
	// Path is the absolute path inside the container (e.g. /dev/fuse).
	Path     string      `json:"path"`
	Major    int64       `json:"major"`
	Minor    int64       `json:"minor"`
	FileMode os.FileMode `json:"fileMode"`
	UID      uint32      `json:"uid"`
	GID      uint32      `json:"gid"`
}

// Hook is one OCI hook: a host executable run with the state JSON on stdin.
type Hook struct {
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	Env  []string `json:"env,omitempty"`
	// Timeout, when non-zero, kills the hook after that long.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Hooks are the OCI lifecycle hooks, by the point at which they run.
type Hooks struct {
	// Prestart is the deprecated alias of CreateRuntime; it runs first.
	Prestart        []Hook `json:"prestart,omitempty"`
	CreateRuntime   []Hook `json:"createRuntime,omitempty"`
	CreateContainer []Hook `json:"createContainer,omitempty"`
	StartContainer  []Hook `json:"startContainer,omitempty"`
	Poststart       []Hook `json:"poststart,omitempty"`
	Poststop        []Hook `json:"poststop,omitempty"`
}

// Process is a process to run in the container: init, or one added by exec.
type Process struct {
	Args []string `json:"args"`
	Env  []string `json:"env,omitempty"`
	// Cwd is an absolute path inside the container.
	Cwd  string `json:"cwd"`
	User User   `json:"user"`

	// Terminal allocates a pty whose slave becomes the process's controlling
	// terminal and stdio; the master is sent over the console socket.
	Terminal      bool `json:"terminal,omitempty"`
	ConsoleWidth  uint `json:"consoleWidth,omitempty"`
	ConsoleHeight uint `json:"consoleHeight,omitempty"`

	// Capabilities nil, like an empty value, means no capabilities at all
	// (runc's behaviour for a config without process.capabilities); for
	// a process exec'd from a process file, the CLI gives the container's.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
	Rlimits      []Rlimit      `json:"rlimits,omitempty"`

	NoNewPrivileges bool `json:"noNewPrivileges,omitempty"`
	OOMScoreAdj     *int `json:"oomScoreAdj,omitempty"`

	// AppArmorProfile, when set, is the AppArmor profile the program is
	// confined by from its execve on (aa_change_onexec, as runc does); the
	// profile must be loaded on a host where AppArmor is enabled.
	AppArmorProfile string `json:"appArmorProfile,omitempty"`

	// Scheduler and IOPriority, when set, are given to the process before
	// its credentials change (raising either needs privilege); nil leaves
	// what the runtime had.
	Scheduler  *Scheduler  `json:"scheduler,omitempty"`
	IOPriority *IOPriority `json:"ioPriority,omitempty"`
	// ExecCPUAffinity applies to processes added by exec only, never to
	// init (OCI process.execCPUAffinity). It is kept in the container's
	// Process because exec starts from that process's settings.
	ExecCPUAffinity *CPUAffinity `json:"execCPUAffinity,omitempty"`
}

// Scheduler is a sched_setattr(2) request for the calling thread, which
// then executes the program (the policy and its parameters survive execve).
type Scheduler struct {
	// Policy is a SCHED_* policy number (unix.SCHED_NORMAL, which OCI calls
	// SCHED_OTHER, unix.SCHED_FIFO...).
	Policy uint32 `json:"policy"`
	// Nice is the nice value for SCHED_OTHER and SCHED_BATCH (-20 to 19).
	Nice int32 `json:"nice,omitempty"`
	// Priority is the static priority of SCHED_FIFO and SCHED_RR (1-99).
	Priority uint32 `json:"priority,omitempty"`
	// Flags are SCHED_FLAG_* bits (unix.SCHED_FLAG_RESET_ON_FORK...).
	Flags uint64 `json:"flags,omitempty"`
	// Runtime, Deadline and Period are SCHED_DEADLINE's, in nanoseconds.
	Runtime  uint64 `json:"runtime,omitempty"`
	Deadline uint64 `json:"deadline,omitempty"`
	Period   uint64 `json:"period,omitempty"`
}

// IOPriority is an ioprio_set(2) class and level.
type IOPriority struct {
	// Class is IOPRIO_CLASS_RT (1), IOPRIO_CLASS_BE (2) or
	// IOPRIO_CLASS_IDLE (3).
	Class int `json:"class"`
	// Priority is the level within the class, 0 (highest) to 7.
	Priority int `json:"priority"`
}

// The ioprio_set(2) classes (linux/ioprio.h; x/sys/unix has no names).
const (
	IOPrioClassRT   = 1
	IOPrioClassBE   = 2
	IOPrioClassIdle = 3
)

// CPUAffinity are the CPUs a process added by exec runs on (CPU numbers).
type CPUAffinity struct {
	// Initial holds while the process joins the container (the runtime's
	// side of exec, before the process enters the container's cgroup);
	// empty keeps the runtime's own affinity.
	Initial []int `json:"initial,omitempty"`
	// Final is set after the process is in the container's cgroup, right
	// before the program is executed. Empty leaves the affinity as the
	// move into the cgroup left it (the runtime-spec: the runtime "SHOULD
	// NOT change" it; the kernel decides, e.g. a cgroup v1 cpuset resets
	// it to its CPUs), as runc does.
	Final []int `json:"final,omitempty"`
}

// User is the identity a process runs as, inside the container's user
// namespace.
type User struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// AdditionalGids is the whole supplementary group list (setgroups(2);
	// none clears the runtime's own). The rootfs's /etc/group adds nothing,
	// as in runc: a config.json names the user as uid:gid, and runc's
	// GetExecUser takes supplementary groups from /etc/group only for a
	// user given without a group. Engines that want the image's groups
	// (containerd, podman) read /etc/group themselves and list them here.
	AdditionalGids []uint32 `json:"additionalGids,omitempty"`
	Umask          *uint32  `json:"umask,omitempty"`
}

// Capabilities are the five capability sets, by name ("CAP_CHOWN").
type Capabilities struct {
	Bounding    []string `json:"bounding,omitempty"`
	Effective   []string `json:"effective,omitempty"`
	Inheritable []string `json:"inheritable,omitempty"`
	Permitted   []string `json:"permitted,omitempty"`
	Ambient     []string `json:"ambient,omitempty"`
}

// Rlimit is one setrlimit(2) call; Type is the RLIMIT_* number.
type Rlimit struct {
	Type int    `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

// NamespaceOf returns the entry of type t and whether the container has one.
func (c *Config) NamespaceOf(t NamespaceType) (Namespace, bool) {
	for _, ns := range c.Namespaces {
		if ns.Type == t {
			return ns, true
		}
	}
	return Namespace{}, false
}
