package specconv

import (
	"fmt"
	"strings"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// ipcSysctls are the kernel.* sysctls that belong to the IPC namespace
// (ipc_namespace.c); fs.mqueue.* are matched by prefix.
var ipcSysctls = map[string]bool{
	"kernel.msgmax":          true,
	"kernel.msgmnb":          true,
	"kernel.msgmni":          true,
	"kernel.sem":             true,
	"kernel.shmall":          true,
	"kernel.shmmax":          true,
	"kernel.shmmni":          true,
	"kernel.shm_rmid_forced": true,
}

// sysctlDotted returns key in the dotted form of sysctl(8). A key whose first
// separator is '/' is in the slashed form, where a '.' is part of a name
// (net/ipv4/conf/eth0.100/rp_filter); the two separators swap.
func sysctlDotted(key string) string {
	i := strings.IndexAny(key, "./")
	if i < 0 || key[i] == '.' {
		return key
	}
	return swapSeparators(key)
}

func swapSeparators(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, s)
}

// checkSysctl allows only sysctls that are namespaced, in a namespace the
// container does not share with the runtime: /proc/sys is not fully
// namespaced, and anything else would change the host.
func checkSysctl(c *libbox.Config, key string) error {
	dotted := sysctlDotted(key)
	// The key becomes a path under /proc/sys: "net.ipv4/../../kernel.x"
	// must not climb out to a host-wide entry.
	for _, part := range strings.Split(swapSeparators(dotted), "/") {
		if part == "" || part == "." || part == ".." || strings.IndexByte(part, 0) >= 0 {
			return fmt.Errorf("sysctl %q is not a valid name", key)
		}
	}
	switch {
	case ipcSysctls[dotted] || strings.HasPrefix(dotted, "fs.mqueue."):
		return ownNamespace(c, key, libbox.NEWIPC, "ipc")
	case strings.HasPrefix(dotted, "net."):
		return ownNamespace(c, key, libbox.NEWNET, "net")
	case dotted == "kernel.domainname":
		return ownNamespace(c, key, libbox.NEWUTS, "uts")
	case dotted == "kernel.hostname":
		if c.Hostname != "" {
			return fmt.Errorf("sysctl %q conflicts with the hostname field: set only one", key)
		}
		return ownNamespace(c, key, libbox.NEWUTS, "uts")
	}
	return fmt.Errorf("sysctl %q is not namespaced: setting it would change the host", key)
}

// ownNamespace checks that the container has a namespace of type t that is
// not the runtime's own (kind is its name under /proc/self/ns).
func ownNamespace(c *libbox.Config, key string, t libbox.NamespaceType, kind string) error {
	ns, ok := c.NamespaceOf(t)
	if !ok {
		return fmt.Errorf("sysctl %q needs a %s namespace: add {\"type\": %q} to linux.namespaces", key, t, t)
	}
	if ns.Path == "" {
		return nil
	}
	same, err := host.isRuntimeNamespace(kind, ns.Path)
	if err != nil {
		return fmt.Errorf("sysctl %q: check %s namespace: %w", key, t, err)
	}
	if same {
		return fmt.Errorf("sysctl %q is not allowed: %s is the runtime's own %s namespace", key, ns.Path, t)
	}
	return nil
}
