package libbox

// The kernel side of a network allowlist.
//
// Listening sockets: a socket belongs to the network namespace of the
// thread that created it, for life, whichever process holds it later. So
// init, already in the sandbox's namespace and still holding its
// capabilities there (binding port 80 needs CAP_NET_BIND_SERVICE in the
// user namespace that owns the network namespace), makes them during
// set-up and passes them to the runtime over the sync socket (SCM_RIGHTS),
// with its own network and user namespace files. No setns is done by a Go
// thread: a rootless runtime could not (setns(CLONE_NEWNET) needs
// CAP_SYS_ADMIN in the caller's own user namespace too), and a sandbox's
// start pays no process start for it. Listeners on ports a policy change
// adds are made by a short-lived helper: the runtime binary re-executed
// through the nsenter stage, which joins the user and network namespaces
// from those files before the Go runtime starts, makes the sockets and
// passes them back the same way.
//
// Lifetime: a sandbox's relay runs in the process that called Run. A
// container made by create (the OCI path) gets a supervisor process, the
// runtime binary re-executed as "netproxy" (handled by Main before any CLI
// code), which holds the listeners, relays, serves the control socket and
// exits when init does (it polls init's pidfd); delete kills it and waits
// for it. The listeners pin the network namespace, so nothing of it
// outlives the supervisor.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox/nsenter"
)

// Files in the state directory of an allowlisted container.
const (
	netResolvConf    = "resolv.conf"
	netHosts         = "hosts"
	netControlSock   = "network.sock"
	netSupervisorPid = "netproxy.pid"
)

// netFdsMsg describes the descriptors of a syncNetFds message (which the
// next packet carries, in this order: the UDP socket, the TCP listeners in
// Ports order, the network namespace, the user namespace), or, sent to the
// listener helper, the ports to listen on.
type netFdsMsg struct {
	UDP    bool     `json:"udp,omitempty"`
	Ports  []uint16 `json:"ports,omitempty"`
	NetNS  bool     `json:"netns,omitempty"`
	UserNS bool     `json:"userns,omitempty"`
}

func (m *netFdsMsg) count() int {
	n := len(m.Ports)
	for _, b := range []bool{m.UDP, m.NetNS, m.UserNS} {
		if b {
			n++
		}
	}
	return n
}

// allowlist is the network allowlist of the config, nil without one.
func (c *Config) allowlist() *Network {
	if c.Network != nil && c.Network.mode() == NetworkAllowlist {
		return c.Network
	}
	return nil
}

// proxyEnv are the proxy variables of an allowlisted sandbox's program.
var proxyEnv = []string{
	"HTTP_PROXY=" + ProxyURL, "HTTPS_PROXY=" + ProxyURL, "ALL_PROXY=" + ProxyURL,
	"http_proxy=" + ProxyURL, "https_proxy=" + ProxyURL, "all_proxy=" + ProxyURL,
	"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
}

// withNetworkFiles is cfg as an allowlist needs it: the sandbox's own
// /etc/resolv.conf (the runtime's resolver) and /etc/hosts (localhost
// only, so that no entry of the host's short-circuits the policy), written
// to the state directory dir and bound read-only over the root's; and the
// proxy variables in the program's environment (replacing any of the
// caller's). cfg itself is not modified.
func withNetworkFiles(dir string, cfg *Config) (*Config, error) {
	n := cfg.allowlist()
	if n == nil {
		return cfg, nil
	}
	if _, err := compileNetwork(*n); err != nil {
		return nil, fmt.Errorf("network allowlist: %w", err)
	}
	host := cfg.Hostname
	if host != "" {
		host = " " + host
	}
	files := []struct{ name, dst, data string }{
		{netResolvConf, "/etc/resolv.conf", "# The sandbox's resolver (nanobox-runc network allowlist).\nnameserver 127.0.0.53\noptions ndots:1 attempts:2 timeout:2\n"},
		{netHosts, "/etc/hosts", "127.0.0.1\tlocalhost" + host + "\n::1\tlocalhost ip6-localhost ip6-loopback\n"},
	}
	c := *cfg
	c.Mounts = slices.Clone(cfg.Mounts)
	if c.RootfsTmpfs != nil {
		// A tmpfs root mounted on a directory above dir (a sandbox's is
		// the state root) would hide these files from init: it goes on an
		// empty directory of the container's own instead.
		if rel, err := filepath.Rel(c.Rootfs, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			c.Rootfs = filepath.Join(dir, "rootfs")
			if err := os.Mkdir(c.Rootfs, 0o755); err != nil {
				return nil, fmt.Errorf("network allowlist: %w", err)
			}
		}
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := writeNewFile(path, []byte(f.data), 0o644); err != nil {
			return nil, fmt.Errorf("network allowlist: %w", err)
		}
		c.Mounts = append(c.Mounts, roBind(path, f.dst))
	}
	env := slices.DeleteFunc(slices.Clone(cfg.Process.Env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(proxyEnv, func(p string) bool { return strings.HasPrefix(p, k+"=") })
	})
	c.Process.Env = append(env, proxyEnv...)
	return &c, nil
}

// writeNewFile creates path (which must not exist) with data.
func writeNewFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil { // against the umask
		f.Close()
		return err
	}
	return f.Close()
}

// initNetwork is init's part of an allowlist, in the sandbox's network
// namespace: a namespace it joined must have loopback only; then the
// listeners and the namespace files go to the runtime.
func initNetwork(sock *syncSocket, cfg *Config, newNetNS bool) error {
	n := cfg.allowlist()
	if n == nil {
		return nil
	}
	if !newNetNS {
		ifs, err := net.Interfaces()
		if err != nil {
			return fmt.Errorf("network allowlist: list interfaces: %w", err)
		}
		for _, i := range ifs {
			if i.Flags&net.FlagLoopback == 0 {
				return fmt.Errorf("network allowlist: the container's network namespace has the interface %s: the allowlist needs a namespace with loopback only (podman: --network none; or let the runtime make one)", i.Name)
			}
		}
		if err := loopbackUp(); err != nil {
			return err
		}
	}
	p, err := compileNetwork(*n)
	if err != nil {
		return fmt.Errorf("network allowlist: %w", err)
	}
	fds, msg, err := makeListeners(p.listenPorts(), true)
	if err != nil {
		return err
	}
	defer closeFds(fds)
	for _, ns := range []struct {
		path string
		set  *bool
	}{{"/proc/self/ns/net", &msg.NetNS}, {"/proc/self/ns/user", &msg.UserNS}} {
		fd, err := unix.Open(ns.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			// Without them only the ports of the first policy work.
			continue
		}
		fds = append(fds, fd)
		*ns.set = true
	}
	if err := sock.send(syncMsg{Type: syncNetFds, Net: msg}); err != nil {
		return err
	}
	return sendFds(sock, fds)
}

// initNetListen is the listener helper (the first message is
// syncNetListen): already in the sandbox's user and network namespaces
// (nsenter), it makes listeners on the ports asked for and sends them.
func initNetListen(sock *syncSocket, m *netFdsMsg) error {
	if m == nil || len(m.Ports) == 0 {
		return errors.New("network: no ports to listen on")
	}
	fds, msg, err := makeListeners(m.Ports, false)
	if err != nil {
		return err
	}
	defer closeFds(fds)
	if err := sock.send(syncMsg{Type: syncNetFds, Net: msg}); err != nil {
		return err
	}
	return sendFds(sock, fds)
}

// makeListeners makes the TCP listeners (0.0.0.0:PORT) and, with udp, the
// resolver's UDP socket (127.0.0.53:53), close-on-exec.
func makeListeners(ports []uint16, udp bool) (_ []int, _ *netFdsMsg, retErr error) {
	var fds []int
	defer func() {
		if retErr != nil {
			closeFds(fds)
		}
	}()
	msg := &netFdsMsg{UDP: udp}
	if udp {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("network allowlist: resolver socket: %w", err)
		}
		fds = append(fds, fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: dnsPort, Addr: resolverAddr.As4()}); err != nil {
			return nil, nil, fmt.Errorf("network allowlist: bind the resolver to %s:%d: %w", resolverAddr, dnsPort, err)
		}
	}
	for _, port := range ports {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("network allowlist: listener socket: %w", err)
		}
		fds = append(fds, fd)
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(port)}); err != nil {
			return nil, nil, fmt.Errorf("network allowlist: listen on port %d in the sandbox: %w", port, err)
		}
		if err := unix.Listen(fd, 1024); err != nil {
			return nil, nil, fmt.Errorf("network allowlist: listen on port %d in the sandbox: %w", port, err)
		}
		msg.Ports = append(msg.Ports, port)
	}
	return fds, msg, nil
}

func closeFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// sendFds sends fds in one packet over sock.
func sendFds(sock *syncSocket, fds []int) error {
	if err := unix.Sendmsg(int(sock.f.Fd()), []byte{0}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("sync socket: send descriptors: %w", err)
	}
	return nil
}

// recvFds receives the packet of exactly n descriptors that sendFds sent.
func recvFds(sock *syncSocket, n int) ([]int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*n))
	for {
		_, oobn, flags, _, err := unix.Recvmsg(int(sock.f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sync socket: receive descriptors: %w", err)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, fmt.Errorf("sync socket: receive descriptors: %w", err)
		}
		var fds []int
		for i := range msgs {
			got, err := unix.ParseUnixRights(&msgs[i])
			if err == nil {
				fds = append(fds, got...)
			}
		}
		if len(fds) != n || flags&unix.MSG_CTRUNC != 0 {
			closeFds(fds)
			return nil, fmt.Errorf("sync socket: expected %d descriptors, got %d", n, len(fds))
		}
		return fds, nil
	}
}

// recvNetFiles receives the descriptors m describes.
func recvNetFiles(sock *syncSocket, m *netFdsMsg, idmaps *Config) (*netFiles, error) {
	if m == nil {
		return nil, errors.New("sync: network descriptors message without a description")
	}
	fds, err := recvFds(sock, m.count())
	if err != nil {
		return nil, err
	}
	return netFilesOf(fds, m, idmaps), nil
}

// netFilesOf wraps fds, laid out as m describes.
func netFilesOf(fds []int, m *netFdsMsg, idmaps *Config) *netFiles {
	f := &netFiles{}
	i := 0
	next := func(name string) *os.File {
		file := os.NewFile(uintptr(fds[i]), name)
		i++
		return file
	}
	if m.UDP {
		f.udp = next("resolver")
	}
	for _, p := range m.Ports {
		f.tcp = append(f.tcp, next("listener:"+strconv.Itoa(int(p))))
		f.ports = append(f.ports, p)
	}
	if m.NetNS {
		f.ns = &netNamespaces{net: next("netns"), cfg: idmaps}
		if m.UserNS {
			f.ns.user = next("userns")
		}
	} else if m.UserNS {
		next("userns").Close()
	}
	return f
}

// netNamespaces are a sandbox's network and user namespaces, for the
// listener helper.
type netNamespaces struct {
	net, user *os.File
	// cfg has the sandbox's namespaces and id maps, for sealedSelfExe.
	cfg *Config
}

func (ns *netNamespaces) close() {
	if ns == nil {
		return
	}
	for _, f := range []*os.File{ns.net, ns.user} {
		if f != nil {
			f.Close()
		}
	}
	ns.net, ns.user = nil, nil
}

// listen makes TCP listeners on ports in the sandbox's network namespace,
// through the helper.
func (ns *netNamespaces) listen(ports []uint16) (*netFiles, error) {
	if ns.net == nil {
		return nil, errors.New("the sandbox's network namespace is not known")
	}
	cfg := ns.cfg
	if cfg == nil {
		cfg = &Config{}
	}
	exe, err := sealedSelfExe(cfg)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	sp := newSpawnSpec(devnull, devnull, devnull, nil)
	if ns.user != nil {
		sp.joins = append(sp.joins, nsenter.Join{Kind: "user", Path: "/proc/self/fd/" + strconv.Itoa(sp.add(ns.user))})
	}
	sp.joins = append(sp.joins, nsenter.Join{Kind: "net", Path: "/proc/self/fd/" + strconv.Itoa(sp.add(ns.net))})
	sp.exe = exe
	child, err := sp.start()
	if err != nil {
		return nil, err
	}
	defer func() {
		child.reap()
		child.kill()
	}()
	if err := child.sock.send(syncMsg{Type: syncNetListen, Net: &netFdsMsg{Ports: ports}}); err != nil {
		return nil, err
	}
	m, err := child.sock.expect(syncNetFds)
	if err != nil {
		return nil, err
	}
	files, err := recvNetFiles(child.sock, m.Net, nil)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(files.ports, ports) {
		files.close()
		return nil, fmt.Errorf("the listener helper listened on %v, not %v", files.ports, ports)
	}
	return files, nil
}

// idMapsOf is the part of cfg sealedSelfExe looks at.
func idMapsOf(cfg *Config) *Config {
	return &Config{Namespaces: slices.Clone(cfg.Namespaces), UIDMappings: slices.Clone(cfg.UIDMappings)}
}

// ---- The control socket

// netControlReq is one request on the control socket (one JSON line).
type netControlReq struct {
	// Op is "get" (the policy), "set" (replace the rules with Network's)
	// or "report" (the network report so far).
	Op      string   `json:"op"`
	Network *Network `json:"network,omitempty"`
}

type netControlResp struct {
	Error   string         `json:"error,omitempty"`
	Network *Network       `json:"network,omitempty"`
	Report  *NetworkReport `json:"report,omitempty"`
}

// listenControl makes the control socket in dir. The path is reached
// through an fd of dir: a state root may be deeper than sun_path allows.
func listenControl(dir string) (*net.UnixListener, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	path := "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + netControlSock
	old := unix.Umask(0o077)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("network control socket: %w", err)
	}
	// The socket file stays until the state directory goes.
	l.SetUnlinkOnClose(false)
	return l, nil
}

// serveControl answers control requests until l is closed. Only the
// runtime's own user (or root) is served.
func serveControl(l *net.UnixListener, r *netRelay, onSet func(*Network)) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		go func() {
			defer c.Close()
			if !peerAllowed(c) {
				return
			}
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			var req netControlReq
			dec := json.NewDecoder(io.LimitReader(c, 4<<20))
			resp := netControlResp{}
			if err := dec.Decode(&req); err != nil {
				resp.Error = "bad request: " + err.Error()
			} else {
				resp = r.control(&req, onSet)
			}
			_ = json.NewEncoder(c).Encode(resp)
		}()
	}
}

// peerAllowed: the peer is root or this process's user.
func peerAllowed(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	return err == nil && cred != nil && (cred.Uid == 0 || int(cred.Uid) == os.Geteuid())
}

func (r *netRelay) control(req *netControlReq, onSet func(*Network)) netControlResp {
	switch req.Op {
	case "get":
		n := r.policy.Load().spec.clone()
		return netControlResp{Network: &n}
	case "report":
		return netControlResp{Report: r.report()}
	case "set":
		if req.Network == nil {
			return netControlResp{Error: "set: no network given"}
		}
		n := *req.Network
		if n.mode() != NetworkAllowlist {
			return netControlResp{Error: fmt.Sprintf("network mode %s: a running sandbox's allowlist can change its rules, not its mode", n.mode())}
		}
		p, err := compileNetwork(n)
		if err != nil {
			return netControlResp{Error: err.Error()}
		}
		if err := r.setPolicy(p); err != nil {
			return netControlResp{Error: err.Error()}
		}
		if onSet != nil {
			onSet(&n)
		}
		cur := p.spec.clone()
		return netControlResp{Network: &cur}
	}
	return netControlResp{Error: fmt.Sprintf("unknown op %q", req.Op)}
}

// netControl sends one request to the control socket in dir.
func netControl(dir string, req netControlReq) (*netControlResp, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	path := "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + netControlSock
	c, err := net.DialTimeout("unix", path, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("reach the network relay of the container: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return nil, fmt.Errorf("network relay: %w", err)
	}
	var resp netControlResp
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&resp); err != nil {
		return nil, fmt.Errorf("network relay: no answer: %w", err)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}

// Network returns the network policy in force in a container with a
// network allowlist (it may have changed since create: SetNetwork).
func (c *Container) Network() (Network, error) {
	if c.st.Config.allowlist() == nil {
		return Network{}, fmt.Errorf("container %s has no network allowlist", c.st.ID)
	}
	resp, err := netControl(c.dir, netControlReq{Op: "get"})
	if err != nil {
		return Network{}, fmt.Errorf("container %s: %w", c.st.ID, err)
	}
	return *resp.Network, nil
}

// SetNetwork replaces the rules of a container's network allowlist; new
// connections and queries follow them at once. The mode cannot change.
func (c *Container) SetNetwork(n Network) error {
	if c.st.Config.allowlist() == nil {
		return fmt.Errorf("container %s has no network allowlist: its network cannot change while it runs", c.st.ID)
	}
	if c.Status() == Stopped {
		return fmt.Errorf("container %s %w", c.st.ID, ErrStopped)
	}
	n.OnDenied = nil
	if _, err := netControl(c.dir, netControlReq{Op: "set", Network: &n}); err != nil {
		return fmt.Errorf("container %s: %w", c.st.ID, err)
	}
	return nil
}

// NetworkReport returns the denials and connection counts of a
// container's network allowlist so far.
func (c *Container) NetworkReport() (*NetworkReport, error) {
	if c.st.Config.allowlist() == nil {
		return nil, fmt.Errorf("container %s has no network allowlist", c.st.ID)
	}
	resp, err := netControl(c.dir, netControlReq{Op: "report"})
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", c.st.ID, err)
	}
	return resp.Report, nil
}

// ---- The supervisor of a container's allowlist

// envNetSupervisor carries the supervisor's configuration (netSupervisorConfig
// as JSON); with os.Args[1] == "netproxy" it makes Main run the supervisor.
const envNetSupervisor = "_NANOBOX_NETPROXY"

// netSupervisorEnv is the supervisor's whole environment: its
// configuration, and no huge pages for its Go heap (nsenter/thp.c), since
// it lives as long as the sandbox.
func netSupervisorEnv(conf []byte) []string {
	return []string{envNetSupervisor + "=" + string(conf), "GODEBUG=" + noHugePages}
}

// netSupervisorConfig tells the supervisor what its descriptors are: 0 is
// /dev/null, 1 and 2 the log (or /dev/null), 3 init's pidfd, 4 the control
// socket, then the network descriptors as Fds describes.
type netSupervisorConfig struct {
	ID      string    `json:"id"`
	Network Network   `json:"network"`
	Fds     netFdsMsg `json:"fds"`
	// LogJSON writes log lines as JSON objects (--log-format json).
	LogJSON bool `json:"logJSON,omitempty"`
	// IDMaps are the container's namespaces and uid maps.
	IDMaps *Config `json:"idMaps,omitempty"`
}

// startNetSupervisor starts the supervisor of c's allowlist with files
// (which it closes) and records its pid in the state directory.
func (c *Container) startNetSupervisor(files *netFiles, opts CreateOpts) error {
	defer files.close()
	ctl, err := listenControl(c.dir)
	if err != nil {
		return err
	}
	defer ctl.Close()
	ctlFile, err := ctl.File()
	if err != nil {
		return fmt.Errorf("network control socket: %w", err)
	}
	defer ctlFile.Close()
	pidfd, err := c.pidfd()
	if err != nil {
		return err
	}
	pidfdFile := os.NewFile(uintptr(pidfd), "pidfd")
	defer pidfdFile.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf := devnull
	if opts.NetworkLog != nil {
		logf = opts.NetworkLog
	}
	cfg := netSupervisorConfig{ID: c.st.ID, Network: c.st.Config.Network.clone(), LogJSON: opts.NetworkLogJSON, IDMaps: idMapsOf(c.st.Config)}
	cfg.Network.OnDenied = nil
	fds := []*os.File{devnull, logf, logf, pidfdFile, ctlFile}
	if files.udp != nil {
		fds = append(fds, files.udp)
		cfg.Fds.UDP = true
	}
	fds = append(fds, files.tcp...)
	cfg.Fds.Ports = files.ports
	if files.ns != nil && files.ns.net != nil {
		fds = append(fds, files.ns.net)
		cfg.Fds.NetNS = true
		if files.ns.user != nil {
			fds = append(fds, files.ns.user)
			cfg.Fds.UserNS = true
		}
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	proc, err := os.StartProcess("/proc/self/exe", []string{"nanobox-runc", "netproxy", c.st.ID}, &os.ProcAttr{
		Env:   netSupervisorEnv(conf),
		Files: fds,
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("start the network supervisor: %w", err)
	}
	pid := proc.Pid
	_ = proc.Release() // not waited for: it outlives this process
	ps, err := readProcStat(pid)
	if err != nil {
		return fmt.Errorf("network supervisor exited at once: %w", err)
	}
	return writeNewFile(filepath.Join(c.dir, netSupervisorPid), []byte(fmt.Sprintf("%d %d\n", pid, ps.StartTime)), 0o600)
}

// stopNetSupervisor kills the supervisor of the container in dir, if it
// has one, and waits until it is gone (it is not our child).
func stopNetSupervisor(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, netSupervisorPid))
	if err != nil {
		return nil
	}
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(string(b), "%d %d", &pid, &start); err != nil || pid <= 0 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil // gone
	}
	defer unix.Close(fd)
	if ps, err := readProcStat(pid); err != nil || ps.StartTime != start {
		return nil
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("stop the network supervisor %d: %w", pid, err)
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, err := unix.Poll(fds, 100)
		if n > 0 {
			return nil
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("wait for the network supervisor %d: %w", pid, err)
		}
	}
	return fmt.Errorf("the network supervisor %d did not exit within 10s of SIGKILL", pid)
}

// netSupervisorMain is the supervisor process; it returns the exit status.
func netSupervisorMain() int {
	var cfg netSupervisorConfig
	if err := json.Unmarshal([]byte(os.Getenv(envNetSupervisor)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "nanobox-runc netproxy:", err)
		return 1
	}
	os.Unsetenv(envNetSupervisor)
	signal.Ignore(unix.SIGHUP, unix.SIGINT, unix.SIGPIPE)
	logOut := os.Stderr
	logf := func(level, msg string) {
		now := time.Now()
		if cfg.LogJSON {
			b, _ := json.Marshal(map[string]string{"level": level, "msg": msg, "time": now.Format(time.RFC3339Nano)})
			fmt.Fprintf(logOut, "%s\n", b)
			return
		}
		fmt.Fprintf(logOut, "time=%q level=%s msg=%q\n", now.Format(time.RFC3339Nano), level, msg)
	}
	p, err := compileNetwork(cfg.Network)
	if err != nil {
		logf("error", "network supervisor of "+cfg.ID+": "+err.Error())
		return 1
	}
	n := cfg.Fds.count()
	fds := make([]int, n)
	for i := range fds {
		fds[i] = 5 + i
	}
	files := netFilesOf(fds, &cfg.Fds, cfg.IDMaps)
	pidfd := 3
	ctlFile := os.NewFile(4, "control")
	l, err := net.FileListener(ctlFile)
	ctlFile.Close()
	if err != nil {
		files.close()
		logf("error", "network supervisor of "+cfg.ID+": control socket: "+err.Error())
		return 1
	}
	id := cfg.ID
	relay, err := newNetRelay(p, files, func(d Denial) {
		logf("warning", fmt.Sprintf("container %s: network: denied %s", id, DescribeDenial(d)))
	})
	if err != nil {
		logf("error", "network supervisor of "+cfg.ID+": "+err.Error())
		return 1
	}
	go serveControl(l.(*net.UnixListener), relay, nil)
	// Until init exits: a pidfd polls readable then.
	pfds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfds, -1)
		if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
			break
		}
	}
	l.Close()
	relay.close()
	return 0
}

// DescribeDenial is a denial in one line, for logs: "NAME:PORT (VIA): REASON".
func DescribeDenial(d Denial) string {
	what := d.Name
	if d.Port != 0 {
		what += ":" + strconv.Itoa(d.Port)
	}
	s := fmt.Sprintf("%s (%s): %s", what, d.Via, d.Reason)
	return s
}
