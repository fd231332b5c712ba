package main

import "github.com/urfave/cli/v2"

var pauseCommand = &cli.Command{
	Name:      "pause",
	Usage:     "freeze every process of a container (cgroup freezer)",
	ArgsUsage: "<container-id>",
	Action: func(c *cli.Context) error {
		if err := checkArgs(c, 1, 1); err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		return ctr.Pause()
	},
}

var resumeCommand = &cli.Command{
	Name:      "resume",
	Usage:     "thaw a paused container",
	ArgsUsage: "<container-id>",
	Action: func(c *cli.Context) error {
		if err := checkArgs(c, 1, 1); err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		return ctr.Resume()
	},
}
