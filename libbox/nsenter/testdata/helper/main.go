// Command helper is started by the nsenter tests in place of
// "nanobox-runc init": it links the nsenter constructor and prints what the
// process it ends up as sees, one "key=value" line each.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	_ "github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

func main() {
	fmt.Printf("pid=%d\n", os.Getpid())
	fmt.Printf("ppid=%d\n", os.Getppid())
	fmt.Printf("uid=%d\n", os.Getuid())
	fmt.Printf("gid=%d\n", os.Getgid())
	fmt.Printf("args=%s\n", strings.Join(os.Args[1:], " "))
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) == nil {
		fmt.Printf("boottime=%d\n", ts.Sec)
	}
	for _, f := range []string{"uid_map", "gid_map"} {
		b, _ := os.ReadFile("/proc/self/" + f)
		fmt.Printf("%s=%s\n", f, strings.Join(strings.Fields(string(b)), " "))
	}
	for _, ns := range []string{"user", "mnt", "pid", "net", "uts", "ipc", "cgroup", "time"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			l = "error: " + err.Error()
		}
		fmt.Printf("ns.%s=%s\n", ns, l)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		fmt.Printf("hostname=%s\n", unix.ByteSliceToString(u.Nodename[:]))
	}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		fmt.Printf("cgroup=%s\n", strings.Join(strings.Fields(string(b)), ";"))
	}
	// What each open descriptor is (the Go runtime has opened some of
	// its own by now).
	var fds []string
	for fd := 0; fd < 32; fd++ {
		if l, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil {
			fds = append(fds, strconv.Itoa(fd)+":"+l)
		}
	}
	fmt.Printf("fds=%s\n", strings.Join(fds, ","))
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	fmt.Printf("dumpable=%d\n", d)
	// The init socket must still be open, with the flags it was given.
	if v, ok := os.LookupEnv("_NANOBOX_INITPIPE"); ok {
		fd, _ := strconv.Atoi(v)
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			fmt.Printf("initpipe=%v\n", err)
		} else {
			fmt.Printf("initpipe=open cloexec=%v\n", flags&unix.FD_CLOEXEC != 0)
			if _, err := unix.Write(fd, []byte("hello from init")); err != nil {
				fmt.Printf("initpipe.write=%v\n", err)
			}
		}
	}
}
