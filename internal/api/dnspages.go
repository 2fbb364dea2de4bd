package api

import (
	"context"
	"fmt"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/store"
)

// DNSData is what the racks' DNS serves now, built the way the rack
// stream builds it but from the store at once (only machines in a status
// that publishes their names are read): the web pages list and look up
// names from it without asking a DNS server.
func (s *Server) DNSData(ctx context.Context) (dns.Data, error) {
	ms, err := s.store.ListMachines(ctx, store.MachineFilter{Statuses: publishing})
	if err != nil {
		return dns.Data{}, fmt.Errorf("dns data: machines: %w", err)
	}
	feed := newDNSFeed()
	for i := range ms {
		feed.note(&ms[i])
	}
	d, err := s.dnsData(ctx, feed)
	if err != nil {
		return dns.Data{}, fmt.Errorf("dns data: %w", err)
	}
	return d, nil
}
