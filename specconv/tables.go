package specconv

import (
	"sort"
	"sync"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// capabilities maps every capability name this runtime knows to its number.
// Whether the running kernel has it is a separate question (see
// hostProbe.capLastCap).
// Built on first use, as the other large tables: package initialisation
// runs in every process of the runtime, the container's init included.
var capabilities = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"CAP_CHOWN":              unix.CAP_CHOWN,
		"CAP_DAC_OVERRIDE":       unix.CAP_DAC_OVERRIDE,
		"CAP_DAC_READ_SEARCH":    unix.CAP_DAC_READ_SEARCH,
		"CAP_FOWNER":             unix.CAP_FOWNER,
		"CAP_FSETID":             unix.CAP_FSETID,
		"CAP_KILL":               unix.CAP_KILL,
		"CAP_SETGID":             unix.CAP_SETGID,
		"CAP_SETUID":             unix.CAP_SETUID,
		"CAP_SETPCAP":            unix.CAP_SETPCAP,
		"CAP_LINUX_IMMUTABLE":    unix.CAP_LINUX_IMMUTABLE,
		"CAP_NET_BIND_SERVICE":   unix.CAP_NET_BIND_SERVICE,
		"CAP_NET_BROADCAST":      unix.CAP_NET_BROADCAST,
		"CAP_NET_ADMIN":          unix.CAP_NET_ADMIN,
		"CAP_NET_RAW":            unix.CAP_NET_RAW,
		"CAP_IPC_LOCK":           unix.CAP_IPC_LOCK,
		"CAP_IPC_OWNER":          unix.CAP_IPC_OWNER,
		"CAP_SYS_MODULE":         unix.CAP_SYS_MODULE,
		"CAP_SYS_RAWIO":          unix.CAP_SYS_RAWIO,
		"CAP_SYS_CHROOT":         unix.CAP_SYS_CHROOT,
		"CAP_SYS_PTRACE":         unix.CAP_SYS_PTRACE,
		"CAP_SYS_PACCT":          unix.CAP_SYS_PACCT,
		"CAP_SYS_ADMIN":          unix.CAP_SYS_ADMIN,
		"CAP_SYS_BOOT":           unix.CAP_SYS_BOOT,
		"CAP_SYS_NICE":           unix.CAP_SYS_NICE,
		"CAP_SYS_RESOURCE":       unix.CAP_SYS_RESOURCE,
		"CAP_SYS_TIME":           unix.CAP_SYS_TIME,
		"CAP_SYS_TTY_CONFIG":     unix.CAP_SYS_TTY_CONFIG,
		"CAP_MKNOD":              unix.CAP_MKNOD,
		"CAP_LEASE":              unix.CAP_LEASE,
		"CAP_AUDIT_WRITE":        unix.CAP_AUDIT_WRITE,
		"CAP_AUDIT_CONTROL":      unix.CAP_AUDIT_CONTROL,
		"CAP_SETFCAP":            unix.CAP_SETFCAP,
		"CAP_MAC_OVERRIDE":       unix.CAP_MAC_OVERRIDE,
		"CAP_MAC_ADMIN":          unix.CAP_MAC_ADMIN,
		"CAP_SYSLOG":             unix.CAP_SYSLOG,
		"CAP_WAKE_ALARM":         unix.CAP_WAKE_ALARM,
		"CAP_BLOCK_SUSPEND":      unix.CAP_BLOCK_SUSPEND,
		"CAP_AUDIT_READ":         unix.CAP_AUDIT_READ,
		"CAP_PERFMON":            unix.CAP_PERFMON,
		"CAP_BPF":                unix.CAP_BPF,
		"CAP_CHECKPOINT_RESTORE": unix.CAP_CHECKPOINT_RESTORE,
	}
})

// rlimits maps the OCI rlimit names to the RLIMIT_* numbers of this
// architecture (they differ on mips and sparc, hence the unix constants).
// Built on first use, as the other large tables: package initialisation
// runs in every process of the runtime, the container's init included.
var rlimits = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"RLIMIT_AS":         unix.RLIMIT_AS,
		"RLIMIT_CORE":       unix.RLIMIT_CORE,
		"RLIMIT_CPU":        unix.RLIMIT_CPU,
		"RLIMIT_DATA":       unix.RLIMIT_DATA,
		"RLIMIT_FSIZE":      unix.RLIMIT_FSIZE,
		"RLIMIT_LOCKS":      unix.RLIMIT_LOCKS,
		"RLIMIT_MEMLOCK":    unix.RLIMIT_MEMLOCK,
		"RLIMIT_MSGQUEUE":   unix.RLIMIT_MSGQUEUE,
		"RLIMIT_NICE":       unix.RLIMIT_NICE,
		"RLIMIT_NOFILE":     unix.RLIMIT_NOFILE,
		"RLIMIT_NPROC":      unix.RLIMIT_NPROC,
		"RLIMIT_RSS":        unix.RLIMIT_RSS,
		"RLIMIT_RTPRIO":     unix.RLIMIT_RTPRIO,
		"RLIMIT_RTTIME":     unix.RLIMIT_RTTIME,
		"RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
		"RLIMIT_STACK":      unix.RLIMIT_STACK,
	}
})

var namespaceTypes = map[specs.LinuxNamespaceType]libbox.NamespaceType{
	specs.PIDNamespace:     libbox.NEWPID,
	specs.NetworkNamespace: libbox.NEWNET,
	specs.MountNamespace:   libbox.NEWNS,
	specs.IPCNamespace:     libbox.NEWIPC,
	specs.UTSNamespace:     libbox.NEWUTS,
	specs.UserNamespace:    libbox.NEWUSER,
	specs.CgroupNamespace:  libbox.NEWCGROUP,
	specs.TimeNamespace:    libbox.NEWTIME,
}

var rootPropagation = map[string]int{
	"shared":      unix.MS_SHARED,
	"rshared":     unix.MS_SHARED | unix.MS_REC,
	"slave":       unix.MS_SLAVE,
	"rslave":      unix.MS_SLAVE | unix.MS_REC,
	"private":     unix.MS_PRIVATE,
	"rprivate":    unix.MS_PRIVATE | unix.MS_REC,
	"unbindable":  unix.MS_UNBINDABLE,
	"runbindable": unix.MS_UNBINDABLE | unix.MS_REC,
}

// KnownNamespaces returns the OCI namespace types FromSpec accepts, sorted.
func KnownNamespaces() []string {
	var res []string
	for t := range namespaceTypes {
		res = append(res, string(t))
	}
	sort.Strings(res)
	return res
}

// KnownCapabilities returns the names of the capabilities the running kernel
// has, in capability-number order. When the kernel's last capability cannot
// be read, every capability this runtime knows is listed.
func KnownCapabilities() []string {
	last, err := host.capLastCap()
	if err != nil {
		last = unix.CAP_LAST_CAP
	}
	var res []string
	for name, n := range capabilities() {
		if n <= last {
			res = append(res, name)
		}
	}
	sort.Slice(res, func(i, j int) bool { return capabilities()[res[i]] < capabilities()[res[j]] })
	return res
}
