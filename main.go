// Command nanobox-runc is an OCI runtime: podman, containerd and people call
// it exactly like runc.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"

	// Importing libbox links in the nsenter constructor, which runs before
	// the Go runtime when this binary is re-executed as a container's init.
	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// version is the runtime's version; the release build may override it with
// -ldflags "-X main.version=...".
var version = "0.1.0"

const usage = `Open Container Initiative runtime, and a sandbox for untrusted code

nanobox-runc runs OCI bundles exactly as runc does: a directory holding a
config.json and a root filesystem. Start with "nanobox-runc spec" to write a
default config.json, then "nanobox-runc run ID" in the bundle.`

func main() {
	// The container side of create (the re-executed binary): it never
	// returns there, and skips the CLI machinery.
	libbox.Main()
	if len(os.Args) > 1 && os.Args[1] == "init" {
		fmt.Fprintln(os.Stderr, "nanobox-runc init: this command is run by the runtime itself")
		os.Exit(1)
	}
	app := newApp()
	if err := app.Run(reorderArgs(app, os.Args)); err != nil {
		fatal(err)
	}
}

func newApp() *cli.App {
	cli.VersionPrinter = func(c *cli.Context) { printVersion(c.App.Writer) }
	app := withNamedFlags(&cli.App{
		Name:    "nanobox-runc",
		Usage:   usage,
		Version: version,
		// As in runc (urfave/cli v1): a command's help and the usage line
		// name the program as it was invoked ("runc run", whatever the
		// binary is called: callers install it as runc), while the
		// top-level NAME stays the runtime's name.
		HelpName:              progName(os.Args),
		CustomAppHelpTemplate: appHelpTemplate(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "state directory (default /run/nanobox-runc; rootless: $XDG_RUNTIME_DIR/nanobox-runc)"},
			&cli.StringFlag{Name: "log", Usage: "append log messages to this file instead of stderr"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: text or json"},
			&cli.BoolFlag{Name: "debug", Usage: "log debug messages"},
			&cli.BoolFlag{Name: "systemd-cgroup", Usage: "manage cgroups through systemd (needs systemd)"},
			&cli.StringFlag{Name: "rootless", Value: "auto", Usage: "rootless mode: auto, true or false"},
			&cli.StringFlag{Name: "criu", Hidden: true, Usage: "ignored, as in runc (no checkpoint/restore)"},
		},
		Before: setupLogging,
		// `help` and `h` are commands at the top level, as in runc; below
		// it they would be taken for a command's argument (see newApp's
		// loop), so that a container called "h" or "help" works.
		// A repeated flag is the only way to give several values, as in
		// runc (urfave/cli v1): `exec --env A=1,2` sets A to "1,2" and
		// `--cgroup cpu,cpuacct:sub` names two controllers.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			createCommand(),
			startCommand(),
			runCommand(),
			stateCommand(),
			listCommand(),
			killCommand(),
			deleteCommand(),
			execCommand(),
			updateCommand(),
			pauseCommand(),
			resumeCommand(),
			psCommand(),
			eventsCommand(),
			specCommand(),
			featuresCommand(),
			checkpointCommand(),
			restoreCommand(),
			sandboxCommand(),
			mountCommand(),
			umountCommand(),
			mountsCommand(),
		},
		// Errors are printed once, by fatal, in runc's format.
		ExitErrHandler: func(*cli.Context, error) {},
	})
	// App.Setup prefixes each command's HelpName with the app's: the
	// commands are package variables, so a second app (tests) must not
	// prefix the first one's result.
	for _, c := range app.Commands {
		c.HelpName = ""
		// urfave/cli v2 adds a `help` (alias `h`) subcommand to every
		// command: `run -b B h` printed run's help instead of running a
		// container with the id "h". runc's commands have none.
		c.HideHelpCommand = true
	}
	return app
}

// appHelpTemplate is urfave/cli's top-level help with NAME showing the
// app's Name rather than its HelpName (the invoked program), as runc's.
func appHelpTemplate() string {
	return strings.Replace(cli.AppHelpTemplate, `{{template "helpNameTemplate" .}}`,
		`{{$v := offset .Name 6}}{{wrap .Name 3}}{{if .Usage}} - {{wrap .Usage $v}}{{end}}`, 1)
}

// progName is the base name the program was invoked by, or the runtime's
// name when there is none.
func progName(args []string) string {
	if len(args) == 0 || args[0] == "" {
		return "nanobox-runc"
	}
	return filepath.Base(args[0])
}

// printVersion prints what runc's --version prints: the version, the
// commit (from the build's VCS stamp, or -ldflags "-X main.gitCommit=..."),
// the runtime-spec version, the Go version and libseccomp's.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "nanobox-runc version %s\n", version)
	if c := commit(); c != "" {
		fmt.Fprintf(w, "commit: %s\n", c)
	}
	fmt.Fprintf(w, "spec: %s\ngo: %s\n", specs.Version, runtime.Version())
	major, minor, micro := libseccomp.GetLibraryVersion()
	fmt.Fprintf(w, "libseccomp: %d.%d.%d\n", major, minor, micro)
}

// gitCommit may be set at link time; else the VCS stamp go build adds.
var gitCommit string

func commit() string {
	if gitCommit != "" {
		return gitCommit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// logFile is where fatal writes errors besides stderr: podman's conmon and
// containerd's shim read the error from the --log file, not from stderr.
var logFile io.Writer

func setupLogging(c *cli.Context) error {
	if c.Bool("debug") {
		logrus.SetLevel(logrus.DebugLevel)
	}
	switch f := c.String("log-format"); f {
	case "text":
		logrus.SetFormatter(&logrus.TextFormatter{DisableColors: true})
	case "json":
		logrus.SetFormatter(&logrus.JSONFormatter{})
	default:
		return fmt.Errorf("unknown --log-format %q: use text or json", f)
	}
	if path := c.String("log"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_SYNC, 0o644)
		if err != nil {
			return fmt.Errorf("open log file: %w", err)
		}
		logrus.SetOutput(f)
		logFile = f
	}
	logrus.Debugf("nanobox-runc %s: %s", version, strings.Join(os.Args[1:], " "))
	if c.IsSet("criu") {
		// runc keeps the flag (hidden) for callers that still pass it:
		// go-runc adds it whenever containerd has a CRIU path set. Not a
		// warning on stderr: go-runc reads state's stdout and stderr
		// together as JSON.
		logrus.Debug("--criu ignored: this runtime has no checkpoint/restore")
	}
	_, err := parseRootless(c.String("rootless"))
	return err
}

// checkSystemdCgroup refuses --systemd-cgroup where systemd is not init.
// Only commands that place a container in a cgroup call it, so that state,
// kill and delete keep working for callers that always pass the flag.
func checkSystemdCgroup(c *cli.Context) error {
	if !c.Bool("systemd-cgroup") {
		return nil
	}
	if fi, err := os.Lstat("/run/systemd/system"); err != nil || !fi.IsDir() {
		return errors.New("--systemd-cgroup needs systemd as init, and it is not running here: drop the flag to use cgroupfs")
	}
	return errors.New("--systemd-cgroup is not supported yet: drop the flag to use cgroupfs")
}

// fatal reports err the way runc does: on stderr, and as an error entry in
// the --log file when there is one. Exit status 1.
func fatal(err error) {
	fatalWithCode(err, 1)
}

// fatalWithCode is fatal with exit status code.
func fatalWithCode(err error, code int) {
	fatalLine(err, "nanobox-runc: "+err.Error(), code)
}

// failSetup ends create or run (cmd) when init reported err while it set
// the container up, in runc's words, which its suite and its callers'
// scripts match: "nanobox-runc run failed: unable to start container
// process: error during container init: error mounting ...". Other errors
// are left to the caller.
func failSetup(cmd string, err error) {
	var se *libbox.SetupError
	if errors.As(err, &se) {
		err = fmt.Errorf("nanobox-runc %s failed: unable to start container process: error during container init: %w", cmd, err)
		fatalLine(err, err.Error(), 1)
	}
}

// fatalLine logs err to the --log file, prints line on stderr and exits
// with code.
func fatalLine(err error, line string, code int) {
	if logFile != nil {
		logrus.Error(err)
	}
	fmt.Fprintln(os.Stderr, line)
	os.Exit(code)
}

// withContainer is the Action of a command whose first argument is a
// container id, with min to max arguments in all (max < 0: no limit): it
// checks them, loads the container and calls fn with it.
func withContainer(min, max int, fn func(c *cli.Context, ctr *libbox.Container) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if err := checkArgs(c, min, max); err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		return fn(c, ctr)
	}
}

// withLightContainer is withContainer for the commands that only look at
// a container or signal it (state, kill): it opens it with LoadLight.
func withLightContainer(min, max int, fn func(c *cli.Context, ctr *libbox.LightContainer) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if err := checkArgs(c, min, max); err != nil {
			return err
		}
		rt, err := newRuntime(c)
		if err != nil {
			return err
		}
		ctr, err := rt.LoadLight(c.Args().First())
		if err != nil {
			return err
		}
		return fn(c, ctr)
	}
}

// checkArgs validates the number of positional arguments of a command.
func checkArgs(c *cli.Context, min, max int) error {
	n := c.NArg()
	if n < min || (max >= 0 && n > max) {
		want := strconv.Itoa(min)
		switch {
		case max < 0:
			want = "at least " + want
		case max != min:
			want = fmt.Sprintf("%d to %d", min, max)
		}
		return fmt.Errorf("%s: %s argument(s) expected, got %d (usage: nanobox-runc %s %s)",
			c.Command.Name, want, n, c.Command.Name, strings.TrimSpace(c.Command.ArgsUsage))
	}
	return nil
}
