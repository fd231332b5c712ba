package libbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// readCgroupFile reads a file whole, past its first buffer, and keeps the
// error kinds os.ReadFile gives.
func TestReadCgroupFile(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789abcdef"), 200)
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readCgroupFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(want))
	}
	if _, err := readCgroupFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

func TestCPUAcctUsageAll(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpuacct.usage_all")
	if err := os.WriteFile(p, []byte("cpu user system\n0 100 20\n1 5 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	user, sys, err := cpuacctUsageAll(nil, p)
	if err != nil || user != 105 || sys != 27 {
		t.Errorf("user %d sys %d (%v), want 105 27", user, sys, err)
	}
	for _, bad := range []string{"", "cpu user system\n", "cpu user\n0 1\n", "cpu user system\n0 1\n", "cpu user system\n0 x 1\n"} {
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := cpuacctUsageAll(nil, p); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// On a cgroup v1 host, the same counters as usage_user and usage_sys:
	// both only grow, so a read of usage_all lies between two reads of
	// the others.
	root := "/sys/fs/cgroup/cpuacct"
	if _, err := os.Stat(filepath.Join(root, "cpuacct.usage_all")); err != nil {
		t.Skipf("no cgroup v1 cpuacct here: %v", err)
	}
	var plain *statReader // reads the plain way, as a report without a prefetch
	u0, err1 := plain.readUint(filepath.Join(root, "cpuacct.usage_user"))
	s0, err2 := plain.readUint(filepath.Join(root, "cpuacct.usage_sys"))
	u, s, err3 := cpuacctUsageAll(nil, filepath.Join(root, "cpuacct.usage_all"))
	u1, err4 := plain.readUint(filepath.Join(root, "cpuacct.usage_user"))
	s1, err5 := plain.readUint(filepath.Join(root, "cpuacct.usage_sys"))
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	if u < u0 || u > u1 || s < s0 || s > s1 {
		t.Errorf("usage_all user %d sys %d, not between usage_user %d..%d and usage_sys %d..%d", u, s, u0, u1, s0, s1)
	}
}
