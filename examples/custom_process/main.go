// Command custom_process confines a process the program starts itself,
// with os/exec, by libbox's child-side primitives (rlimits, no
// capabilities, no_new_privs, Landlock, seccomp) and no namespaces: the
// caller keeps the whole exec.Cmd, pipes and context included.
//
//	go run ./examples/custom_process
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

func main() {
	// Main also applies the confinement in the re-executed child.
	libbox.Main()
	work, err := os.MkdirTemp("", "custom-")
	check(err)
	defer os.RemoveAll(work)
	secret, err := os.MkdirTemp("", "custom-secret-")
	check(err)
	defer os.RemoveAll(secret)
	check(os.WriteFile(filepath.Join(secret, "key"), []byte("do not read me\n"), 0o600))

	c := libbox.Confinement{
		Limits: libbox.Limits{OpenFiles: 64, FileSize: libbox.MB, CPUTime: 5 * time.Second},
		Landlock: &libbox.Landlock{
			ReadOnly:  []string{"/usr", "/etc", "/lib", "/lib64", "/bin"},
			ReadWrite: []string{work, "/dev/null"},
		},
		Seccomp: libbox.SeccompDefault(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd, err := c.Command(ctx, "sh", "-c", `
		echo "writing in the work directory: $(echo ok >"$1/out" && cat "$1/out")"
		cat "$2/key" 2>/dev/null || echo "reading the secret: denied"
		echo "open files allowed: $(ulimit -n)"`, "sh", work, secret)
	check(err)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	check(cmd.Run())
	// The caller itself is not confined.
	b, err := os.ReadFile(filepath.Join(secret, "key"))
	check(err)
	fmt.Printf("the caller still reads the secret: %q\n", b)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "custom_process:", err)
		os.Exit(1)
	}
}
