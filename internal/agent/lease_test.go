package agent

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPickLease(t *testing.T) {
	boot, other := &Lease{Iface: "eth2", MAC: "52:54:00:00:00:03"}, &Lease{Iface: "eth0", MAC: "52:54:00:00:00:01"}
	cases := []struct {
		name    string
		bootMAC string
		arrive  []*Lease
		late    *Lease // arrives after the wait
		want    *Lease
	}{
		{"boot NIC first", "52:54:00:00:00:03", []*Lease{boot, other}, nil, boot},
		{"boot NIC after a sibling", "52-54-00-00-00-03", []*Lease{other, boot}, nil, boot},
		{"no boot MAC: the first", "", []*Lease{other, boot}, nil, other},
		{"boot NIC never answers: the first", "52:54:00:00:00:03", []*Lease{other}, nil, other},
		{"boot NIC too late: the first", "52:54:00:00:00:03", []*Lease{other}, boot, other},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := make(chan *Lease, 4)
			for _, l := range c.arrive {
				ch <- l
			}
			if c.late != nil {
				time.AfterFunc(200*time.Millisecond, func() { ch <- c.late })
			}
			got, err := pickLease(context.Background(), ch, c.bootMAC, 50*time.Millisecond)
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := pickLease(ctx, make(chan *Lease), "", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("no lease at all: %v", err)
	}
}
