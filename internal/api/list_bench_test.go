package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

// BenchmarkListMachines lists 10,000 machines over HTTP on SQLite:
//
//	go test ./internal/api/ -run '^$' -bench ListMachines -cpuprofile cpu.out
func BenchmarkListMachines(b *testing.B) {
	t := &testing.T{}
	_ = t
	e := start(&testing.T{}, "")
	ctx := context.Background()
	for i := 0; i < 10000; i++ {
		m := &machine.Machine{
			Hostname: fmt.Sprintf("b-%d", i), Architecture: "amd64/generic", Domain: "maas", PowerType: "manual",
			Interfaces: []machine.Interface{{Name: "eth0", MAC: fmt.Sprintf("02:00:00:%02x:%02x:%02x", byte(i>>16), byte(i>>8), byte(i)), Boot: true}},
		}
		if err := e.srv.Store.CreateMachine(ctx, m, nil); err != nil {
			b.Fatal(err)
		}
	}
	req, _ := http.NewRequest("GET", e.base+"api/2.0/machines/", nil)
	req.Header.Set("Authorization", oauth(e.admin))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.SetBytes(n)
	}
}
