package nsenter

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// argsProbe is a constructor that prints the argc and argv nb_args.h gives
// it, one argument per line, the way the nsenter, pause and waiter
// constructors receive them.
const argsProbe = `#include <stdio.h>
#include "nb_args.h"

static void probe(int argc, char **argv)
{
	printf("%d\n", argc);
	for (int i = 0; i < argc; i++)
		printf("[%s]\n", argv[i]);
	fflush(stdout);
}

NB_CONSTRUCTOR(probe)

int main(void)
{
	return 0;
}
`

// TestConstructorArgs: the constructors see the process's own argc and
// argv with glibc (which passes them) and with musl (which does not: they
// are found from environ), whatever the arguments and the environment.
func TestConstructorArgs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte(argsProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, cc := range []string{"gcc", "musl-gcc"} {
		path, err := exec.LookPath(cc)
		if err != nil {
			t.Logf("%s: not installed, not tried", cc)
			continue
		}
		bin := filepath.Join(dir, "probe-"+cc)
		if out, err := exec.Command(path, "-static", "-O2", "-Wall", "-Werror", "-I", wd, "-o", bin, src).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cc, err, out)
		}
		ran++
		for _, tc := range []struct {
			args []string
			env  []string
		}{
			{args: nil, env: []string{"A=1"}},
			{args: []string{"one"}, env: nil},
			{args: []string{"", "two words", "", "x"}, env: []string{"A=1", "B=2", "C="}},
			{args: strings.Fields(strings.Repeat("a ", 300)), env: []string{"PATH=/bin"}},
		} {
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = tc.env
			if cmd.Env == nil {
				cmd.Env = []string{}
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s %q: %v", cc, tc.args, err)
			}
			want := strconv.Itoa(len(tc.args)+1) + "\n[" + bin + "]\n"
			for _, a := range tc.args {
				want += "[" + a + "]\n"
			}
			if string(out) != want {
				t.Errorf("%s %q (env %q): the constructor saw\n%s\nwant\n%s", cc, tc.args, tc.env, out, want)
			}
		}
	}
	if ran == 0 {
		t.Skip("neither gcc nor musl-gcc is installed: nothing to compile the probe with")
	}
}
