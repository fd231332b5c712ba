package libbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// OCIState is the state of a container as `state` prints it and hooks read
// it on stdin: the OCI fields plus runc's rootfs, created and owner.
type OCIState struct {
	OCIVersion  string            `json:"ociVersion"`
	ID          string            `json:"id"`
	Status      Status            `json:"status"`
	Pid         int               `json:"pid"`
	Bundle      string            `json:"bundle"`
	Rootfs      string            `json:"rootfs"`
	Created     time.Time         `json:"created"`
	Owner       string            `json:"owner"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ociState is the one constructor of the OCI state, whoever reads it:
// `state`, the hooks, a seccomp notify listener.
func ociState(id string, cfg *Config, status Status, pid int, created time.Time, owner string) *OCIState {
	return &OCIState{
		OCIVersion:  cfg.OCIVersion,
		ID:          id,
		Status:      status,
		Pid:         pid,
		Bundle:      cfg.Bundle,
		Rootfs:      cfg.Rootfs,
		Created:     created,
		Owner:       owner,
		Annotations: cfg.Annotations,
	}
}

// runHooks runs hooks in order, each with state on stdin, stopping at the
// first failure. name is the hook kind, for error messages.
func runHooks(name string, hooks []Hook, state []byte) error {
	return runHookList(name, hooks, state, true)
}

// runAllHooks runs every hook in order, each with state on stdin, and
// returns their failures joined: for poststop, whose failure the OCI
// runtime spec makes a warning after which "the remaining hooks and
// lifecycle continue as if the hook had succeeded".
func runAllHooks(name string, hooks []Hook, state []byte) error {
	return runHookList(name, hooks, state, false)
}

// runHookList runs hooks in order; with stopAtFirst it returns the first
// failure, otherwise it runs them all and returns their failures joined.
func runHookList(name string, hooks []Hook, state []byte, stopAtFirst bool) error {
	var errs []error
	for i, h := range hooks {
		if err := runHook(h, state); err != nil {
			// runc's text up to the colon ("error running
			// createRuntime hook #1:"): callers match it.
			err = fmt.Errorf("error running %s hook #%d: %s: %w", name, i, h.Path, err)
			if stopAtFirst {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func runHook(h Hook, state []byte) error {
	ctx := context.Background()
	if h.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, h.Path)
	// OCI: args[0] is the hook's argv[0], as in execv; an empty args list
	// means argv[0] is the path.
	if len(h.Args) > 0 {
		cmd.Args = h.Args
	}
	// OCI: env is the hook's whole environment (nil means empty).
	cmd.Env = h.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = bytes.NewReader(state)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s", h.Timeout)
	}
	if err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

func marshalState(s *OCIState) []byte {
	b, _ := marshalOCIState(s) // OCIState holds only marshalable types
	return b
}
