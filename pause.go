package main

import (
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:      "pause",
		Usage:     "freeze every process of a container (cgroup freezer)",
		ArgsUsage: "<container-id>",
		Action: withContainer(1, 1, func(_ *cli.Context, ctr *libbox.Container) error {
			return ctr.Pause()
		}),
	}
}

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "thaw a paused container",
		ArgsUsage: "<container-id>",
		Action: withContainer(1, 1, func(_ *cli.Context, ctr *libbox.Container) error {
			return ctr.Resume()
		}),
	}
}
