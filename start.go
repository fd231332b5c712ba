package main

import "github.com/urfave/cli/v2"

var startCommand = &cli.Command{
	Name:      "start",
	Usage:     "run the user program of a created container",
	ArgsUsage: "<container-id>",
	Action: func(c *cli.Context) error {
		if err := checkArgs(c, 1, 1); err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		return warnOrFail(ctr.Start())
	},
}
