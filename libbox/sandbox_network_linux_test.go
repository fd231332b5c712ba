package libbox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testServer is an HTTP(S) server on the host's 127.0.0.1 that records
// the paths it was asked for.
type testServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newTestServer(t *testing.T, tlsCert *tls.Certificate) *testServer {
	t.Helper()
	s := &testServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	})
	s.Server = httptest.NewUnstartedServer(h)
	if tlsCert != nil {
		s.TLS = &tls.Config{Certificates: []tls.Certificate{*tlsCert}}
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func (s *testServer) port() string {
	return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port)
}

func (s *testServer) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

// testCA makes a CA, writes it to dir/ca.pem, and a certificate for names
// signed by it.
func testCA(t *testing.T, dir string, names ...string) *tls.Certificate {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nanobox test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func requireCurl(t *testing.T) {
	t.Helper()
	for _, p := range []string{"/usr/bin/curl", "/usr/bin/python3"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("test needs %s on the host (the sandbox sees the host's /usr): %v", p, err)
		}
	}
}

func hasDenial(rep *NetworkReport, name, via, reasonPart string) bool {
	return slices.ContainsFunc(rep.Denied, func(d Denial) bool {
		return d.Name == name && d.Via == via && strings.Contains(d.Reason+" "+d.Rule, reasonPart)
	})
}

// The allowlist holds for cooperative and proxy-ignoring clients alike:
// allowed HTTP and HTTPS pass through the proxy (CONNECT) and
// transparently; denied names get 403 or NXDOMAIN; deny wins over allow;
// a direct connection, a wrong SNI and an unlisted port get nowhere; the
// report names every denial.
func TestSandboxNetworkAllowlist(t *testing.T) {
	requireCurl(t)
	caDir := t.TempDir()
	if err := os.Chmod(caDir, 0o755); err != nil {
		t.Fatal(err)
	}
	web := newTestServer(t, nil)
	api := newTestServer(t, testCA(t, caDir, "api.test"))
	other := newTestServer(t, nil)
	P, TP, OP := web.port(), api.port(), other.port()
	var mu sync.Mutex
	var logged []Denial
	n := AllowDomains("web.test:"+P, "*.web.test:"+P, "api.test:"+TP)
	n.Deny = []string{"bad.web.test"}
	n.AllowPrivateTargets = true
	n.Hosts = map[string]string{"web.test": "127.0.0.1", "x.web.test": "127.0.0.1", "bad.web.test": "127.0.0.1", "api.test": "127.0.0.1"}
	n.OnDenied = func(d Denial) { mu.Lock(); logged = append(logged, d); mu.Unlock() }
	sb := newTestSandbox(t, Options{Network: n, Mounts: []Bind{{Source: caDir, Target: "/ca", ReadOnly: true}}})
	c := "/usr/bin/curl -sS --max-time 20"
	script := strings.Join([]string{
		c + " http://web.test:" + P + "/proxy-http; echo \" rc=$?\"",
		c + " --noproxy '*' http://x.web.test:" + P + "/direct-http; echo \" rc=$?\"",
		c + " --cacert /ca/ca.pem https://api.test:" + TP + "/proxy-https; echo \" rc=$?\"",
		c + " --noproxy '*' --cacert /ca/ca.pem https://api.test:" + TP + "/direct-https; echo \" rc=$?\"",
		`/usr/bin/python3 -c "import urllib.request as u; print(u.build_opener(u.ProxyHandler({})).open('http://web.test:` + P + `/python').read().decode(), end='')"; echo " rc=$?"`,
		c + " -o /dev/null -w 'evil-proxy %{http_code}' http://evil.test:" + P + "/evil-proxy; echo \" rc=$?\"",
		c + " http://evil.test:" + P + "/evil-body; echo",
		c + " --noproxy '*' http://evil.test:" + P + "/evil-direct 2>/dev/null; echo \"evil-direct rc=$?\"",
		c + " -o /dev/null -w 'bad-proxy %{http_code}' http://bad.web.test:" + P + "/bad; echo",
		c + " --noproxy '*' http://127.0.0.1:" + P + "/loopback 2>/dev/null; echo \"loopback rc=$?\"",
		c + " --noproxy '*' --cacert /ca/ca.pem --connect-to evil.test:" + TP + ":api.test:" + TP + " https://evil.test:" + TP + "/sni 2>/dev/null; echo \"sni rc=$?\"",
		c + " -o /dev/null -w 'port-proxy %{http_code}' http://web.test:" + OP + "/port; echo",
	}, "\n")
	res := run(t, sb, script)
	wantRunStatus(t, res, StatusOK)
	out := string(res.Stdout)
	for _, want := range []string{
		"hello /proxy-http rc=0", "hello /direct-http rc=0", "hello /proxy-https rc=0", "hello /direct-https rc=0", "hello /python rc=0",
		"evil-proxy 403 rc=0", "evil.test:" + P + " is not allowed: no allow rule matches it",
		"evil-direct rc=6", "bad-proxy 403", "port-proxy 403",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\nstderr: %s", want, out, res.Stderr)
		}
	}
	for _, rc := range []string{"loopback rc=0", "sni rc=0"} {
		if strings.Contains(out, rc) {
			t.Errorf("%s: the connection went through:\n%s", rc, out)
		}
	}
	if got := web.got(); !slices.Equal(got, []string{"/proxy-http", "/direct-http", "/python"}) {
		t.Errorf("the web server was asked for %v", got)
	}
	if got := api.got(); !slices.Equal(got, []string{"/proxy-https", "/direct-https"}) {
		t.Errorf("the api server was asked for %v", got)
	}
	if got := other.got(); len(got) != 0 {
		t.Errorf("the server on an unlisted port was reached: %v", got)
	}
	rep := res.Report.Network
	if rep == nil {
		t.Fatal("no network report")
	}
	if res.Report.Isolation.Network != NetworkAllowlist {
		t.Errorf("isolation.network %q", res.Report.Isolation.Network)
	}
	for _, d := range []struct{ name, via, reason string }{
		{"evil.test", "proxy", "no allow rule"},
		{"evil.test", "dns", "no allow rule"},
		{"bad.web.test", "proxy", "deny bad.web.test"},
		{"127.0.0.1", "connect", "resolver gives"},
		{"evil.test", "connect", "TLS server name"},
		{"web.test", "proxy", "no allow rule"}, // the unlisted port
	} {
		if !hasDenial(rep, d.name, d.via, d.reason) {
			t.Errorf("report lacks the denial of %s via %s (%s): %+v", d.name, d.via, d.reason, rep.Denied)
		}
	}
	if rep.Connections["web.test"] != 2 || rep.Connections["api.test"] != 2 || rep.Connections["x.web.test"] != 1 {
		t.Errorf("connections %v, want web.test 2, x.web.test 1, api.test 2", rep.Connections)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) == 0 || rep.DeniedTotal < len(rep.Denied) {
		t.Errorf("OnDenied saw %d denials, the report %d (total %d)", len(logged), len(rep.Denied), rep.DeniedTotal)
	}
}

// An allowed name that resolves to a loopback (or private) address is
// refused unless private targets are allowed.
func TestSandboxNetworkPrivateTargets(t *testing.T) {
	requireCurl(t)
	web := newTestServer(t, nil)
	n := AllowDomains("web.test:" + web.port())
	n.Hosts = map[string]string{"web.test": "127.0.0.1"}
	sb := newTestSandbox(t, Options{Network: n})
	c := "/usr/bin/curl -s --max-time 20 "
	res := run(t, sb, c+"-w ' %{http_code}' http://web.test:"+web.port()+"/p; echo; "+c+"--noproxy '*' http://web.test:"+web.port()+"/d; echo \" direct rc=$?\"")
	wantRunStatus(t, res, StatusOK)
	out := string(res.Stdout)
	if !strings.Contains(out, "resolves to 127.0.0.1, a loopback address") || !strings.Contains(out, " 403") || strings.Contains(out, "direct rc=0") {
		t.Errorf("output:\n%s", out)
	}
	if got := web.got(); len(got) != 0 {
		t.Errorf("the server was reached: %v", got)
	}
	if !hasDenial(res.Report.Network, "web.test", "connect", "loopback") || !hasDenial(res.Report.Network, "web.test", "proxy", "loopback") {
		t.Errorf("denials %+v", res.Report.Network.Denied)
	}
}

// SetNetwork changes the policy of a run in progress, for new connections,
// also on a port the sandbox did not listen on before.
func TestSandboxNetworkSetNetwork(t *testing.T) {
	requireCurl(t)
	web := newTestServer(t, nil)
	late := newTestServer(t, nil)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{"web.test": "127.0.0.1", "late.test": "127.0.0.1"}
	n := AllowDomains("web.test:" + web.port())
	n.Hosts, n.AllowPrivateTargets = hosts, true
	sb := newTestSandbox(t, Options{Network: n, Mounts: []Bind{{Source: dir, Target: "/out"}}})
	c := "/usr/bin/curl -s --max-time 20 "
	L := late.port()
	script := c + "-o /dev/null -w 'before %{http_code}\\n' http://late.test:" + L + "/before\n" +
		c + "--noproxy '*' http://late.test:" + L + "/before-direct; echo \"before-direct rc=$?\"\n" +
		"touch /out/ready\n" +
		// Wait for the test's go-ahead (a file), for at most 60 s.
		"i=0; while [ ! -e /out/go ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done\n" +
		c + "http://late.test:" + L + "/after; echo \" rc=$?\"\n" +
		c + "--noproxy '*' http://late.test:" + L + "/after-direct; echo \" rc=$?\"\n" +
		c + "-o /dev/null -w 'web-now %{http_code}\\n' http://web.test:" + web.port() + "/web\n"
	type result struct {
		res *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := sb.Run(context.Background(), "/bin/sh", "-c", script)
		done <- result{res, err}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the run ended before it was ready: %v %+v", r.err, r.res)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the sandbox never got ready")
		}
	}
	n2 := AllowDomains("late.test:" + L)
	n2.Hosts, n2.AllowPrivateTargets = hosts, true
	if err := sb.SetNetwork(n2); err != nil {
		t.Fatal(err)
	}
	if err := sb.SetNetwork(NoNetwork()); err == nil {
		t.Error("SetNetwork changed the mode")
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	wantRunStatus(t, r.res, StatusOK)
	out := string(r.res.Stdout)
	for _, want := range []string{"before 403", "hello /after rc=0", "hello /after-direct rc=0", "web-now 403"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\nstderr: %s", want, out, r.res.Stderr)
		}
	}
	if strings.Contains(out, "before-direct rc=0") {
		t.Errorf("late.test was reached before it was allowed:\n%s", out)
	}
	if got := late.got(); !slices.Equal(got, []string{"/after", "/after-direct"}) {
		t.Errorf("late.test's server was asked for %v", got)
	}
	if rep := r.res.Report.Network; !slices.Equal(rep.Allow, n2.Allow) {
		t.Errorf("report's rules %v, want the new ones", rep.Allow)
	}
	if got := sb.Options().Network.Allow; !slices.Equal(got, n2.Allow) {
		t.Errorf("Options().Network.Allow = %v", got)
	}
}

// Nothing of an allowlist outlives its run: no descriptor of the relay in
// this process, no process or socket holding the sandbox's network
// namespace.
func TestSandboxNetworkNothingLeft(t *testing.T) {
	requireCurl(t)
	n := AllowDomains("web.test")
	sb := newTestSandbox(t, Options{Network: n})
	before := openFds(t)
	res := run(t, sb, "readlink /proc/self/ns/net")
	wantRunStatus(t, res, StatusOK)
	ns := strings.TrimSpace(string(res.Stdout))
	if !strings.HasPrefix(ns, "net:[") {
		t.Fatalf("namespace %q", ns)
	}
	if self, _ := os.Readlink("/proc/self/ns/net"); self == ns {
		t.Fatal("the sandbox shared this process's network namespace")
	}
	if after := openFds(t); after > before {
		t.Errorf("%d descriptors open after the run, %d before", after, before)
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/net"); err == nil && l == ns {
			t.Errorf("process %s is still in the sandbox's network namespace", e.Name())
		}
	}
}

func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
