package libbox

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// A user namespace whose uid_map is the identity over every id ("0 0
// 4294967295", what systemd 260 gives a unit with PrivateUsers=full) looks
// like the initial one through uid_map alone; root there is still not root
// on the host. moby/sys/userns before v0.2 took it for the host's (runc
// 1.5.2 fixed the same): the runtime then managed devices and cgroups as
// host root, and failed.
func TestInUserNSFullIdentityMap(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: only host root may map every id into a new user namespace")
	}
	if InUserNS() {
		t.Skip("the test runs in a user namespace already")
	}
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skipf("no user namespaces here: %v", err)
	}
	full := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 4294967295}}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInUserNSHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "NANOBOX_TEST_USERNS_HELPER=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                full,
		GidMappings:                full,
		GidMappingsEnableSetgroups: true,
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper in a user namespace: %v\n%s", err, out)
	}
	for _, want := range []string{"uid_map: 0 0 4294967295", "InUserNS: true", "hostRootless: true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("helper's output lacks %q:\n%s", want, out)
		}
	}
}

// TestInUserNSHelper reports, from inside the namespace of
// TestInUserNSFullIdentityMap, what libbox makes of it.
func TestInUserNSHelper(t *testing.T) {
	if os.Getenv("NANOBOX_TEST_USERNS_HELPER") == "" {
		t.Skip("run by TestInUserNSFullIdentityMap")
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uid_map: %s", strings.Join(strings.Fields(string(m)), " "))
	t.Logf("InUserNS: %v", InUserNS())
	t.Logf("hostRootless: %v", hostRootless())
}
