package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestSliceFlagsDoNotSplit: a repeated flag is how several values are
// given, as in runc; a comma is part of the value (`exec --env A=1,2`,
// `exec --cgroup cpu,cpuacct:sub`).
func TestSliceFlagsDoNotSplit(t *testing.T) {
	app := newApp()
	var env, cgroups, caps []string
	var gids []int64
	for _, c := range app.Commands {
		if c.Name == "exec" {
			c.Action = func(ctx *cli.Context) error {
				env, cgroups, caps, gids = ctx.StringSlice("env"), ctx.StringSlice("cgroup"), ctx.StringSlice("cap"), ctx.Int64Slice("additional-gids")
				return nil
			}
		}
	}
	args := []string{"nanobox-runc", "exec", "--env", "A=1,2", "--env", "B=3", "--cgroup", "memory:submem", "--cgroup", "cpu,cpuacct:subcpu",
		"--cap", "CAP_KILL", "-g", "5", "-g", "6", "ctr", "true"}
	if err := app.Run(args); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(env, []string{"A=1,2", "B=3"}) {
		t.Errorf("env %q", env)
	}
	if !slices.Equal(cgroups, []string{"memory:submem", "cpu,cpuacct:subcpu"}) {
		t.Errorf("cgroups %q", cgroups)
	}
	if !slices.Equal(caps, []string{"CAP_KILL"}) || !slices.Equal(gids, []int64{5, 6}) {
		t.Errorf("caps %q gids %v", caps, gids)
	}
}

// TestHelpNamesTheInvokedProgram: as with runc, `PROG CMD -h` names the
// command as "PROG CMD" (the binary is often installed under another
// name), while the top-level NAME stays the runtime's own.
func TestHelpNamesTheInvokedProgram(t *testing.T) {
	if got := progName([]string{"/usr/local/bin/my-runc", "list"}); got != "my-runc" {
		t.Errorf("progName: %q", got)
	}
	for _, tc := range []struct {
		args       []string
		name, uses string
	}{
		{[]string{"checkpoint", "-h"}, "my-runc checkpoint - ", "my-runc checkpoint [command options]"},
		{[]string{"run", "--help"}, "my-runc run - ", "my-runc run [command options]"},
		{[]string{"-h"}, "nanobox-runc - Open Container Initiative runtime", "my-runc [global options]"},
	} {
		app := newApp()
		app.HelpName = "my-runc"
		// Copies: each run adds a help flag to the commands it sets up.
		for i, c := range app.Commands {
			cp := *c
			cp.Flags = slices.Clip(cp.Flags)
			app.Commands[i] = &cp
		}
		var out strings.Builder
		app.Writer = &out
		if err := app.Run(append([]string{"/usr/local/bin/my-runc"}, tc.args...)); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		lines := strings.Split(out.String(), "\n")
		if len(lines) < 2 || lines[0] != "NAME:" || !strings.HasPrefix(strings.TrimSpace(lines[1]), tc.name) {
			t.Errorf("%v: NAME section %q, want %q", tc.args, lines[:min(2, len(lines))], tc.name)
		}
		if !strings.Contains(out.String(), "USAGE:\n   "+tc.uses) {
			t.Errorf("%v: usage is not %q:\n%s", tc.args, tc.uses, out.String())
		}
	}
}
