package region

import (
	"context"
	"fmt"

	"github.com/anvilmetal/anvil/internal/scripts"
)

// EnsureScripts stores the scripts shipped with Anvil, or brings them up
// to date (keeping the tags and timeouts operators set on them).
func (s *Service) EnsureScripts(ctx context.Context) error {
	for _, b := range scripts.Builtins() {
		if err := s.Store.EnsureScript(ctx, b.Script, b.Text); err != nil {
			return fmt.Errorf("shipped script %s: %w", b.Name, err)
		}
	}
	return nil
}
