// Command registry is a read-only OCI distribution server for the critest
// run (scripts/critest.sh): it serves single-layer images made from local
// files, so that containerd's CRI plugin can pull the images critest asks
// for with no registry reachable.
//
//	registry -addr 127.0.0.1:5000 REPO:TAG=LAYER.tar=CONFIG.json...
//
// LAYER.tar is an uncompressed layer; CONFIG.json is the image config's
// "config" object (Env, Cmd, User...). Manifests are found by tag or by
// digest, blobs by digest; HEAD and GET only.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
)

const (
	manifestType = "application/vnd.oci.image.manifest.v1+json"
	configType   = "application/vnd.oci.image.config.v1+json"
	layerType    = "application/vnd.oci.image.layer.v1.tar"
)

type blob struct {
	data      []byte
	mediaType string
}

type registry struct {
	blobs     map[string]blob
	manifests map[string]string // "repo@tag" or "repo@digest" -> digest
}

func (r *registry) put(data []byte, mediaType string) (string, int) {
	sum := sha256.Sum256(data)
	d := "sha256:" + hex.EncodeToString(sum[:])
	r.blobs[d] = blob{data, mediaType}
	return d, len(data)
}

// add serves REPO:TAG from a layer tar and a config object.
func (r *registry) add(arg string) error {
	ref, files, ok := strings.Cut(arg, "=")
	layerPath, configPath, ok2 := strings.Cut(files, "=")
	i := strings.LastIndex(ref, ":")
	if !ok || !ok2 || i <= 0 {
		return fmt.Errorf("image %q: want REPO:TAG=LAYER.tar=CONFIG.json", arg)
	}
	repo, tag := ref[:i], ref[i+1:]
	layer, err := os.ReadFile(layerPath)
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	cfg, err := os.ReadFile(configPath)
	if err != nil {
		return fmt.Errorf("image %s: %w", ref, err)
	}
	if !json.Valid(cfg) {
		return fmt.Errorf("image %s: %s is not JSON", ref, configPath)
	}
	layerDigest, layerSize := r.put(layer, layerType)
	image, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux", "created": "2024-01-01T00:00:00Z",
		"config": json.RawMessage(cfg),
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	if err != nil {
		return err
	}
	configDigest, configSize := r.put(image, configType)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     manifestType,
		"config":        map[string]any{"mediaType": configType, "digest": configDigest, "size": configSize},
		"layers":        []any{map[string]any{"mediaType": layerType, "digest": layerDigest, "size": layerSize}},
	})
	if err != nil {
		return err
	}
	md, _ := r.put(manifest, manifestType)
	r.manifests[repo+"@"+tag] = md
	r.manifests[repo+"@"+md] = md
	return nil
}

func (r *registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		http.Error(w, "read-only registry", http.StatusMethodNotAllowed)
		return
	}
	path, ok := strings.CutPrefix(req.URL.Path, "/v2/")
	if !ok {
		http.NotFound(w, req)
		return
	}
	if path == "" {
		w.WriteHeader(http.StatusOK)
		return
	}
	var d, code string
	if i := strings.LastIndex(path, "/manifests/"); i > 0 {
		d, code = r.manifests[path[:i]+"@"+path[i+len("/manifests/"):]], "MANIFEST_UNKNOWN"
	} else if i := strings.LastIndex(path, "/blobs/"); i > 0 {
		d, code = path[i+len("/blobs/"):], "BLOB_UNKNOWN"
	}
	b, ok := r.blobs[d]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"errors":[{"code":%q,"message":"not served here"}]}`, code)
		return
	}
	w.Header().Set("Content-Type", b.mediaType)
	w.Header().Set("Docker-Content-Digest", d)
	w.Header().Set("Content-Length", strconv.Itoa(len(b.data)))
	if req.Method == http.MethodGet {
		_, _ = w.Write(b.data)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:5000", "address to listen on")
	flag.Parse()
	if flag.NArg() == 0 {
		return errors.New("no images given: registry [-addr ADDR] REPO:TAG=LAYER.tar=CONFIG.json...")
	}
	r := &registry{blobs: map[string]blob{}, manifests: map[string]string{}}
	for _, a := range flag.Args() {
		if err := r.add(a); err != nil {
			return err
		}
	}
	return http.ListenAndServe(*addr, r)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}
