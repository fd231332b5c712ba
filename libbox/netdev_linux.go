package libbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// NetDevice is a network device of the host that create moves into the
// container's network namespace (the OCI linux.netDevices).
type NetDevice struct {
	// HostName names the device in the runtime's network namespace.
	HostName string `json:"hostName"`
	// Name is its name in the container: empty keeps HostName; a name
	// ending in "%d" is a template the kernel completes.
	Name string `json:"name,omitempty"`
}

// target is the name the device is to have in the container.
func (d NetDevice) target() string {
	if d.Name != "" {
		return d.Name
	}
	return d.HostName
}

// ValidateNetDeviceName checks a network device name as the kernel will:
// at most 15 bytes, not "." or "..", no '/', ':' or white space.
func ValidateNetDeviceName(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case len(name) >= unix.IFNAMSIZ:
		return fmt.Errorf("%q is longer than %d bytes", name, unix.IFNAMSIZ-1)
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a device name", name)
	case strings.ContainsAny(name, "/: \t\n\v\f\r"):
		return fmt.Errorf("%q has a '/', ':' or white space", name)
	case strings.Count(name, "%") > 1 || (strings.Contains(name, "%") && !strings.HasSuffix(name, "%d")):
		return fmt.Errorf("%q: the only template is a trailing %%d", name)
	}
	return nil
}

// moveNetDevices moves each device into the network namespace nsFd, as the
// runtime spec asks: under its container name, with its permanent
// global-scope addresses (which the move drops) added back, and up. The
// kernel keeps the rest (MTU, MAC address). Nothing is moved back out:
// when the namespace goes, the kernel returns physical devices to the
// initial namespace and destroys virtual ones.
func moveNetDevices(nsFd int, devs []NetDevice) error {
	if len(devs) == 0 {
		return nil
	}
	in, err := netlinkIn(nsFd)
	if err != nil {
		return err
	}
	defer in.close()
	host, err := newRtnl()
	if err != nil {
		return err
	}
	defer host.close()
	for _, d := range devs {
		if err := moveNetDevice(host, in, nsFd, d); err != nil {
			return fmt.Errorf("linux.netDevices[%q]: %w", d.HostName, err)
		}
	}
	return nil
}

func moveNetDevice(host, in *rtnl, nsFd int, d NetDevice) error {
	index, err := host.linkIndex(d.HostName)
	if errors.Is(err, unix.ENODEV) {
		return errors.New("no such network device on the host: create it before the container, or fix the name")
	}
	if err != nil {
		return fmt.Errorf("look up the device on the host: %w", err)
	}
	addrs, err := host.permanentGlobalAddrs(index)
	if err != nil {
		return err
	}
	name := d.target()
	var before []string
	if strings.HasSuffix(name, "%d") {
		if before, err = in.linkNames(); err != nil {
			return err
		}
	} else if _, err := in.linkIndex(name); err == nil {
		return fmt.Errorf("the container's network namespace already has a device %q: choose another name, or a template ending in %%d", name)
	} else if !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("look up %q in the container's network namespace: %w", name, err)
	}
	msg := ifinfomsg(index, 0, 0)
	msg = rtattr(msg, unix.IFLA_NET_NS_FD, binary.NativeEndian.AppendUint32(nil, uint32(nsFd)))
	msg = rtattr(msg, unix.IFLA_IFNAME, append([]byte(name), 0))
	if err := host.do(unix.RTM_NEWLINK, 0, msg); errors.Is(err, unix.EINVAL) {
		// dev_change_net_namespace: a device that is local to its
		// namespace (loopback, some virtual ones) never moves.
		return fmt.Errorf("move into the container's network namespace as %q: %w: the kernel keeps this device in its namespace (loopback is one such): pass another device", name, err)
	} else if err != nil {
		return fmt.Errorf("move into the container's network namespace as %q: %w", name, err)
	}
	if before != nil {
		names, err := in.linkNames()
		if err != nil {
			return err
		}
		for _, n := range names {
			if !slices.Contains(before, n) {
				name = n
				break
			}
		}
	}
	idx, err := in.linkIndex(name)
	if err != nil {
		return fmt.Errorf("find %q in the container's network namespace: %w", name, err)
	}
	for _, a := range addrs {
		binary.NativeEndian.PutUint32(a[4:8], uint32(idx)) // ifaddrmsg.ifa_index
		if err := in.do(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, a); err != nil {
			return fmt.Errorf("add back an address of %q: %w", name, err)
		}
	}
	if err := in.do(unix.RTM_NEWLINK, 0, ifinfomsg(idx, unix.IFF_UP, unix.IFF_UP)); err != nil {
		return fmt.Errorf("set %q up: %w", name, err)
	}
	return nil
}

// rtnl is a NETLINK_ROUTE socket, bound to the network namespace it was
// made in.
type rtnl struct {
	fd  int
	seq uint32
}

func newRtnl() (*rtnl, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind netlink socket: %w", err)
	}
	return &rtnl{fd: fd}, nil
}

func (r *rtnl) close() { unix.Close(r.fd) }

// netlinkIn makes a netlink socket in the network namespace nsFd, from a
// thread that enters it and comes back (or, if it cannot, dies with its
// goroutine: a thread left in another namespace is never reused).
func netlinkIn(nsFd int) (*rtnl, error) {
	type result struct {
		r   *rtnl
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("open own network namespace: %w", err)}
			return
		}
		defer self.Close()
		if err := unix.Setns(nsFd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("enter the container's network namespace: %w", err)}
			return
		}
		r, err := newRtnl()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			if r != nil {
				r.close()
			}
			ch <- result{err: fmt.Errorf("return from the container's network namespace: %w", err)}
			return // the thread stays locked and exits with the goroutine
		}
		runtime.UnlockOSThread()
		ch <- result{r, err}
	}()
	res := <-ch
	return res.r, res.err
}

// do sends one request and waits for its acknowledgement.
func (r *rtnl) do(typ uint16, flags uint16, body []byte) error {
	_, err := r.request(typ, flags|unix.NLM_F_ACK, body)
	return err
}

// request sends one request and returns the messages of its answer (a
// dump's parts, or the one reply), having checked the acknowledgement.
func (r *rtnl) request(typ uint16, flags uint16, body []byte) ([]syscall.NetlinkMessage, error) {
	r.seq++
	seq := r.seq
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(b[0:4], uint32(unix.NLMSG_HDRLEN+len(body)))
	binary.NativeEndian.PutUint16(b[4:6], typ)
	binary.NativeEndian.PutUint16(b[6:8], flags|unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(b[8:12], seq)
	b = append(b, body...)
	if err := unix.Sendto(r.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink send: %w", err)
	}
	var out []syscall.NetlinkMessage
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("netlink receive: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return nil, errors.New("netlink: short error message")
				}
				if e := int32(binary.NativeEndian.Uint32(m.Data[:4])); e != 0 {
					return nil, unix.Errno(-e)
				}
				return out, nil
			default:
				out = append(out, m)
				if flags&unix.NLM_F_DUMP == 0 && flags&unix.NLM_F_ACK == 0 {
					return out, nil
				}
			}
		}
	}
}

// linkIndex returns the index of the device called name.
func (r *rtnl) linkIndex(name string) (int, error) {
	msg := rtattr(ifinfomsg(0, 0, 0), unix.IFLA_IFNAME, append([]byte(name), 0))
	msgs, err := r.request(unix.RTM_GETLINK, 0, msg)
	if err != nil {
		return 0, err
	}
	if len(msgs) == 0 || len(msgs[0].Data) < unix.SizeofIfInfomsg {
		return 0, errors.New("netlink: no link in the answer")
	}
	return int(int32(binary.NativeEndian.Uint32(msgs[0].Data[4:8]))), nil
}

// linkNames lists the namespace's device names.
func (r *rtnl) linkNames() ([]string, error) {
	msgs, err := r.request(unix.RTM_GETLINK, unix.NLM_F_DUMP, ifinfomsg(0, 0, 0))
	if err != nil {
		return nil, fmt.Errorf("list network devices: %w", err)
	}
	var names []string
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < unix.SizeofIfInfomsg {
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			return nil, fmt.Errorf("list network devices: %w", err)
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.IFLA_IFNAME {
				names = append(names, strings.TrimRight(string(a.Value), "\x00"))
			}
		}
	}
	return names, nil
}

// permanentGlobalAddrs returns the device's permanent addresses of global
// scope, each as an RTM_NEWADDR body (ifaddrmsg and the address
// attributes; the index is set by the caller).
func (r *rtnl) permanentGlobalAddrs(index int) ([][]byte, error) {
	msgs, err := r.request(unix.RTM_GETADDR, unix.NLM_F_DUMP, make([]byte, unix.SizeofIfAddrmsg))
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	var out [][]byte
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWADDR || len(m.Data) < unix.SizeofIfAddrmsg {
			continue
		}
		family, prefix, flags8, scope := m.Data[0], m.Data[1], m.Data[2], m.Data[3]
		if int(binary.NativeEndian.Uint32(m.Data[4:8])) != index || scope != unix.RT_SCOPE_UNIVERSE {
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			return nil, fmt.Errorf("list addresses: %w", err)
		}
		flags := uint32(flags8)
		msg := []byte{family, prefix, 0, scope, 0, 0, 0, 0}
		for _, a := range attrs {
			switch a.Attr.Type {
			case unix.IFA_FLAGS:
				if len(a.Value) >= 4 {
					flags = binary.NativeEndian.Uint32(a.Value)
				}
			case unix.IFA_ADDRESS, unix.IFA_LOCAL, unix.IFA_BROADCAST:
				msg = rtattr(msg, a.Attr.Type, a.Value)
			}
		}
		if flags&unix.IFA_F_PERMANENT == 0 {
			continue
		}
		// Of the flags, those a request may set; the state ones (such
		// as permanent, which an address without lifetimes is again,
		// or tentative) are the kernel's.
		const settable = unix.IFA_F_NODAD | unix.IFA_F_HOMEADDRESS | unix.IFA_F_MANAGETEMPADDR | unix.IFA_F_NOPREFIXROUTE | unix.IFA_F_MCAUTOJOIN
		out = append(out, rtattr(msg, unix.IFA_FLAGS, binary.NativeEndian.AppendUint32(nil, flags&settable)))
	}
	return out, nil
}

// ifinfomsg is an ifinfomsg for the device index with flags under change.
func ifinfomsg(index int, flags, change uint32) []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	b[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(b[4:8], uint32(int32(index)))
	binary.NativeEndian.PutUint32(b[8:12], flags)
	binary.NativeEndian.PutUint32(b[12:16], change)
	return b
}

// rtattr appends one route attribute, padded to 4 bytes.
func rtattr(b []byte, typ uint16, value []byte) []byte {
	l := unix.SizeofRtAttr + len(value)
	b = binary.NativeEndian.AppendUint16(b, uint16(l))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, value...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// moveNetDevicesTo moves the devices into the network namespace of pid
// (init, already in its namespaces).
func moveNetDevicesTo(pid int, devs []NetDevice) error {
	if len(devs) == 0 {
		return nil
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return fmt.Errorf("linux.netDevices: open the container's network namespace: %w", err)
	}
	defer ns.Close()
	return moveNetDevices(int(ns.Fd()), devs)
}
