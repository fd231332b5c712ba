package main

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "64m": 64 << 20, "64M": 64 << 20, "64mb": 64 << 20, "64MiB": 64 << 20,
		"2g": 2 << 30, "1t": 1 << 40, "512k": 512 << 10, "-1": -1, " 10 ": 10,
		"1.5g": 3 << 29, "1p": 1 << 50, "100 MiB": 100 << 20,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-2", "1e3", "m", "99999999999t", "0x10", "1.2.3k"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}
