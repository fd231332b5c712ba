package main

import "github.com/urfave/cli/v2"

func createCommand() *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create a container: set it up completely; its process waits for start",
		ArgsUsage: "<container-id>",
		Description: `The container is set up from the bundle's config.json (--bundle, default
	the current directory). Its init process waits until "nanobox-runc start".`,
		Flags: createFlags(),
		Action: func(c *cli.Context) error {
			_, _, err := createContainer(c, nil, false, false)
			failSetup("create", err)
			return err
		},
	}
}
