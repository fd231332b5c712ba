package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"

	"github.com/nanobox-sandbox/nanobox-runc/specconv"
)

func specCommand() *cli.Command {
	return &cli.Command{
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
			&cli.StringFlag{
				Name:  "preset",
				Usage: "write the sandbox of a preset instead: agent-executor[=DIR], code-judge[=DIR], data-analysis=IN,OUT (as `nanobox-runc sandbox --preset`)",
			},
		},
		Action: func(ctx *cli.Context) error {
			if err := checkArgs(ctx, 0, 0); err != nil {
				return err
			}
			if p := ctx.String("preset"); p != "" {
				if ctx.Bool("rootless") {
					return errors.New("--preset maps the sandbox's user to the ids of whoever runs spec: run spec --preset, without --rootless, as the user who will run the bundle")
				}
				return writePresetSpec(ctx.String("bundle"), p)
			}
			spec := specconv.Example()
			if ctx.Bool("rootless") {
				specconv.ToRootless(spec)
			}
			return specconv.WriteSpec(ctx.String("bundle"), spec)
		},
	}
}

// writePresetSpec writes the sandbox of preset (NAME[=DIR[,DIR]]) as the
// bundle's config.json, running sh, with an empty rootfs directory that
// the host's system directories are bound into.
func writePresetSpec(bundle, preset string) error {
	name, dirs, _ := strings.Cut(preset, "=")
	var list []string
	if dirs != "" {
		list = strings.Split(dirs, ",")
	}
	opts, err := libbox.Preset(name, list...)
	if err != nil {
		return fmt.Errorf("--preset: %w", err)
	}
	spec, sandboxOnly, err := specconv.SandboxSpec(opts, "rootfs", []string{"sh"})
	if err != nil {
		return fmt.Errorf("--preset %s: %w", name, err)
	}
	if err := specconv.WriteSpec(bundle, spec); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create the bundle's empty rootfs: %w", err)
	}
	if len(sandboxOnly) > 0 {
		fmt.Fprintf(os.Stderr, "nanobox-runc spec: note: %s of the %s preset are enforced by `nanobox-runc sandbox` only, and are not in config.json\n", strings.Join(sandboxOnly, ", "), name)
	}
	return nil
}
