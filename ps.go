package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

func psCommand() *cli.Command {
	return &cli.Command{
		Name:      "ps",
		Usage:     "list the processes of a container",
		ArgsUsage: "<container-id> [ps options]",
		Description: `The table is the host's ps(1) output (ps -ef, or the ps options given
	after the id) restricted to the container's processes; --format json
	prints their host pids as a JSON list.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json"},
		},
		Action: func(c *cli.Context) error {
			if err := checkArgs(c, 1, -1); err != nil {
				return err
			}
			format := c.String("format")
			if format != "table" && format != "json" {
				return fmt.Errorf("unknown --format %q: use table or json", format)
			}
			ctr, err := loadContainer(c)
			if err != nil {
				return err
			}
			pids, err := ctr.Processes()
			if err != nil {
				return err
			}
			if format == "json" {
				if pids == nil {
					pids = []int{}
				}
				return json.NewEncoder(os.Stdout).Encode(pids)
			}
			psArgs := c.Args().Tail()
			if len(psArgs) == 0 {
				psArgs = []string{"-ef"}
			}
			return psTable(psArgs, pids)
		},
	}
}

// psTable runs ps with args and prints its header and the lines of pids.
func psTable(args []string, pids []int) error {
	out, err := exec.Command("ps", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("ps %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(ee.Stderr))
		}
		return fmt.Errorf("ps needs the host's ps program (Debian package procps), or use --format json: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	col := slices.Index(strings.Fields(lines[0]), "PID")
	if col < 0 {
		return fmt.Errorf("ps %s: no PID column in its output: add -o pid", strings.Join(args, " "))
	}
	fmt.Println(lines[0])
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) <= col {
			continue
		}
		if pid, err := strconv.Atoi(f[col]); err == nil && slices.Contains(pids, pid) {
			fmt.Println(l)
		}
	}
	return nil
}
