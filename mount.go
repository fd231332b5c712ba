package main

import (
	"encoding/json"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "add a bind mount to a running container or detached sandbox",
		ArgsUsage: "<container-id> <source> <destination>",
		Description: `SOURCE, a host path, appears at DESTINATION inside the container while it
	runs: read-only with --ro, or when SOURCE is on a read-only mount (it can
	never be made writable then); always nosuid and nodev; recursive (the
	mounts below SOURCE come along, read-only too with --ro). DESTINATION is
	resolved inside the container's root (symlinks and .. cannot leave it; its
	last component must not be a symlink); missing directories are created,
	which fails on a read-only root: mount under a writable directory then.

	The mount is recorded in the container's state; mounts lists what was added
	(JSON), and umount removes only that. On success the mount is printed as
	JSON: {"source", "target" (as resolved inside), "readOnly",
	"sourceReadOnly", "mountId", "added"}.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "ro", Usage: "mount it read-only"},
		},
		Action: withContainer(3, 3, func(c *cli.Context, ctr *libbox.Container) error {
			m, err := ctr.AddMount(libbox.Bind{Source: c.Args().Get(1), Target: c.Args().Get(2), ReadOnly: c.Bool("ro")})
			if err != nil {
				return err
			}
			return json.NewEncoder(os.Stdout).Encode(m)
		}),
	}
}

func umountCommand() *cli.Command {
	return &cli.Command{
		Name:      "umount",
		Usage:     "remove a mount that nanobox-runc mount added",
		ArgsUsage: "<container-id> <destination>",
		Description: `Only a mount that "nanobox-runc mount" added, and that is still the one
	at DESTINATION, is removed (lazily: a process with a file open in it keeps
	it until it closes the file). The container's own mounts, and one the
	container made over an added mount, are refused.`,
		Action: withContainer(2, 2, func(c *cli.Context, ctr *libbox.Container) error {
			return ctr.RemoveMount(c.Args().Get(1))
		}),
	}
}

func mountsCommand() *cli.Command {
	return &cli.Command{
		Name:      "mounts",
		Usage:     "list the mounts nanobox-runc mount added to a container (JSON)",
		ArgsUsage: "<container-id>",
		Action: withContainer(1, 1, func(c *cli.Context, ctr *libbox.Container) error {
			ms, err := ctr.Mounts()
			if err != nil {
				return err
			}
			return json.NewEncoder(os.Stdout).Encode(ms)
		}),
	}
}
