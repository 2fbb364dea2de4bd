package agent

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// WriteImage streams the image at img.URL to path, an existing block
// device or file, the way the deploying phase does: the same HTTP client,
// resumed download, decompression, 4 MiB writes, fsync, and SHA-256 and
// length check. limit is the most it may write (0: no limit). Progress
// and resume lines go to log (nil: discarded). It returns the bytes
// written. `anvil bench deploy` measures it.
func WriteImage(ctx context.Context, img agentapi.Image, path string, limit int64, log io.Writer) (int64, error) {
	if log == nil {
		log = io.Discard
	}
	if limit <= 0 {
		limit = math.MaxInt64
	}
	a := &Agent{Console: log, Backoff: time.Second}
	return a.writeImage(ctx, imageHTTPClient(), img.URL, img, path, Disk{Name: filepath.Base(path), Size: limit})
}
