package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:      "state",
		Usage:     "print the OCI state of a container as JSON",
		ArgsUsage: "<container-id>",
		Action: withLightContainer(1, 1, func(_ *cli.Context, ctr *libbox.LightContainer) error {
			st := runcStateOf(ctr.State())
			// runc's state leaves the owner empty; only list fills it in.
			st.Owner = ""
			b, err := json.MarshalIndent(st, "", "  ")
			if err != nil {
				return fmt.Errorf("encode state: %w", err)
			}
			_, err = fmt.Fprintln(os.Stdout, string(b))
			return err
		}),
	}
}

// runcState is the state as `state` and `list --format json` print it:
// runc's containerState, keys in its order (the OCI state's fields, plus
// rootfs, created and owner).
type runcState struct {
	OCIVersion  string            `json:"ociVersion"`
	ID          string            `json:"id"`
	Pid         int               `json:"pid"`
	Status      libbox.Status     `json:"status"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Owner       string            `json:"owner"`
}

func runcStateOf(s *libbox.OCIState) *runcState {
	return &runcState{
		OCIVersion: s.OCIVersion, ID: s.ID, Pid: s.Pid, Status: s.Status, Bundle: s.Bundle,
		Rootfs: s.Rootfs, Created: s.Created, Annotations: s.Annotations, Owner: s.Owner,
	}
}
