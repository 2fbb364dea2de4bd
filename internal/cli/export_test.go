package cli

import "io"

// SetTerminal makes the CLI take every writer for a terminal (or none),
// for tests of the progress line; it returns the undo.
func SetTerminal(yes bool) (restore func()) {
	old := isTerminal
	isTerminal = func(io.Writer) bool { return yes }
	return func() { isTerminal = old }
}

// Tarball and Gzip build test images: a small root filesystem tarball,
// and the gzip of some bytes.
var (
	Tarball = tarball
	Gzip    = gz
)
