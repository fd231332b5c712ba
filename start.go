package main

import (
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func startCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "run the user program of a created container",
		ArgsUsage: "<container-id>",
		Action: withContainer(1, 1, func(_ *cli.Context, ctr *libbox.Container) error {
			return warnOrFail(ctr.Start())
		}),
	}
}
