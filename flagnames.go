package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli v2 computes a flag's names (Names) with a regular expression
// on every call, and calls it for every flag of the command once for every
// other flag while it runs the flags' actions (runFlagActions, through
// IsSet and lookupFlag): with the sandbox command's 40 flags that was about
// 1,000 regexp replacements, 3 of the 10 million instructions of a whole
// `nanobox-runc sandbox -- /bin/true` (cachegrind). The wrappers below
// answer Names from a list made once, without changing anything else the
// flag does: the embedded flag keeps its parsing, help and value.

type namedBoolFlag struct {
	*cli.BoolFlag
	names []string
}

func (f *namedBoolFlag) Names() []string { return f.names }

type namedStringFlag struct {
	*cli.StringFlag
	names []string
}

func (f *namedStringFlag) Names() []string { return f.names }

type namedGenericFlag struct {
	*cli.GenericFlag
	names []string
}

func (f *namedGenericFlag) Names() []string { return f.names }

// flagNames is cli.FlagNames without the regular expression: each name cut
// at its first comma or space (the v1 "name, alias" form v2 strips).
func flagNames(name string, aliases []string) []string {
	out := make([]string, 0, 1+len(aliases))
	for _, n := range append([]string{name}, aliases...) {
		if i := strings.IndexAny(n, ", "); i >= 0 {
			n = n[:i]
		}
		out = append(out, n)
	}
	return out
}

// withNamedFlags replaces the boolean, string and generic flags of the app
// and of its commands by their named* wrappers (the other kinds are few and
// stay as they are). It may be called again on the same app.
func withNamedFlags(app *cli.App) *cli.App {
	app.Flags = namedFlags(app.Flags)
	for _, cmd := range app.Commands {
		cmd.Flags = namedFlags(cmd.Flags)
	}
	return app
}

func namedFlags(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			out[i] = &namedBoolFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.StringFlag:
			out[i] = &namedStringFlag{f, flagNames(f.Name, f.Aliases)}
		case *cli.GenericFlag:
			out[i] = &namedGenericFlag{f, flagNames(f.Name, f.Aliases)}
		default:
			out[i] = f
		}
	}
	return out
}

// isBoolFlag: f is a boolean flag, wrapped or not.
func isBoolFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.BoolFlag, *namedBoolFlag:
		return true
	}
	return false
}
