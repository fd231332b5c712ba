//go:build !goexperiment.jsonv2

package specconv

// syntaxOffsetPast is how far past the offending byte the default
// encoding/json puts a SyntaxError's Offset: it counts the bytes read,
// that one included.
const syntaxOffsetPast = 1
