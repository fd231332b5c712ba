package main

import (
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func killCommand() *cli.Command {
	return &cli.Command{
		Name:      "kill",
		Usage:     "send a signal (default SIGTERM) to a container's init, or with --all to all its processes",
		ArgsUsage: "<container-id> [signal]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "signal every process of the container"},
		},
		Action: withLightContainer(1, 2, func(c *cli.Context, ctr *libbox.LightContainer) error {
			sigName := "SIGTERM"
			if c.NArg() == 2 {
				sigName = c.Args().Get(1)
			}
			sig, err := parseSignal(sigName)
			if err != nil {
				return err
			}
			return ctr.Signal(sig, c.Bool("all"))
		}),
	}
}
