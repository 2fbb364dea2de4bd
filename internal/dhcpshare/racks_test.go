package dhcpshare

import (
	"reflect"
	"testing"

	"github.com/anvilmetal/anvil/internal/fielderr"
)

func TestSetRacks(t *testing.T) {
	s := func(v string) *string { return &v }
	const (
		alreadyA  = "aaaaaa is already set as the primary rack controller"
		different = "The primary and secondary rack must be different"
		needsP    = "A secondary rack controller needs a primary rack controller: set primary_rack as well."
	)
	cases := []struct {
		name string
		cur  Racks
		form Form
		want Racks
		err  string
	}{
		{"nothing given", Racks{"aaaaaa", "bbbbbb"}, Form{}, Racks{"aaaaaa", "bbbbbb"}, ""},
		{"set a primary", Racks{}, Form{Primary: s("aaaaaa")}, Racks{Primary: "aaaaaa"}, ""},
		{"set a secondary", Racks{Primary: "aaaaaa"}, Form{Secondary: s("bbbbbb")}, Racks{"aaaaaa", "bbbbbb"}, ""},
		{"set both", Racks{}, Form{s("aaaaaa"), s("bbbbbb")}, Racks{"aaaaaa", "bbbbbb"}, ""},
		{"clear the secondary", Racks{"aaaaaa", "bbbbbb"}, Form{Secondary: s("")}, Racks{Primary: "aaaaaa"}, ""},
		{"clear both", Racks{"aaaaaa", "bbbbbb"}, Form{s(""), s("")}, Racks{}, ""},
		// MAAS: a cleared primary is replaced by the secondary.
		{"clear the primary: secondary promoted", Racks{"aaaaaa", "bbbbbb"}, Form{Primary: s("")}, Racks{Primary: "bbbbbb"}, ""},
		// MAAS: the secondary made primary is no longer secondary.
		{"secondary made primary", Racks{"aaaaaa", "bbbbbb"}, Form{Primary: s("bbbbbb")}, Racks{Primary: "bbbbbb"}, ""},
		{"swap", Racks{"aaaaaa", "bbbbbb"}, Form{s("bbbbbb"), s("aaaaaa")}, Racks{"bbbbbb", "aaaaaa"}, ""},
		{"new primary, old one demoted", Racks{"aaaaaa", "bbbbbb"}, Form{s("cccccc"), s("aaaaaa")}, Racks{"cccccc", "aaaaaa"}, ""},
		{"primary replaced, secondary kept", Racks{"aaaaaa", "bbbbbb"}, Form{Primary: s("cccccc")}, Racks{"cccccc", "bbbbbb"}, ""},
		{"secondary is the stored primary", Racks{Primary: "aaaaaa"}, Form{Secondary: s("aaaaaa")}, Racks{}, alreadyA},
		{"secondary is the stored primary, primary restated", Racks{Primary: "aaaaaa"}, Form{s("aaaaaa"), s("aaaaaa")}, Racks{}, alreadyA},
		{"both one rack", Racks{}, Form{s("aaaaaa"), s("aaaaaa")}, Racks{}, different},
		{"both one new rack", Racks{"aaaaaa", "bbbbbb"}, Form{s("cccccc"), s("cccccc")}, Racks{}, different},
		{"secondary without primary", Racks{}, Form{Secondary: s("bbbbbb")}, Racks{}, needsP},
		{"primary cleared, new secondary", Racks{"aaaaaa", "bbbbbb"}, Form{s(""), s("cccccc")}, Racks{}, needsP},
		{"primary cleared, no secondary to promote", Racks{Primary: "aaaaaa"}, Form{Primary: s("")}, Racks{}, ""},
	}
	for _, c := range cases {
		got, errs := SetRacks(c.cur, c.form)
		switch {
		case c.err != "":
			if !reflect.DeepEqual(errs, fielderr.Errors{fielderr.All: {c.err}}) {
				t.Errorf("%s: errors %v, want %q", c.name, errs, c.err)
			}
			if got != c.cur {
				t.Errorf("%s: refused, yet returned %+v", c.name, got)
			}
		case errs != nil:
			t.Errorf("%s: refused: %v", c.name, errs)
		case got != c.want:
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
