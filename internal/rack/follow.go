package rack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
)

// RackAgent begins the User-Agent a rack follows its region with; the
// rest is its version.
const RackAgent = "anvil-rack/"

// Follow keeps the cache in step with the region's boot stream until ctx
// ends: it connects, applies every change, saves the cache to disk after
// each burst, and reconnects with back-off when the region goes away. While
// it is away the cache keeps answering with what it last knew.
func Follow(ctx context.Context, cl *client.Client, c *Cache, log *slog.Logger, synced func()) {
	FollowWith(ctx, cl, c, log, synced, nil)
}

// FollowWith is Follow telling the region more about the rack: the
// addresses it answers DNS at ("dns").
func FollowWith(ctx context.Context, cl *client.Client, c *Cache, log *slog.Logger, synced func(), hello map[string][]string) {
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.Save(); err != nil {
					log.Error("save boot cache", "err", err)
				}
			}
		}
	}()
	// The region lists the racks following it by the name they give.
	host, _ := os.Hostname()
	q := map[string][]string{"op": {"boot_stream"}, "hostname": {host}}
	for k, v := range hello {
		q[k] = v
	}
	backoff := time.Second
	for ctx.Err() == nil {
		start := time.Now()
		err := cl.Stream(ctx, "rack/", q, func(event, data string) error {
			if event != "change" {
				return nil
			}
			var ch Change
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				return fmt.Errorf("bad change from region: %w", err)
			}
			c.Apply(ch)
			if ch.Synced {
				if err := c.Save(); err != nil {
					log.Error("save boot cache", "err", err)
				}
				if synced != nil {
					synced()
				}
			}
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		if err := c.Save(); err != nil {
			log.Error("save boot cache", "err", err)
		}
		if time.Since(start) > time.Minute {
			backoff = time.Second // it was a good connection
		}
		log.Warn("region boot stream lost; answering from the cache", "err", err, "retry_in", backoff, "machines", c.Len())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}
