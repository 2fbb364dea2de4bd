package bench

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPLoad GETs url from conc keep-alive connections for d and counts the
// complete 200 answers and the failures. Closed loop: each connection
// sends its next request when the last answer is read, so the figure is
// the server's rate at that concurrency, not an offered rate.
func HTTPLoad(ctx context.Context, url string, d time.Duration, conc int) (ok, failed int) {
	cl := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true},
		Timeout:   5 * time.Second,
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var nOK, nFail atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				if get(ctx, cl, url) {
					nOK.Add(1)
				} else if ctx.Err() == nil {
					nFail.Add(1)
					time.Sleep(10 * time.Millisecond) // no spinning on a dead server
				}
			}
		})
	}
	wg.Wait()
	return int(nOK.Load()), int(nFail.Load())
}

func get(ctx context.Context, cl *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := cl.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && n == resp.ContentLength
}
