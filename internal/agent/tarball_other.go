//go:build !linux

package agent

import "io"

func installRootfs(io.Reader, rootfsTarget) (int64, error) { return 0, errNoRootfs }

func partitionDev(string, string, int) (string, error) { return "", errNoRootfs }
