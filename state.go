package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
)

var stateCommand = &cli.Command{
	Name:      "state",
	Usage:     "print the OCI state of a container as JSON",
	ArgsUsage: "<container-id>",
	Action: func(c *cli.Context) error {
		if err := checkArgs(c, 1, 1); err != nil {
			return err
		}
		ctr, err := loadContainer(c)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(ctr.State(), "", "  ")
		if err != nil {
			return fmt.Errorf("encode state: %w", err)
		}
		_, err = fmt.Fprintln(os.Stdout, string(b))
		return err
	},
}
