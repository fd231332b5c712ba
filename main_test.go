package main

import (
	"slices"
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
