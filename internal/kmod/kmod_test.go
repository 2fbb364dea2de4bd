package kmod

import "testing"

func TestVersionLess(t *testing.T) {
	for _, c := range [][2]string{{"6.1.0-9-amd64", "6.1.0-10-amd64"}, {"5.10.0-30-amd64", "6.1.0-1-amd64"}, {"6.1.0-10-amd64", "6.12.1-1-amd64"}} {
		if !versionLess(c[0], c[1]) || versionLess(c[1], c[0]) {
			t.Errorf("versionLess(%s, %s) wrong", c[0], c[1])
		}
	}
}
