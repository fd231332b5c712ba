package main

import (
	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

var specCommand = &cli.Command{
	Name:  "spec",
	Usage: "create a new specification file",
	Description: `The spec command writes a config.json for a bundle: a starting point to
edit, the same default configuration runc writes. It refuses to replace an
existing config.json.

A bundle is a directory with config.json and the root filesystem it names
(root.path, "rootfs" by default), for example:

    mkdir -p bundle/rootfs
    docker export $(docker create busybox) | tar -C bundle/rootfs -x
    nanobox-runc spec --bundle bundle
    nanobox-runc run --bundle bundle mycontainer`,
	Flags: []cli.Flag{
		&cli.StringFlag{
			Name:    "bundle",
			Aliases: []string{"b"},
			Value:   ".",
			Usage:   "directory to write config.json in",
		},
		&cli.BoolFlag{
			Name:  "rootless",
			Usage: "write a configuration for a container run without root",
		},
	},
	Action: func(ctx *cli.Context) error {
		if err := checkArgs(ctx, 0, 0); err != nil {
			return err
		}
		spec := specconv.Example()
		if ctx.Bool("rootless") {
			specconv.ToRootless(spec)
		}
		return specconv.WriteSpec(ctx.String("bundle"), spec)
	},
}
