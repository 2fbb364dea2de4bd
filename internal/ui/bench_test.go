package ui_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// BenchmarkMachineList10k measures the machine list's pages over HTTP with
// 10,000 machines on SQLite: the first page, a filtered page, a sort by a
// column other than the hostname, and a page far down the list. Creating
// the machines takes a minute; run with
//
//	go test -run '^$' -bench MachineList10k -benchtime 200x ./internal/ui/
func BenchmarkMachineList10k(b *testing.B) {
	s := start(b)
	ctx := context.Background()
	now := time.Now().UTC()
	statuses := []machine.Status{machine.Ready, machine.Deployed, machine.New, machine.Commissioning, machine.Broken}
	for i := range 10000 {
		m := &machine.Machine{
			SystemID: fmt.Sprintf("m%05d", i), Hostname: fmt.Sprintf("node-%05d", i), Architecture: "amd64/generic",
			Status: statuses[i%len(statuses)], PowerType: "manual", PowerState: machine.PowerOff, Zone: "default", Pool: "default",
			CPUCount: 8 + i%64, Memory: int64(16384 + i%8*1024), Storage: 480000,
			Interfaces: []machine.Interface{{Name: "eth0", MAC: fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", byte(i>>24), byte(i>>16), byte(i>>8), byte(i)), Boot: true}},
			Created:    now, Updated: now,
		}
		if err := s.srv.Store.CreateMachine(ctx, m, nil); err != nil {
			b.Fatal(err)
		}
		// Every machine was seen with an address: the list shows it.
		ip := fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i))
		if err := s.srv.Store.NoteDiscovery(ctx, store.Discovery{MAC: m.Interfaces[0].MAC, IP: ip, LastWhat: "dhcp ack " + ip}); err != nil {
			b.Fatal(err)
		}
	}
	// What the list re-reads every few seconds for the addresses.
	b.Run("sightings", func(b *testing.B) {
		for b.Loop() {
			if ss, err := s.srv.Store.MachineSightings(ctx, nil); err != nil || len(ss) != 10000 {
				b.Fatalf("%d sightings, %v", len(ss), err)
			}
		}
	})
	c := newClient(b)
	s.login(c, "ada", adaPass)
	for _, q := range []string{"", "status=deployed&zone=default", "sort=cpu&dir=desc", "q=node-09", "page=150"} {
		b.Run("rows?"+q, func(b *testing.B) { s.latencies(b, c, "/MAAS/machines/rows?"+q) })
	}
}
