package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// testAddDNSDataHoldsName: while one AddDNSData is between its check and
// its insert, a second on the same name (new to both) sees the first's
// record once it may look, and so can refuse it; nothing of the refused
// one is stored.
func testAddDNSDataHoldsName(t *testing.T, s store.Store) {
	ctx := t.Context()
	name := store.DNSResource{Name: "held", DomainID: 0}
	inside := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, _, err := s.AddDNSData(ctx, name, store.DNSData{Type: "TXT", Data: "one"}, func(store.DNSResource, []store.DNSData) error {
			close(inside)
			time.Sleep(300 * time.Millisecond) // the second arrives meanwhile
			return nil
		})
		first <- err
	}()
	<-inside
	refused := errors.New("a CNAME stands alone")
	var saw []store.DNSData
	_, _, err := s.AddDNSData(ctx, name, store.DNSData{Type: "CNAME", Data: "elsewhere"}, func(_ store.DNSResource, held []store.DNSData) error {
		if saw = held; len(held) > 0 {
			return refused
		}
		return nil
	})
	if err1 := <-first; err1 != nil {
		t.Fatalf("first add: %v", err1)
	}
	if !errors.Is(err, refused) || len(saw) != 1 || saw[0].Type != "TXT" {
		t.Fatalf("second add: %v, saw %+v; want it refused, seeing the first's TXT", err, saw)
	}
	data, _ := s.ListDNSData(ctx)
	rs, _ := s.ListDNSResources(ctx)
	n := 0
	for _, r := range rs {
		if r.Name == "held" {
			n++
		}
	}
	if len(data) != 1 || n != 1 {
		t.Fatalf("stored %+v and %d names", data, n)
	}
	// A refused add to a new name leaves no name behind.
	if _, _, err := s.AddDNSData(ctx, store.DNSResource{Name: "never"}, store.DNSData{Type: "TXT", Data: "x"},
		func(store.DNSResource, []store.DNSData) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("refused add: %v", err)
	}
	if rs, _ := s.ListDNSResources(ctx); len(rs) != 1 {
		t.Fatalf("after a refused add: %+v", rs)
	}
}
