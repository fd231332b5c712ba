package libbox

// Probe: what this host can enforce for the calling user, with the fix for
// each thing that is missing. The commonest complaint about sandboxes on
// real hosts is one that fails with an unclear error, or silently does
// less, where user namespaces are restricted (Ubuntu 24.04's AppArmor,
// Debian's old sysctl, unprivileged containers): say exactly what and why.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ProbeItem is one thing the host can or cannot do.
type ProbeItem struct {
	// OK: available to this caller.
	OK bool `json:"ok"`
	// Detail says what was found ("cgroup v2, delegated: memory pids cpu").
	Detail string `json:"detail"`
	// Fix says how to make it available, when it is not.
	Fix string `json:"fix,omitempty"`
}

// ProbeResult is what Probe found.
type ProbeResult struct {
	Rootless bool `json:"rootless"`
	// UserNamespaces: the sandbox's user namespace can be made (every
	// sandbox has one, root's too).
	UserNamespaces ProbeItem `json:"userNamespaces"`
	// Cgroup: a cgroup for the sandbox (memory, pids and CPU limits, exact
	// measurements): root on v1 or v2, or a delegated cgroup v2 subtree.
	Cgroup ProbeItem `json:"cgroup"`
	// Seccomp: system call filters.
	Seccomp ProbeItem `json:"seccomp"`
	// Landlock: the kernel's Landlock ABI.
	Landlock ProbeItem `json:"landlock"`
	// Pidfd: pidfd_open, which the runtime uses so that no signal reaches
	// a recycled pid.
	Pidfd ProbeItem `json:"pidfd"`
	// Limits says how each limit would be enforced for this caller:
	// "enforced (mechanism)" or "needs allowDegraded: ...".
	Limits map[LimitName]string `json:"limits"`
}

// Probe checks the host for the calling user. It starts one short process
// (to try a user namespace), and changes nothing.
func Probe() ProbeResult {
	rootless := hostRootless()
	p := ProbeResult{Rootless: rootless}
	p.UserNamespaces = probeUserNamespaces()

	cg := probeCgroup(rootless)
	switch {
	case cg.usable:
		var ctrls []string
		for _, c := range []string{"memory", "pids", "cpu", "cpuacct", "cpuset", "io"} {
			if cg.controllers[c] {
				ctrls = append(ctrls, c)
			}
		}
		how := "as root"
		if rootless {
			how = "delegated to uid " + strconv.Itoa(os.Geteuid())
		}
		layout := "cgroup v2"
		if cg.version == 1 {
			layout = "cgroup v1 (hybrid or legacy layout)"
		}
		p.Cgroup = ProbeItem{OK: true, Detail: fmt.Sprintf("%s, %s: %s", layout, how, strings.Join(ctrls, " "))}
		if !cg.controllers["memory"] || !cg.controllers["pids"] {
			p.Cgroup.Fix = "enable the memory and pids controllers for the sandbox's parent cgroup"
		}
	default:
		p.Cgroup = ProbeItem{Detail: cg.why, Fix: "memory, pids and CPU limits need root or a delegated cgroup v2 subtree (systemd-run --user --scope -p Delegate=yes ...); without one, allow them to degrade (--allow-degraded memory,pids)"}
	}

	sc := ProbeSeccomp()
	if len(sc.Actions) > 0 {
		p.Seccomp = ProbeItem{OK: true, Detail: fmt.Sprintf("libseccomp %s, actions %v", sc.LibseccompVersion, sc.Actions)}
	} else {
		p.Seccomp = ProbeItem{Detail: "the kernel or libseccomp refuses seccomp filters", Fix: "a kernel with CONFIG_SECCOMP_FILTER; inside a container, its runtime may forbid nested filters"}
	}

	if abi := LandlockABI(); abi > 0 {
		p.Landlock = ProbeItem{OK: true, Detail: fmt.Sprintf("ABI %d", abi)}
	} else {
		p.Landlock = ProbeItem{Detail: "not available", Fix: "a kernel with CONFIG_SECURITY_LANDLOCK and landlock in the lsm= boot parameter (only needed for landlock rules)"}
	}

	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err == nil {
		unix.Close(fd)
		p.Pidfd = ProbeItem{OK: true, Detail: "pidfd_open works"}
	} else {
		p.Pidfd = ProbeItem{Detail: fmt.Sprintf("pidfd_open: %v", err), Fix: "Linux 5.3 or later"}
	}

	p.Limits = map[LimitName]string{}
	for _, n := range LimitNames {
		o := Options{}
		setOneLimit(&o.Limits, n)
		plan, err := planLimits(&o, rootless, cg, false)
		if err != nil {
			o.AllowDegraded = []LimitName{n}
			if plan, err = planLimits(&o, rootless, cg, false); err != nil {
				p.Limits[n] = "unavailable: " + err.Error()
				continue
			}
			l := plan.reports[n]
			if l.Status == LimitUnavailable {
				p.Limits[n] = "not enforceable here; with allowDegraded it runs unlimited (" + l.Reason + ")"
			} else {
				p.Limits[n] = "needs allowDegraded, then " + string(l.Status) + " by " + l.Mechanism
			}
			continue
		}
		p.Limits[n] = "enforced by " + plan.reports[n].Mechanism
	}
	return p
}

// setOneLimit asks for a typical value of the limit n.
func setOneLimit(l *Limits, n LimitName) {
	switch n {
	case LimitMemory:
		l.Memory = 256 * MB
	case LimitCPUs:
		l.CPUs = 1
	case LimitPids:
		l.Pids = 64
	case LimitWallTime:
		l.WallTime = 1e9
	case LimitCPUTime:
		l.CPUTime = 1e9
	case LimitOpenFiles:
		l.OpenFiles = 64
	case LimitFileSize:
		l.FileSize = MB
	case LimitOutput:
		l.Output = MB
	}
}

// probeUserNamespaces tries to make a user namespace (with the mount, pid
// and network namespaces a sandbox has) in a child process running
// /bin/true, and explains a failure.
func probeUserNamespaces() ProbeItem {
	truePath := "/bin/true"
	if _, err := os.Stat(truePath); err != nil {
		truePath = "/usr/bin/true"
	}
	cmd := exec.Command(truePath)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, io.Discard, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
	err := cmd.Run()
	if err == nil {
		return ProbeItem{OK: true, Detail: "a user namespace (with mount, pid, network, ipc, uts namespaces) can be made"}
	}
	item := ProbeItem{Detail: fmt.Sprintf("cannot make a user namespace: %v", err)}
	var why, fix []string
	if v, ok := readSysctl("kernel/unprivileged_userns_clone"); ok && v == "0" {
		why = append(why, "kernel.unprivileged_userns_clone is 0")
		fix = append(fix, "sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if v, ok := readSysctl("user/max_user_namespaces"); ok && v == "0" {
		why = append(why, "user.max_user_namespaces is 0")
		fix = append(fix, "sysctl -w user.max_user_namespaces=15000")
	}
	if v, ok := readSysctl("kernel/apparmor_restrict_unprivileged_userns"); ok && v == "1" {
		why = append(why, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, the Ubuntu 24.04 default)")
		fix = append(fix, "give nanobox-runc an AppArmor profile with the userns permission (/etc/apparmor.d/nanobox-runc: abi <abi/4.0>, profile nanobox-runc /path/to/nanobox-runc flags=(unconfined) { userns, }), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
	}
	if c := containerHint(); c != "" {
		why = append(why, "this process runs inside a container ("+c+"), whose runtime may forbid user namespaces (seccomp, or a user namespace without room for nesting)")
		fix = append(fix, "run the container with user namespaces allowed (e.g. docker --security-opt seccomp=unconfined, or podman's --userns), or run on the host")
	}
	if errors.Is(err, unix.ENOSPC) {
		why = append(why, "the user namespace count limit is reached (ENOSPC)")
		fix = append(fix, "raise user.max_user_namespaces")
	}
	if len(why) > 0 {
		item.Detail += ": " + strings.Join(why, "; ")
	}
	if len(fix) == 0 {
		fix = append(fix, "check the kernel's CONFIG_USER_NS and the LSM in force; without user namespaces a sandbox can only run namespace-less (degraded)")
	}
	item.Fix = strings.Join(fix, "; or ")
	return item
}

func readSysctl(name string) (string, bool) {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// containerHint names the sign that this process runs in a container, ""
// when there is none.
func containerHint() string {
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil {
			return f + " exists"
		}
	}
	if b, err := os.ReadFile("/proc/1/environ"); err == nil && strings.Contains(string(b), "container=") {
		return "pid 1 has container= in its environment"
	}
	if InUserNS() {
		return "it is in a user namespace already"
	}
	return ""
}

// String is the probe as text, one line per item, each with its fix.
func (p ProbeResult) String() string {
	var b strings.Builder
	who := "root"
	if p.Rootless {
		who = "uid " + strconv.Itoa(os.Geteuid()) + " (rootless)"
		if os.Geteuid() == 0 {
			who = "uid 0 of a user namespace (rootless: not root on the host)"
		}
	}
	fmt.Fprintf(&b, "nanobox-runc sandbox: what this host can enforce for %s\n", who)
	line := func(name string, it ProbeItem) {
		mark := "ok  "
		if !it.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %-16s %s\n", mark, name+":", it.Detail)
		if it.Fix != "" {
			fmt.Fprintf(&b, "     %-16s %s\n", "fix:", it.Fix)
		}
	}
	line("user namespaces", p.UserNamespaces)
	line("cgroup", p.Cgroup)
	line("seccomp", p.Seccomp)
	line("landlock", p.Landlock)
	line("pidfd", p.Pidfd)
	for _, n := range LimitNames {
		fmt.Fprintf(&b, "limit %-11s %s\n", string(n)+":", p.Limits[n])
	}
	return b.String()
}
