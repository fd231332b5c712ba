package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

var stateCommand = &cli.Command{
	Name:      "state",
	Usage:     "print the OCI state of a container as JSON",
	ArgsUsage: "<container-id>",
	Action: withContainer(1, 1, func(_ *cli.Context, ctr *libbox.Container) error {
		b, err := json.MarshalIndent(ctr.State(), "", "  ")
		if err != nil {
			return fmt.Errorf("encode state: %w", err)
		}
		_, err = fmt.Fprintln(os.Stdout, string(b))
		return err
	}),
}
