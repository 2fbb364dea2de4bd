//go:build !linux

package agent

import (
	"context"
	"io"
)

func installLayout(context.Context, io.Reader, layoutJob) (int64, error) { return 0, errNoRootfs }
