// Command netbench serves GET /big?bytes=N (N zero bytes, written in 1 MiB
// blocks) on 127.0.0.1 for scripts/bench-network.sh, which compares a
// download through a sandbox's network allowlist with a direct one. It
// prints its port, and exits when its stdin closes.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "netbench:", err)
		os.Exit(1)
	}
	block := make([]byte, 1<<20)
	http.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		if err != nil || n < 0 {
			http.Error(w, "bytes=N", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for n > 0 {
			k := min(n, int64(len(block)))
			if _, err := w.Write(block[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	fmt.Println(l.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	_ = http.Serve(l, nil)
}
