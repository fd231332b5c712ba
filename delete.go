package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func deleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete a stopped or created container (--force: also a running one)",
		ArgsUsage: "<container-id>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "kill the container first if it is running"},
		},
		Action: func(c *cli.Context) error {
			if err := checkArgs(c, 1, 1); err != nil {
				return err
			}
			ctr, err := loadContainer(c)
			if err != nil {
				// runc: deleting a container that is already gone is not an
				// error with --force (the shim retries deletes).
				if c.Bool("force") && errors.Is(err, libbox.ErrNotExist) {
					rt, rerr := newRuntime(c)
					if rerr != nil {
						return rerr
					}
					if rerr := rt.RemoveStale(c.Args().First()); !errors.Is(rerr, libbox.ErrExist) {
						return rerr
					}
					ctr, err = loadContainer(c) // created meanwhile
					if err != nil {
						return err
					}
					return warnOrFail(ctr.Delete(true))
				}
				return err
			}
			err = ctr.Delete(c.Bool("force"))
			if c.Bool("force") && errors.Is(err, libbox.ErrNotExist) {
				return nil // deleted by someone else meanwhile
			}
			return warnOrFail(err)
		},
	}
}
