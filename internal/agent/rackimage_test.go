package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

func TestImageSourcePrefersTheRack(t *testing.T) {
	have := "aa11"
	rack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/images/"+have {
			http.NotFound(w, r)
		}
	}))
	defer rack.Close()
	a := &Agent{Console: io.Discard}
	region := "http://region/MAAS/api/2.0/images/"
	ctx := context.Background()
	if got := a.imageSource(ctx, rack.Client(), agentapi.Image{SHA256: have}, region+have); got != region+have {
		t.Fatalf("without anvil.boot: %s", got)
	}
	a.Cmdline.Boot = rack.URL
	if got := a.imageSource(ctx, rack.Client(), agentapi.Image{SHA256: have}, region+have); got != rack.URL+"/images/"+have {
		t.Fatalf("rack has it: %s", got)
	}
	if got := a.imageSource(ctx, rack.Client(), agentapi.Image{SHA256: "bb22"}, region+"bb22"); got != region+"bb22" {
		t.Fatalf("rack lacks it: %s", got)
	}
}
