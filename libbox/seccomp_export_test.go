package libbox

// Hooks for the external benchmark (seccomp_bench_test.go), which needs
// specconv's default profile and so cannot live in package libbox.

// CompileSeccompForTest compiles s and returns the number of BPF
// instructions and an install function for the calling thread.
func CompileSeccompForTest(s *Seccomp) (int, func() error, error) {
	p, err := compileSeccomp(s)
	if err != nil {
		return 0, nil, err
	}
	return len(p.filter), func() error { _, err := p.install(); return err }, nil
}
