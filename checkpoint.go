package main

import (
	"errors"
	"slices"

	"github.com/urfave/cli/v2"
)

// checkpoint and restore exist so that callers probing for them (podman
// container checkpoint, ctr task checkpoint) get a clear answer instead
// of "no such command". Container checkpoint/restore needs CRIU, which this
// runtime does not drive. Any of runc's flags is accepted, so that the
// answer is always this one.

var errNoCheckpoint = errors.New("checkpoint/restore is not supported by nanobox-runc (it does not use CRIU): stop and re-create the container instead, or use runc for it")

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name:      "checkpoint",
		Usage:     "checkpoint a running container (not supported)",
		ArgsUsage: "[runc's checkpoint options] <container-id>",
		Description: `runc saves a container's processes with CRIU. nanobox-runc does not
	support checkpoint/restore: the command always fails, saying so.`,
		SkipFlagParsing: true,
		HideHelpCommand: true,
		Action:          unsupportedAction,
	}
}

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "restore a container from a checkpoint (not supported)",
		ArgsUsage: "[runc's restore options] <container-id>",
		Description: `runc restores a container from a CRIU image. nanobox-runc does not
	support checkpoint/restore: the command always fails, saying so.`,
		SkipFlagParsing: true,
		HideHelpCommand: true,
		Action:          unsupportedAction,
	}
}

func unsupportedAction(c *cli.Context) error {
	if args := c.Args().Slice(); slices.Contains(args, "-h") || slices.Contains(args, "--help") {
		return cli.ShowSubcommandHelp(c)
	}
	return errNoCheckpoint
}
