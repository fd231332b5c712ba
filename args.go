package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// noReorder are the commands whose arguments after the container id are
// passed on as they are (a command and its arguments, ps options), as in
// runc, and the sandbox command, which has no id and takes "-- CMD".
var noReorder = map[string]bool{"exec": true, "ps": true, "sandbox": true}

// reorderArgs moves a command's flags given after its positional arguments
// in front of them, as runc's CLI library (urfave/cli v1) does: `runc
// delete ID --force` and `runc update ID --memory 1g` work there, and
// callers rely on it. urfave/cli v2 stops parsing flags at the first
// positional argument. Global flags stay before the command; "--" ends the
// reordering; a flag the command does not know stays where it is (and is
// reported by the parser).
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		if takesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil || noReorder[cmd.Name] {
		return args
	}
	var flags, rest []string
	tail := args[i+1:]
	for j := 0; j < len(tail); j++ {
		a := tail[j]
		if a == "--" {
			rest = append(rest, tail[j:]...)
			break
		}
		if !isFlagOf(cmd.Flags, a) {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		if takesValue(cmd.Flags, a) && j+1 < len(tail) {
			j++
			flags = append(flags, tail[j])
		}
	}
	out := append([]string{}, args[:i+1]...)
	out = append(out, flags...)
	return append(out, rest...)
}

// flagName is the name in "-x", "--name" or "--name=value"; "" for
// anything else ("-", "--", "-1" is a name "1" no flag has).
func flagName(a string) string {
	if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
		return ""
	}
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func lookupFlag(flags []cli.Flag, a string) cli.Flag {
	name := flagName(a)
	if name == "" {
		return nil
	}
	if name == "help" || name == "h" {
		return cli.HelpFlag
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func isFlagOf(flags []cli.Flag, a string) bool { return lookupFlag(flags, a) != nil }

// takesValue: a known flag that is not a boolean and has no "=value".
func takesValue(flags []cli.Flag, a string) bool {
	f := lookupFlag(flags, a)
	if f == nil || strings.Contains(a, "=") {
		return false
	}
	return !isBoolFlag(f) && f != cli.HelpFlag && f != cli.VersionFlag
}
