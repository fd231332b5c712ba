package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestReorderArgs(t *testing.T) {
	app := newApp()
	for _, tt := range []struct{ in, want string }{
		{"delete ID --force", "delete --force ID"},
		{"delete ID -f", "delete -f ID"},
		{"--root /r --log-format json delete ID --force", "--root /r --log-format json delete --force ID"},
		{"--debug update ID --memory 1g --pids-limit -1", "--debug update --memory 1g --pids-limit -1 ID"},
		{"update ID --memory=1g -r -", "update --memory=1g -r - ID"},
		{"kill ID KILL --all", "kill --all ID KILL"},
		{"kill ID -9", "kill ID -9"},
		{"create ID --bundle /b --pid-file p", "create --bundle /b --pid-file p ID"},
		{"state ID --bogus", "state ID --bogus"},
		{"delete ID -- --force", "delete ID -- --force"},
		{"list --format json", "list --format json"},
		{"state ID -h", "state -h ID"},
		// exec and ps pass what follows the id on.
		{"exec ID sh -c --force", "exec ID sh -c --force"},
		{"exec --tty ID ls --all", "exec --tty ID ls --all"},
		{"ps ID -ef", "ps ID -ef"},
		{"--version", "--version"},
		{"nosuch x --y", "nosuch x --y"},
	} {
		in := append([]string{"nanobox-runc"}, strings.Fields(tt.in)...)
		want := append([]string{"nanobox-runc"}, strings.Fields(tt.want)...)
		if got := reorderArgs(app, in); !reflect.DeepEqual(got, want) {
			t.Errorf("reorderArgs(%q) = %q, want %q", tt.in, got[1:], tt.want)
		}
	}
}
