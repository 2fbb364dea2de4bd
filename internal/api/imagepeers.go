package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/images"
)

// Regions sharing one PostgreSQL database keep image bytes in their own
// data directories: an image is complete in the database once one region
// has it. A region asked for bytes it lacks fetches them from the regions
// that answer, checks them against the SHA-256 and size, keeps them and
// serves them, so that a rack following any region can deploy any image.

// PeerHeader marks a request from another region: it is answered from
// local bytes only, so two regions lacking an image never ask each other
// in a loop.
const PeerHeader = "X-Anvil-Region"

// regionFreshness is how recently a region must have been seen to be asked.
const regionFreshness = 5 * time.Minute

// fetchFromPeers puts image sum (size bytes) in place from another
// region. Callers hold imgs.Lock(sum).
func (s *Server) fetchFromPeers(ctx context.Context, imgs *images.Store, sum string, size int64) error {
	peers, err := s.store.Regions(ctx, time.Now().Add(-regionFreshness))
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range peers {
		if p == s.opts.Self || s.opts.Self == "" {
			continue
		}
		err := s.fetchFrom(ctx, imgs, p, sum, size)
		if err == nil {
			s.log.Info("image fetched from another region", "sha256", sum, "region", p, "bytes", size)
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", p, err))
	}
	if len(errs) == 0 {
		return errors.New("no other region is known to have it")
	}
	return errors.Join(errs...)
}

func (s *Server) fetchFrom(ctx context.Context, imgs *images.Store, peer, sum string, size int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(peer, "/")+"/api/2.0/images/"+sum, nil)
	if err != nil {
		return err
	}
	req.Header.Set(PeerHeader, s.opts.Self)
	res, err := s.peerHTTP().Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %s", res.Status)
	}
	tmp, err := imgs.Receive(res.Body)
	if err != nil {
		return err
	}
	return imgs.Commit(tmp, sum, size) // checks the SHA-256 and size, or drops the bytes
}

func (s *Server) peerHTTP() *http.Client {
	if s.opts.PeerHTTP != nil {
		return s.opts.PeerHTTP
	}
	return http.DefaultClient
}
