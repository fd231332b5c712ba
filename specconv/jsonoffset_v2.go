//go:build goexperiment.jsonv2

package specconv

// syntaxOffsetPast is how far past the offending byte encoding/json puts a
// SyntaxError's Offset: built with GOEXPERIMENT=jsonv2 (as make builds the
// runtime), the Offset is that byte's own.
const syntaxOffsetPast = 0
