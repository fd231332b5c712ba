package main

import "github.com/urfave/cli/v2"

var killCommand = &cli.Command{
	Name:      "kill",
	Usage:     "send a signal (default SIGTERM) to a container's init, or with --all to all its processes",
	ArgsUsage: "<container-id> [signal]",
	Flags: []cli.Flag{
		&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "signal every process of the container"},
	},
	Action: func(c *cli.Context) error {
		if err := checkArgs(c, 1, 2); err != nil {
			return err
		}
		sigName := "SIGTERM"
		if c.NArg() == 2 {
			sigName = c.Args().Get(1)
		}
		sig, err := parseSignal(sigName)
		if err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		return ctr.Signal(sig, c.Bool("all"))
	},
}
