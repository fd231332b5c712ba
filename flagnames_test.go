package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestNamedFlags: every flag of every command answers Names as urfave/cli
// would (cli.FlagNames), is still the kind it was, and the wrapped app
// parses flags as before.
func TestNamedFlags(t *testing.T) {
	app := newApp()
	wrapped := 0
	check := func(where string, flags []cli.Flag) {
		for _, f := range flags {
			var want []string
			switch f := f.(type) {
			case *namedBoolFlag:
				want = cli.FlagNames(f.Name, f.Aliases)
			case *namedStringFlag:
				want = cli.FlagNames(f.Name, f.Aliases)
			case *namedGenericFlag:
				want = cli.FlagNames(f.Name, f.Aliases)
			case *cli.BoolFlag, *cli.StringFlag, *cli.GenericFlag:
				t.Errorf("%s: flag %v left unwrapped", where, f.Names())
				continue
			default:
				continue
			}
			wrapped++
			if got := f.Names(); !slices.Equal(got, want) {
				t.Errorf("%s: Names() = %q, urfave/cli's = %q", where, got, want)
			}
		}
	}
	check("app", app.Flags)
	for _, cmd := range app.Commands {
		check(cmd.Name, cmd.Flags)
	}
	if wrapped < 50 {
		t.Fatalf("only %d flags wrapped", wrapped)
	}
	// Wrapping again changes nothing.
	if n := len(withNamedFlags(app).Commands); n != len(app.Commands) {
		t.Fatalf("commands %d after a second wrap", n)
	}
	if got := flagNames("a, b", []string{"c d"}); !slices.Equal(got, cli.FlagNames("a, b", []string{"c d"})) {
		t.Errorf("flagNames(v1 form) = %q, want %q", got, cli.FlagNames("a, b", []string{"c d"}))
	}
	if !isBoolFlag(app.Command("sandbox").Flags[len(app.Command("sandbox").Flags)-1]) {
		t.Error("the sandbox command's last flag (--validate) is not seen as a boolean")
	}
}

// TestNamedFlagsParse: a wrapped app still parses values, booleans,
// aliases and repeatable generic flags.
func TestNamedFlagsParse(t *testing.T) {
	app := withNamedFlags(&cli.App{
		Name: "x",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}},
			&cli.StringFlag{Name: "memory"},
			&cli.GenericFlag{Name: "env", Value: &multiFlag{}},
			&cli.StringFlag{Name: "unset", Value: "dflt"},
		},
		Writer: &bytes.Buffer{},
	})
	var tty, memSet, unsetSet bool
	var mem, unset string
	var env []string
	app.Action = func(c *cli.Context) error {
		tty, mem, memSet, unset, unsetSet = c.Bool("tty"), c.String("memory"), c.IsSet("memory"), c.String("unset"), c.IsSet("unset")
		env = multi(c, "env")
		return nil
	}
	if err := app.Run([]string{"x", "-t", "--memory", "256M", "--env", "A=1,2", "--env", "B"}); err != nil {
		t.Fatal(err)
	}
	if !tty || mem != "256M" || !memSet || unset != "dflt" || unsetSet || !slices.Equal(env, []string{"A=1,2", "B"}) {
		t.Fatalf("tty %v memory %q (set %v) unset %q (set %v) env %q", tty, mem, memSet, unset, unsetSet, env)
	}
}
