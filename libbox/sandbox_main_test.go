package libbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary be the sandboxes' init, as libbox.Main
// documents for every program that embeds libbox.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}
