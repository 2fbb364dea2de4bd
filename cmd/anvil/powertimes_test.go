package main

import (
	"testing"
	"time"
)

func TestCheckPowerTimes(t *testing.T) {
	for _, c := range []struct {
		lease, live time.Duration
		ok          bool
	}{
		{0, 0, true}, // the defaults
		{3 * time.Second, 4 * time.Second, true},
		{time.Second, 2 * time.Second, true},
		{500 * time.Millisecond, 0, false},
		{-time.Second, 0, false},
		{0, time.Second, false},
		{0, -time.Second, false},
	} {
		if err := checkPowerTimes(c.lease, c.live); (err == nil) != c.ok {
			t.Errorf("checkPowerTimes(%s, %s) = %v", c.lease, c.live, err)
		}
	}
}
