package main

import "testing"

func TestParseTTYSize(t *testing.T) {
	for _, tc := range []struct {
		in         string
		rows, cols uint16
		ok         bool
	}{
		{"24x80", 24, 80, true},
		{"1x1", 1, 1, true},
		{"65535x65535", 65535, 65535, true},
		{"0x80", 0, 0, false},
		{"24x0", 0, 0, false},
		{"65536x80", 0, 0, false},
		{"24X80", 0, 0, false},
		{"24", 0, 0, false},
		{"-1x80", 0, 0, false},
		{"24x80x1", 0, 0, false},
		{"", 0, 0, false},
	} {
		r, c, err := parseTTYSize(tc.in)
		if (err == nil) != tc.ok || r != tc.rows || c != tc.cols {
			t.Errorf("parseTTYSize(%q) = %d, %d, %v; want %d, %d, ok %v", tc.in, r, c, err, tc.rows, tc.cols, tc.ok)
		}
	}
}
