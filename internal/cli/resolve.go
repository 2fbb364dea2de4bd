package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/anvilmetal/anvil/internal/client"
)

// withMachine runs do with the system id that ref names. ref is tried as a
// system id first, which costs nothing extra in the common case; only if the
// server says 404 is it looked up as a hostname (or FQDN), and do runs again
// with the one machine that has it. It returns the system id it settled on.
func withMachine(ctx context.Context, c *client.Client, ref string, do func(id string) error) (string, error) {
	// These would name the collection, not a machine ("machines//",
	// "machines/./"), and run the op there: show decodes a list, release
	// becomes the bulk release.
	if ref == "" || ref == "." || ref == ".." {
		return ref, fmt.Errorf("no machine has system id or hostname %q", ref)
	}
	err := do(ref)
	if !client.IsNotFound(err) {
		return ref, err
	}
	ms, lerr := c.ListMachines(ctx, url.Values{"hostname": {hostPart(ref)}})
	if lerr != nil {
		return ref, fmt.Errorf("%w; looking %q up as a hostname: %v", err, ref, lerr)
	}
	var ids []string
	for _, m := range ms {
		// A server may match loosely; only an exact name counts.
		if m.Hostname == ref || m.FQDN == ref {
			ids = append(ids, m.SystemID)
		}
	}
	switch {
	case len(ids) == 0:
		return ref, fmt.Errorf("no machine has system id or hostname %q", ref)
	case len(ids) > 1:
		return ref, fmt.Errorf("hostname %q is ambiguous: machines %s have it; use a system id", ref, strings.Join(ids, ", "))
	case ids[0] == ref:
		return ref, err // it is a system id after all; the 404 was about something else
	}
	return ids[0], do(ids[0])
}

// hostPart strips the domain from an FQDN, since MAAS filters on the bare
// hostname.
func hostPart(ref string) string {
	h, _, _ := strings.Cut(ref, ".")
	return h
}
