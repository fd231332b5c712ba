package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the containers under the state root",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the ids"},
		},
		Action: func(c *cli.Context) error {
			if err := checkArgs(c, 0, 0); err != nil {
				return err
			}
			format := c.String("format")
			if format != "table" && format != "json" {
				return fmt.Errorf("unknown --format %q: use table or json", format)
			}
			rt, err := newRuntime(c)
			if err != nil {
				return err
			}
			// As in runc: a default root that does not exist yet lists
			// nothing (no container was made), but a --root that does not
			// exist is a mistake worth saying.
			if c.String("root") != "" {
				if _, err := os.Stat(rt.Root); err != nil {
					return fmt.Errorf("state root given by --root: %w: pass an existing directory, or leave --root out for the default", err)
				}
			}
			ids, err := rt.List()
			if err != nil {
				return err
			}
			states := []*runcState{}
			for _, id := range ids {
				ctr, err := rt.LoadLight(id)
				if err != nil {
					continue // deleted meanwhile
				}
				states = append(states, runcStateOf(ctr.State()))
			}
			if c.Bool("quiet") {
				for _, s := range states {
					fmt.Println(s.ID)
				}
				return nil
			}
			if format == "json" {
				return json.NewEncoder(os.Stdout).Encode(states)
			}
			w := tabwriter.NewWriter(os.Stdout, 12, 1, 3, ' ', 0)
			fmt.Fprint(w, "ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER\n")
			for _, s := range states {
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", s.ID, s.Pid, s.Status, s.Bundle, s.Created.Format(time.RFC3339Nano), s.Owner)
			}
			return w.Flush()
		},
	}
}
