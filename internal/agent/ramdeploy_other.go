//go:build !linux

package agent

import "io"

func extractTar(io.Reader, string) (int64, error) { return 0, errNoRootfs }
