// Command data_analysis runs analysis code over a data set with the
// data-analysis preset: the input read-only, the output read-write, no
// network.
//
//	go run ./examples/data_analysis
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

const script = `
total=0; n=0
while IFS=, read -r city temp; do
	[ "$city" = city ] && continue
	total=$((total + temp)); n=$((n + 1))
done </input/temperatures.csv
echo "mean $((total / n)) over $n cities" >/output/summary.txt
touch /input/tampered 2>/dev/null && echo "input is writable!" >&2
exit 0
`

func main() {
	libbox.Main()
	in, err := os.MkdirTemp("", "analysis-in-")
	check(err)
	defer os.RemoveAll(in)
	out, err := os.MkdirTemp("", "analysis-out-")
	check(err)
	defer os.RemoveAll(out)
	check(os.Chmod(in, 0o755))
	check(os.WriteFile(filepath.Join(in, "temperatures.csv"), []byte("city,temp\nOslo,4\nLima,19\nPerth,25\n"), 0o644))

	sb, err := libbox.New(libbox.DataAnalysis(in, out))
	check(err)
	res, err := sb.Run(context.Background(), "sh", "-c", script)
	check(err)
	fmt.Printf("status %s, stderr %q\n", res.Report.Status, res.Stderr)
	summary, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	check(err)
	fmt.Print("output: ", string(summary))
	for _, n := range []libbox.LimitName{libbox.LimitMemory, libbox.LimitPids} {
		l := res.Report.Limits[n]
		fmt.Printf("limit %s: %s by %s\n", n, l.Status, l.Mechanism)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "data_analysis:", err)
		os.Exit(1)
	}
}
