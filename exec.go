package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

func execCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a new process inside a running container",
		ArgsUsage: "<container-id> [command [args...]]",
		Description: `The process joins every namespace of the container. It is described either
	by --process (a JSON file holding an OCI "process" object, as podman and
	containerd send) or by the command line, starting from the container's own
	process settings (env, cwd, user, capabilities).

	Without --detach, nanobox-runc waits and exits with the process's status.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "process", Aliases: []string{"p"}, Usage: "path to a process.json (OCI process object); - reads stdin"},
			&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "allocate a pseudo-terminal"},
			&cli.StringFlag{Name: "console-socket", Usage: "AF_UNIX socket path to send the pty master to"},
			&cli.StringFlag{Name: "pidfd-socket", Usage: "AF_UNIX socket path to send a pidfd of the process to"},
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "do not wait for the process"},
			&cli.StringFlag{Name: "pid-file", Usage: "write the process's pid to this file"},
			&cli.StringFlag{Name: "cwd", Usage: "working directory in the container"},
			&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "set an environment variable (KEY=VALUE)"},
			&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "UID[:GID] to run as"},
			&cli.Int64SliceFlag{Name: "additional-gids", Aliases: []string{"g"}, Usage: "supplementary group id"},
			&cli.StringSliceFlag{Name: "cap", Aliases: []string{"c"}, Usage: "add a capability (CAP_NAME)"},
			&cli.BoolFlag{Name: "no-new-privs", Usage: "set no_new_privs for the process"},
			&cli.StringFlag{Name: "apparmor", Usage: "set the apparmor profile for the process"},
			&cli.StringFlag{Name: "process-label", Usage: "set the SELinux label for the process (refused where SELinux is enabled, ignored with a warning where it is not)"},
			&cli.IntFlag{Name: "preserve-fds", Usage: "pass this many file descriptors beyond stdio to the process"},
			&cli.BoolFlag{Name: "ignore-paused", Usage: "allow exec in a paused container"},
			&cli.StringSliceFlag{Name: "cgroup", Usage: "run the process in an existing sub-cgroup of the container's: [CONTROLLER[,CONTROLLER...]:]PATH (may be repeated)"},
		},
		Action: func(c *cli.Context) error {
			// A usage error is the CLI's, exit 1, as runc's checkArgs.
			if err := checkArgs(c, 1, -1); err != nil {
				return err
			}
			code, err := execProcess(c)
			if err != nil {
				// runc's contract: a failure of exec itself (no such
				// container, bad flag, the program cannot start) exits 255,
				// so that callers can tell it from the process's own status.
				fatalWithCode(fmt.Errorf("exec failed: %w", err), 255)
			}
			os.Exit(code)
			return nil
		},
	}
}

func execProcess(c *cli.Context) (int, error) {
	ctr, err := loadContainer(c)
	if err != nil {
		return 0, err
	}
	p, err := execSpec(c, ctr.Config())
	if err != nil {
		return 0, err
	}
	detach := c.Bool("detach")
	extra, err := preservedFiles(3, c.Int("preserve-fds"))
	if err != nil {
		return 0, err
	}
	sub, err := subCgroups(c.StringSlice("cgroup"))
	if err != nil {
		return 0, err
	}
	// A session of its own, as for init (see createContainer).
	opts := libbox.ExecOpts{ExtraFiles: extra, IgnorePaused: c.Bool("ignore-paused"), Log: logrus.StandardLogger(), SubCgroups: sub, NewSession: true}
	var ttyPeer *os.File
	if p.Terminal {
		if path := c.String("console-socket"); path != "" {
			s, err := dialConsoleSocket(path)
			if err != nil {
				return 0, err
			}
			defer s.Close()
			opts.ConsoleSocket = s
		} else if detach {
			return 0, errors.New("exec --tty --detach needs --console-socket: nobody would hold the terminal")
		} else {
			peer, child, err := consolePair()
			if err != nil {
				return 0, err
			}
			defer peer.Close()
			defer child.Close()
			ttyPeer, opts.ConsoleSocket = peer, child
		}
	}
	pidfdSock, err := dialPidfdSocket(c.String("pidfd-socket"))
	if err != nil {
		return 0, err
	}
	if pidfdSock != nil {
		defer pidfdSock.Close()
	}
	var pipes *stdioPipes
	if !detach && !p.Terminal {
		// As runc's: pipes this process relays, never its own stdio.
		if pipes, err = newStdioPipes(ctr.Config()); err != nil {
			return 0, err
		}
		defer pipes.closeAll()
		opts.Stdin, opts.Stdout, opts.Stderr = pipes.child[0], pipes.child[1], pipes.child[2]
	}
	var sigs chan os.Signal
	if !detach {
		sigs = catchSignals(forwardedSignals)
	}
	pid, err := ctr.Exec(p, opts)
	if err != nil {
		return 0, err
	}
	if pipes != nil {
		pipes.start()
	}
	if pidfdSock != nil {
		// The process is our unreaped child: the pid names it.
		if err := sendExecPidfd(pid, pidfdSock); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return 0, err
		}
	}
	if pf := c.String("pid-file"); pf != "" {
		if err := writePidFile(pf, pid); err != nil {
			return 0, err
		}
	}
	if detach {
		return 0, nil
	}
	var tty *ttyRelay
	if ttyPeer != nil {
		if tty, err = startTTYRelay(ttyPeer); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return 0, err
		}
		defer tty.restore()
	}
	// The process is our own unreaped child: its pid cannot be reused
	// until we wait for it, so plain kill(2) is safe.
	ws, err := forwardAndWait(pid, sigs, tty, func(s unix.Signal) { _ = unix.Kill(pid, s) })
	if err != nil {
		return 0, err
	}
	if pipes != nil {
		// Until every holder of its stdout and stderr is gone, as runc.
		pipes.wait()
	}
	return libbox.ExitCode(ws), nil
}

// execSpec builds the process to exec: from --process, or from the
// container's own process with the command line's changes (as runc does).
func execSpec(c *cli.Context, cfg *libbox.Config) (*libbox.Process, error) {
	if path := c.String("process"); path != "" {
		var b []byte
		var err error
		if path == "-" {
			b, err = io.ReadAll(os.Stdin)
		} else {
			b, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("read process file: %w", err)
		}
		var sp specs.Process
		if err := json.Unmarshal(b, &sp); err != nil {
			return nil, fmt.Errorf("parse process file %s: %w", path, err)
		}
		p, err := specconv.ProcessFromSpec(&sp, specconv.Options{Warnf: logrus.Warnf})
		if err != nil {
			return nil, fmt.Errorf("process file %s: %w", path, err)
		}
		if p.Capabilities == nil && cfg.Process.Capabilities != nil {
			// A process file without capabilities gets the container's,
			// as in runc.
			cp := cloneCapabilities(*cfg.Process.Capabilities)
			p.Capabilities = &cp
		}
		return p, nil
	}
	if c.NArg() < 2 {
		return nil, errors.New("exec: no command given: pass one after the container id, or use --process")
	}
	base := cfg.Process
	p := base
	p.Args = c.Args().Slice()[1:]
	p.Terminal = c.Bool("tty")
	p.ConsoleWidth, p.ConsoleHeight = 0, 0
	// Left unset: libbox gives an exec'd process the container's
	// oom_score_adj, as runc, unless its process object sets its own.
	p.OOMScoreAdj = nil
	p.Env = append([]string(nil), base.Env...)
	for _, kv := range c.StringSlice("env") {
		if !strings.Contains(kv, "=") {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		p.Env = append(p.Env, kv)
	}
	if cwd := c.String("cwd"); cwd != "" {
		if !strings.HasPrefix(cwd, "/") {
			return nil, fmt.Errorf("--cwd %q: must be an absolute path", cwd)
		}
		p.Cwd = cwd
	}
	p.User.AdditionalGids = append([]uint32(nil), base.User.AdditionalGids...)
	if u := c.String("user"); u != "" {
		// As in runc: UID alone keeps the container's gid; groups stay.
		uid, gid, hasGid, err := parseUser(u)
		if err != nil {
			return nil, err
		}
		p.User.UID = uid
		if hasGid {
			p.User.GID = gid
		}
	}
	if gids := c.Int64Slice("additional-gids"); len(gids) > 0 {
		for _, g := range gids {
			if g < 0 || g > 1<<32-1 {
				return nil, fmt.Errorf("--additional-gids %d: out of range", g)
			}
			p.User.AdditionalGids = append(p.User.AdditionalGids, uint32(g))
		}
	}
	if c.Bool("no-new-privs") {
		p.NoNewPrivileges = true
	}
	if c.IsSet("apparmor") {
		profile, err := specconv.AppArmorProfile("--apparmor", c.String("apparmor"))
		if err != nil {
			return nil, err
		}
		p.AppArmorProfile = profile
	}
	if err := specconv.SELinuxLabel("--process-label", c.String("process-label"), logrus.Warnf); err != nil {
		return nil, err
	}
	if caps := c.StringSlice("cap"); len(caps) > 0 {
		var cp libbox.Capabilities
		if base.Capabilities != nil {
			cp = cloneCapabilities(*base.Capabilities)
		}
		var unknown []string
		for _, name := range caps {
			// As runc: the name as given, and one this kernel does not
			// know (or "SYS_ADMIN", "cap_sys_admin") is a warning and
			// grants nothing.
			if _, err := libbox.CapabilityByName(name); err != nil {
				unknown = append(unknown, name)
				continue
			}
			cp.Bounding = append(cp.Bounding, name)
			cp.Effective = append(cp.Effective, name)
			cp.Permitted = append(cp.Permitted, name)
			// Ambient needs the inheritable bit, which --cap does not set.
			if slices.Contains(cp.Inheritable, name) {
				cp.Ambient = append(cp.Ambient, name)
			}
		}
		if len(unknown) > 0 {
			logrus.Warnf("--cap: ignoring unknown capabilities %s (names look like CAP_CHOWN)", strings.Join(unknown, ", "))
		}
		p.Capabilities = &cp
	}
	return &p, nil
}

// subCgroups parses exec --cgroup as runc does: "PATH" for every
// controller, "CONTROLLER[,CONTROLLER...]:PATH" for some (cgroup v1).
func subCgroups(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(args))
	for _, a := range args {
		ctrls, path, ok := strings.Cut(a, ":")
		if !ok {
			if _, dup := out[""]; dup {
				return nil, fmt.Errorf("--cgroup %q: only one --cgroup may go without a controller", a)
			}
			out[""] = a
			continue
		}
		for _, ctrl := range strings.Split(ctrls, ",") {
			if ctrl == "" {
				return nil, fmt.Errorf("--cgroup %q: empty controller name", a)
			}
			if _, dup := out[ctrl]; dup {
				return nil, fmt.Errorf("--cgroup %q: controller %s given twice", a, ctrl)
			}
			out[ctrl] = path
		}
	}
	return out, nil
}

// parseUser parses --user UID[:GID]; names are not looked up (as in runc).
func parseUser(s string) (uid, gid uint32, hasGid bool, err error) {
	us, gs, hasGid := strings.Cut(s, ":")
	u, err := strconv.ParseUint(us, 10, 32)
	if err != nil {
		return 0, 0, false, fmt.Errorf("--user %q: want a numeric UID[:GID]", s)
	}
	if !hasGid {
		return uint32(u), 0, false, nil
	}
	g, err := strconv.ParseUint(gs, 10, 32)
	if err != nil {
		return 0, 0, false, fmt.Errorf("--user %q: want a numeric UID[:GID]", s)
	}
	return uint32(u), uint32(g), true, nil
}

// sendExecPidfd sends a pidfd of the exec'd process over sock.
func sendExecPidfd(pid int, sock *os.File) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd socket: pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	return sendPidfd(sock, "setns", fd)
}

// cloneCapabilities is a deep copy of c: the exec'd process's sets are
// changed without touching the container's.
func cloneCapabilities(c libbox.Capabilities) libbox.Capabilities {
	return libbox.Capabilities{
		Bounding:    slices.Clone(c.Bounding),
		Effective:   slices.Clone(c.Effective),
		Inheritable: slices.Clone(c.Inheritable),
		Permitted:   slices.Clone(c.Permitted),
		Ambient:     slices.Clone(c.Ambient),
	}
}
