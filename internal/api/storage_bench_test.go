package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

// BenchmarkListMachinesStorage lists 2,000 machines over HTTP on SQLite,
// each commissioned with two disks, with and without an lvm layout
// stored, to see what rendering the storage model costs; cold-ms is the
// first list (nothing cached), bytes/machine the answer's size:
//
//	go test ./internal/api/ -run '^$' -bench ListMachinesStorage -benchtime 5x
func BenchmarkListMachinesStorage(b *testing.B) {
	for _, layout := range []string{"none", "lvm"} {
		b.Run(layout, func(b *testing.B) {
			const n = 2000
			e := start(&testing.T{}, "")
			ctx := context.Background()
			inv := storageInventory("02:00:00:00:00:00", "uefi", disk("sda", "A", 100*gib, true), disk("sdb", "B", 500*gib, false))
			cfg, _ := machine.LayStorage(nil, *inv, "lvm")
			for i := 0; i < n; i++ {
				m := &machine.Machine{
					Hostname: fmt.Sprintf("b-%d", i), Architecture: "amd64/generic", Domain: "maas", PowerType: "manual",
					Interfaces: []machine.Interface{{Name: "eth0", MAC: fmt.Sprintf("02:00:00:%02x:%02x:%02x", byte(i>>16), byte(i>>8), byte(i)), Boot: true}},
					Inventory:  inv,
				}
				if layout == "lvm" {
					m.StorageConfig = cfg
				}
				if err := e.srv.Store.CreateMachine(ctx, m, nil); err != nil {
					b.Fatal(err)
				}
			}
			req, _ := http.NewRequest("GET", e.base+"api/2.0/machines/", nil)
			req.Header.Set("Authorization", oauth(e.admin))
			list := func() int64 {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				size, _ := io.Copy(io.Discard, resp.Body)
				return size
			}
			t0 := time.Now()
			size := list()
			cold := time.Since(t0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.SetBytes(list())
			}
			b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
			b.ReportMetric(float64(size)/n, "bytes/machine")
		})
	}
}
