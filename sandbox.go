package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

func sandboxCommand() *cli.Command {
	return &cli.Command{
		Name:      "sandbox",
		Usage:     "run one program in a sandbox, with no bundle and no image",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: `The program sees the host's /usr, /bin, /sbin, /lib* and /etc read-only
	(secrets such as /etc/shadow and ssh host keys hidden), a private /tmp,
	/proc and a minimal /dev, no network, only the environment given with
	--env, and no capabilities. Its stdin, stdout and stderr are the caller's;
	nanobox-runc exits with the program's exit status (128+N when signal N
	killed it), 125 when the sandbox could not be set up, 126 when the
	program is not executable, 127 when it is not found.

	--allow-net DOMAIN[:PORT] gives the program a network allowlist: it reaches
	the listed domains, through the runtime's resolver and proxy, and nothing
	else, also when it ignores proxy settings (docs/network.md).

	A limit that this host cannot enforce for the caller is an error naming
	the limit and the fix, unless --allow-degraded lists it; the report
	(--report) says how every limit was enforced. --check says what this host
	can enforce. The options have one JSON form (--options, docs/sandbox-
	contract.md); flags given with --options or --preset are applied on top.

	Presets: --preset agent-executor[=WORKSPACE] (default: the current
	directory, read-write at /workspace), code-judge[=SUBMISSION] (read-only
	at /submission), data-analysis=INPUT,OUTPUT (/input read-only, /output
	read-write).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "preset", Usage: "start from a preset: agent-executor[=DIR], code-judge[=DIR], data-analysis=IN,OUT"},
			&cli.StringFlag{Name: "options", Usage: "start from the options in this JSON `FILE` (- for stdin; the sandbox contract)"},
			&cli.StringFlag{Name: "rootfs", Usage: "use `DIR` as the root (read-only) instead of the host's system directories"},
			&cli.GenericFlag{Name: "mount", Value: &multiFlag{}, Usage: "bind-mount a host path: `SRC:DST[:ro|rw]` (read-write unless :ro; repeatable)"},
			&cli.GenericFlag{Name: "tmpfs", Value: &multiFlag{}, Usage: "a private tmpfs: `DST[:SIZE]` (default size 64M; repeatable)"},
			&cli.StringFlag{Name: "workdir", Usage: "working directory inside the sandbox (default /tmp)"},
			&cli.GenericFlag{Name: "env", Value: &multiFlag{}, Usage: "set `K=V` in the program's environment, or pass the caller's value of K (repeatable; nothing else is passed)"},
			&cli.StringFlag{Name: "user", Usage: "`UID[:GID]` inside the sandbox (default 0:0, with no capabilities)"},
			&cli.StringFlag{Name: "memory", Usage: "memory limit, e.g. `256M` (K, M, G: powers of 1024)"},
			&cli.StringFlag{Name: "cpus", Usage: "CPU limit, in `CPUS` (1.5)"},
			&cli.StringFlag{Name: "pids", Usage: "limit on processes and threads at once: `N`"},
			&cli.StringFlag{Name: "wall-time", Usage: "wall-clock limit from the program's start, e.g. `30s` (a number is seconds)"},
			&cli.StringFlag{Name: "cpu-time", Usage: "CPU time limit, e.g. `10s`"},
			&cli.StringFlag{Name: "open-files", Usage: "limit on open files per process: `N`"},
			&cli.StringFlag{Name: "file-size", Usage: "limit on the size of a file written, e.g. `16M`"},
			&cli.StringFlag{Name: "output-limit", Usage: "limit on stdout and stderr together, e.g. `1M` (past it the sandbox is killed)"},
			&cli.BoolFlag{Name: "no-network", Usage: "no network: loopback only (the default)"},
			&cli.StringFlag{Name: "network", Usage: "`none`, host, or allowlist (implied by --allow-net)"},
			&cli.GenericFlag{Name: "allow-net", Value: &multiFlag{}, Usage: "let the program reach `DOMAIN[:PORT]` (*.example.com for its subdomains; ports 80 and 443 without a port; repeatable, or comma-separated), also when it ignores proxy settings"},
			&cli.GenericFlag{Name: "deny-net", Value: &multiFlag{}, Usage: "never let it reach `DOMAIN[:PORT]`, whatever --allow-net says (every port without a port)"},
			&cli.BoolFlag{Name: "allow-private-targets", Usage: "let allowed names lead to loopback, private, link-local and this host's addresses (refused otherwise)"},
			&cli.GenericFlag{Name: "add-host", Value: &multiFlag{}, Usage: "resolve `NAME:ADDR` to ADDR on the host's side instead of looking it up (allowlist; repeatable)"},
			&cli.StringFlag{Name: "seccomp", Usage: "system call filter: default, strict, none, or an OCI or Docker profile `FILE`"},
			&cli.GenericFlag{Name: "allow-degraded", Value: &multiFlag{}, Usage: "let these limits be enforced by a weaker mechanism, or not at all, where this host cannot: `LIMIT[,LIMIT]` (memory, pids, cpus; namespaces)"},
			&cli.StringFlag{Name: "report", Usage: "write the execution report to `FILE` (- for stderr, after the program's output)"},
			&cli.StringFlag{Name: "report-format", Value: "json", Usage: "report format: json or isolate (isolate's meta file)"},
			&cli.BoolFlag{Name: "check", Usage: "say what this host can enforce for the caller, and the fix for what it cannot"},
			&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Usage: "give the program a terminal of its own (a pty in the sandbox), relayed to this one in raw mode"},
			&cli.StringFlag{Name: "tty-size", Usage: "`ROWSxCOLS`: the size --tty's terminal starts with (default: this process's terminal's, else 24x80)"},
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "start the program and return: the sandbox is a container named --name under --root, for exec, ps, kill, delete and mount"},
			&cli.StringFlag{Name: "name", Usage: "the `ID` of a --detach sandbox"},
			&cli.BoolFlag{Name: "print-options", Usage: "print the options (JSON) the other flags describe, and run nothing"},
			&cli.BoolFlag{Name: "die-with-parent", Usage: "end the run (the whole sandbox killed, the report written) when the process that started nanobox-runc exits, even by SIGKILL"},
			&cli.BoolFlag{Name: "validate", Usage: "check the options against this host as a run would (every field, mount source and limit), and run nothing: exit 0, or 125 with the error (and its --report)"},
		},
		Action: func(c *cli.Context) error {
			os.Exit(runSandbox(c))
			return nil
		},
	}
}

// multiFlag is a repeatable flag whose values are kept as given (the
// urfave slice flags split on commas, which paths and values may hold).
type multiFlag struct{ values []string }

func (m *multiFlag) Set(v string) error { m.values = append(m.values, v); return nil }
func (m *multiFlag) String() string     { return strings.Join(m.values, " ") }

func multi(c *cli.Context, name string) []string {
	if m, ok := c.Generic(name).(*multiFlag); ok {
		return m.values
	}
	return nil
}

// sandboxFail prints a set-up error the way every sandbox error reads and
// returns the exit status for it.
func sandboxFail(code int, err error) int {
	fmt.Fprintln(os.Stderr, "nanobox-runc sandbox:", err)
	return code
}

// runSandbox is the whole sandbox command; it returns the exit status.
func runSandbox(c *cli.Context) int {
	if c.Bool("check") {
		return sandboxCheck(c)
	}
	// The signals that end a run are caught from the start: one that comes
	// during set-up then ends the run (status cancelled, with its report)
	// instead of this process, which would leave the sandbox's state
	// behind for the next run to sweep. One that comes after the run is
	// ignored (see catchSignals).
	sigs := catchSignals([]unix.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT})
	format := c.String("report-format")
	if format != "json" && format != "isolate" {
		return sandboxFail(libbox.ExitSetupError, fmt.Errorf("--report-format %q: use json or isolate", format))
	}
	report, err := openReport(c.String("report"))
	if err != nil {
		return sandboxFail(libbox.ExitSetupError, err)
	}
	if report != nil && report != os.Stderr {
		defer report.Close()
	}
	// From here on a set-up error is also a report (status setup-error,
	// with its errorKind and problems), for the programs that read it.
	fail := func(err error) int {
		if report != nil {
			if werr := writeReport(report, format, libbox.SetupErrorReport(err)); werr != nil {
				fmt.Fprintln(os.Stderr, "nanobox-runc sandbox: write report:", werr)
			}
		}
		return sandboxFail(libbox.ExitSetupError, err)
	}
	opts, err := sandboxOptions(c)
	if err != nil {
		return fail(err)
	}
	if err := checkLiveFlags(c, &opts); err != nil {
		return fail(err)
	}
	if c.Bool("print-options") {
		b, err := json.MarshalIndent(opts, "", "  ")
		if err != nil {
			return fail(err)
		}
		fmt.Println(string(b))
		return 0
	}
	args := c.Args().Slice()
	if len(args) == 0 && !c.Bool("validate") {
		return fail(errors.New("no program given: nanobox-runc sandbox [FLAGS] -- CMD [ARGS...]"))
	}
	sb, err := libbox.New(opts)
	if err != nil {
		return fail(err)
	}
	if c.Bool("validate") {
		return 0
	}
	if c.Bool("detach") {
		if err := runDetached(c, sb, args); err != nil {
			return sandboxFail(libbox.SetupErrorReport(err).ExitCode, errors.New(setupHint(err, args[0])))
		}
		return 0
	}

	// A signal to nanobox-runc ends the run: the whole sandbox is killed
	// and its report written. (The terminal's ^C also reaches the program
	// itself, which shares the caller's process group.)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gotSig := make(chan os.Signal, 1)
	go func() {
		if s, ok := <-sigs; ok {
			gotSig <- s
			cancel()
		}
	}()
	if c.Bool("die-with-parent") {
		if err := watchParent(cancel); err != nil {
			return fail(err)
		}
	}

	var res *libbox.Result
	var runErr error
	if c.Bool("tty") {
		res, runErr = runTTY(ctx, sb, args, c.String("tty-size"))
	} else {
		res, runErr = sb.RunAttached(ctx, os.Stdin, os.Stdout, os.Stderr, args[0], args[1:]...)
	}
	var got os.Signal
	select {
	case got = <-gotSig:
	default:
	}
	if res == nil && ctx.Err() != nil {
		// Ended (a signal, --die-with-parent) before the program started:
		// nothing ran, and the report says so.
		res = &libbox.Result{ExitCode: libbox.ExitSetupError, Report: &libbox.Report{
			Version: libbox.ContractVersion, Status: libbox.StatusCancelled, ExitCode: libbox.ExitSetupError,
			Error: "ended before the program started", Isolation: libbox.Isolation{Rootless: os.Geteuid() != 0},
		}}
	}
	if res == nil {
		return sandboxFail(libbox.ExitSetupError, runErr)
	}
	if report != nil {
		if err := writeReport(report, format, res.Report); err != nil {
			fmt.Fprintln(os.Stderr, "nanobox-runc sandbox: write report:", err)
		}
	}
	code := res.ExitCode
	switch {
	case res.Report.Status == libbox.StatusSetupError:
		fmt.Fprintln(os.Stderr, "nanobox-runc sandbox:", setupHint(runErr, args[0]))
	case res.Report.Status == libbox.StatusCancelled:
		if s, ok := got.(syscall.Signal); ok {
			code = 128 + int(s)
		}
	}
	return code
}

// watchParent calls cancel when the process that started nanobox-runc
// exits (--die-with-parent): a program driving the CLI (a binding) that
// dies, even by SIGKILL, leaves no sandbox running. It watches the parent
// process through a pidfd: PR_SET_PDEATHSIG would fire when the parent's
// thread that started this process exits, which a threaded caller's
// threads do all the time.
func watchParent(cancel context.CancelFunc) error {
	ppid := os.Getppid()
	fd, err := unix.PidfdOpen(ppid, 0)
	if err != nil {
		return fmt.Errorf("--die-with-parent: watch the parent process %d: %w", ppid, err)
	}
	if os.Getppid() != ppid {
		unix.Close(fd)
		return errors.New("--die-with-parent: the parent process exited before nanobox-runc started")
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		cancel()
	}()
	return nil
}

// setupHint is the one-line error of a run that could not start, with the
// fix for the common causes.
func setupHint(err error, prog string) string {
	switch {
	case errors.Is(err, libbox.ErrProgramNotFound):
		return fmt.Sprintf("%v: the sandbox sees the host's /usr, /bin, /sbin and /lib* only, and has no PATH unless given: use an absolute path, --env PATH=..., or --mount the directory %s is in", err, prog)
	case errors.Is(err, libbox.ErrProgramNotExecutable):
		return fmt.Sprintf("%v: it must be a regular file the sandbox's user may execute, on a mount without noexec", err)
	}
	return err.Error()
}

func openReport(path string) (*os.File, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return os.Stderr, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--report: %w", err)
	}
	return f, nil
}

func writeReport(w io.Writer, format string, r *libbox.Report) error {
	if format == "isolate" {
		return r.WriteIsolate(w)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// sandboxCheck prints Probe; exit status 0 when a sandbox can run here.
func sandboxCheck(c *cli.Context) int {
	p := libbox.Probe()
	if c.IsSet("report-format") && c.String("report-format") == "json" {
		b, _ := json.MarshalIndent(p, "", "  ")
		fmt.Println(string(b))
	} else {
		fmt.Print(p.String())
	}
	if !p.UserNamespaces.OK || !p.Seccomp.OK {
		return 1
	}
	return 0
}

// sandboxOptions are the options the flags describe: a preset or an
// options file first, the other flags on top.
func sandboxOptions(c *cli.Context) (libbox.Options, error) {
	var o libbox.Options
	if c.IsSet("preset") && c.IsSet("options") {
		return o, errors.New("--preset and --options both give the starting options: use one (the preset's options are what --preset NAME --print-options prints)")
	}
	if p := c.String("preset"); p != "" {
		name, dirs, _ := strings.Cut(p, "=")
		var list []string
		if dirs != "" {
			list = strings.Split(dirs, ",")
		}
		var err error
		if o, err = libbox.Preset(name, list...); err != nil {
			return o, fmt.Errorf("--preset: %w", err)
		}
	}
	if path := c.String("options"); path != "" {
		var data []byte
		var err error
		if path == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(path)
		}
		if err != nil {
			return o, fmt.Errorf("--options: %w", err)
		}
		if err := json.Unmarshal(data, &o); err != nil {
			var oe *libbox.OptionError
			if !errors.As(err, &oe) {
				// Not JSON at all: still the options' fault.
				err = &libbox.OptionError{Err: err}
			}
			return o, fmt.Errorf("--options %s: %w", path, err)
		}
	}
	if d := c.String("rootfs"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return o, fmt.Errorf("--rootfs: %w", err)
		}
		o.Rootfs = abs
	}
	for _, m := range multi(c, "mount") {
		b, err := parseMountFlag(m)
		if err != nil {
			return o, err
		}
		o.Mounts = append(o.Mounts, b)
	}
	for _, t := range multi(c, "tmpfs") {
		dst, size, hasSize := strings.Cut(t, ":")
		tm := libbox.Tmpfs{Target: dst}
		if hasSize {
			n, err := parseSandboxSize(size)
			if err != nil {
				return o, fmt.Errorf("--tmpfs %s: %w", t, err)
			}
			tm.Size = n
		}
		o.Tmpfs = append(o.Tmpfs, tm)
	}
	if w := c.String("workdir"); w != "" {
		o.WorkDir = w
	}
	for _, kv := range multi(c, "env") {
		if !strings.Contains(kv, "=") {
			v, ok := os.LookupEnv(kv)
			if !ok {
				return o, fmt.Errorf("--env %s: %s is not set in this environment: give %s=VALUE", kv, kv, kv)
			}
			kv += "=" + v
		}
		o.Env = append(o.Env, kv)
	}
	if u := c.String("user"); u != "" {
		uid, gid, _, err := parseUser(u)
		if err != nil {
			return o, err
		}
		o.User.UID, o.User.GID = uid, gid
	}
	l := &o.Limits
	for _, sz := range []struct {
		flag string
		dst  *int64
	}{{"memory", &l.Memory}, {"file-size", &l.FileSize}, {"output-limit", &l.Output}} {
		if v := c.String(sz.flag); v != "" {
			n, err := parseSandboxSize(v)
			if err != nil {
				return o, fmt.Errorf("--%s %s: %w", sz.flag, v, err)
			}
			*sz.dst = n
		}
	}
	for _, cnt := range []struct {
		flag string
		dst  *int64
	}{{"pids", &l.Pids}, {"open-files", &l.OpenFiles}} {
		if v := c.String(cnt.flag); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("--%s %s: want a positive whole number", cnt.flag, v)
			}
			*cnt.dst = n
		}
	}
	for _, d := range []struct {
		flag string
		dst  *time.Duration
	}{{"wall-time", &l.WallTime}, {"cpu-time", &l.CPUTime}} {
		if v := c.String(d.flag); v != "" {
			t, err := parseDuration(v)
			if err != nil {
				return o, fmt.Errorf("--%s %s: %w", d.flag, v, err)
			}
			*d.dst = t
		}
	}
	if v := c.String("cpus"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) {
			return o, fmt.Errorf("--cpus %s: want a positive number of CPUs, such as 1.5", v)
		}
		l.CPUs = f
	}
	if c.Bool("no-network") && c.IsSet("network") && c.String("network") != "none" {
		return o, errors.New("--no-network and --network host contradict each other: give one")
	}
	switch n := c.String("network"); {
	case c.Bool("no-network") || n == "none":
		o.Network = libbox.NoNetwork()
	case n == "host":
		o.Network = libbox.HostNetwork()
	case n == "allowlist":
		o.Network.Mode = libbox.NetworkAllowlist
	case n != "":
		return o, fmt.Errorf("--network %q: use none, host or allowlist", n)
	}
	if err := sandboxNetworkFlags(c, &o.Network); err != nil {
		return o, err
	}
	if s := c.String("seccomp"); s != "" {
		switch s {
		case libbox.SeccompProfileDefault:
			o.Seccomp = libbox.SeccompDefault()
		case libbox.SeccompProfileStrict:
			o.Seccomp = libbox.SeccompStrict()
		case libbox.SeccompProfileNone:
			o.Seccomp = libbox.NoSeccomp()
		default:
			data, err := os.ReadFile(s)
			if err != nil {
				return o, fmt.Errorf("--seccomp: %w (give default, strict, none or a profile file)", err)
			}
			prof, err := specconv.LoadSeccompProfile(data)
			if err != nil {
				return o, fmt.Errorf("--seccomp %s: %w", s, err)
			}
			o.Seccomp = libbox.CustomSeccomp(prof)
		}
	}
	for _, v := range multi(c, "allow-degraded") {
		for _, name := range strings.Split(v, ",") {
			n, err := libbox.ParseLimitName(strings.TrimSpace(name))
			if err != nil {
				return o, fmt.Errorf("--allow-degraded: %w", err)
			}
			o.AllowDegraded = append(o.AllowDegraded, n)
		}
	}
	if r := c.String("root"); r != "" {
		abs, err := filepath.Abs(r)
		if err != nil {
			return o, fmt.Errorf("--root: %w", err)
		}
		o.StateRoot = abs
	}
	return o, nil
}

// parseMountFlag parses --mount SRC:DST[:ro|rw].
func parseMountFlag(s string) (libbox.Bind, error) {
	parts := strings.Split(s, ":")
	b := libbox.Bind{}
	switch {
	case len(parts) == 2:
	case len(parts) == 3 && (parts[2] == "ro" || parts[2] == "rw"):
		b.ReadOnly = parts[2] == "ro"
	default:
		return b, fmt.Errorf("--mount %q: want SRC:DST[:ro|rw]", s)
	}
	b.Source, b.Target = parts[0], parts[1]
	if b.Source == "" || b.Target == "" {
		return b, fmt.Errorf("--mount %q: want SRC:DST[:ro|rw]", s)
	}
	return b, nil
}

// parseSandboxSize reads 1024, 64k, 256M, 1.5G (powers of 1024; a trailing B or
// iB is allowed).
func parseSandboxSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "B"), "i")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = libbox.KB
		case 'm', 'M':
			mult = libbox.MB
		case 'g', 'G':
			mult = libbox.GB
		case 't', 'T':
			mult = libbox.GB << 10
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || f*float64(mult) > math.MaxInt64 {
		return 0, errors.New("want a size such as 1048576, 64K, 256M or 1.5G")
	}
	return int64(f * float64(mult)), nil
}

// parseDuration reads 30s, 1m30s, 500ms, or a number of seconds.
func parseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f <= 0 || f > math.MaxInt64/1e9 {
			return 0, errors.New("want a positive duration")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("want a duration such as 30s, 1m30s, 500ms, or a number of seconds")
	}
	return d, nil
}

// sandboxNetworkFlags applies --allow-net, --deny-net,
// --allow-private-targets and --add-host to n: any of them asks for an
// allowlist, which --network none or host contradicts.
func sandboxNetworkFlags(c *cli.Context, n *libbox.Network) error {
	allow, deny, hosts := splitRules(multi(c, "allow-net")), splitRules(multi(c, "deny-net")), multi(c, "add-host")
	given := len(allow)+len(deny)+len(hosts) > 0 || c.Bool("allow-private-targets")
	if !given {
		if n.Mode == libbox.NetworkAllowlist && len(n.Allow) == 0 && len(n.Deny) == 0 {
			return errors.New("--network allowlist needs --allow-net rules")
		}
		return nil
	}
	if c.IsSet("network") && c.String("network") != "allowlist" || c.Bool("no-network") {
		return errors.New("--allow-net, --deny-net, --allow-private-targets and --add-host ask for a network allowlist: drop --network none/host and --no-network")
	}
	if n.Mode != libbox.NetworkAllowlist {
		*n = libbox.Network{Mode: libbox.NetworkAllowlist}
	}
	n.Allow = append(n.Allow, allow...)
	n.Deny = append(n.Deny, deny...)
	if c.Bool("allow-private-targets") {
		n.AllowPrivateTargets = true
	}
	if err := addHosts(n, hosts); err != nil {
		return err
	}
	n.OnDenied = func(d libbox.Denial) {
		logrus.Warnf("network: denied %s", libbox.DescribeDenial(d))
	}
	return nil
}

// addHosts adds the --add-host NAME:ADDR values to n.Hosts. Names have
// no colon: the first one ends the name (ADDR may be an IPv6 address,
// bracketed or not).
func addHosts(n *libbox.Network, hosts []string) error {
	for _, h := range hosts {
		name, addr, ok := strings.Cut(h, ":")
		if !ok || name == "" || addr == "" {
			return fmt.Errorf("--add-host %q: want NAME:ADDR", h)
		}
		if n.Hosts == nil {
			n.Hosts = map[string]string{}
		}
		n.Hosts[name] = strings.Trim(addr, "[]")
	}
	return nil
}

// splitRules splits comma-separated flag values into rules.
func splitRules(values []string) []string {
	var out []string
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			if r = strings.TrimSpace(r); r != "" {
				out = append(out, r)
			}
		}
	}
	return out
}
