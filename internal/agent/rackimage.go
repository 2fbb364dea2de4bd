package agent

import (
	"context"
	"net/http"
	"strings"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// imageSource prefers the rack that booted the machine for the image: it
// serves images/<sha256> from a verified local cache, fetched once from the
// region for all the machines it boots. The region's URL is the fall-back
// when there is no rack URL or the rack cannot get the image.
func (a *Agent) imageSource(ctx context.Context, hc *http.Client, img agentapi.Image, region string) string {
	if a.Cmdline.Boot == "" || img.SHA256 == "" {
		return region
	}
	u := strings.TrimRight(a.Cmdline.Boot, "/") + "/images/" + img.SHA256
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return region
	}
	resp, err := hc.Do(req)
	if err != nil {
		a.Logf("deploy rack has no image (%v); fetching from the region", err)
		return region
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.Logf("deploy rack answered %s for the image; fetching from the region", resp.Status)
		return region
	}
	return u
}
