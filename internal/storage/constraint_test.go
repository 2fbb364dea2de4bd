package storage

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseStorageConstraint(t *testing.T) {
	tests := []struct {
		in   string
		want []StorageConstraint
		err  string
	}{
		{in: "", want: nil},
		{in: "80", want: []StorageConstraint{{Size: 80e9}}},
		{in: "root:80(ssd),data:400(rotary,5400rpm),100", want: []StorageConstraint{
			{Label: "root", Size: 80e9, Tags: []string{"ssd"}},
			{Label: "data", Size: 400e9, Tags: []string{"rotary", "5400rpm"}},
			{Size: 100e9}}},
		{in: "0.5(partition)", want: []StorageConstraint{{Size: 5e8, Tags: []string{"partition"}}}},
		{in: "root:", err: "expected a size"},
		{in: ":80", err: "a label before ':'"},
		{in: "80GB", err: `unexpected 'G'`},
		{in: "80,", err: "expected a size"},
		{in: "1.2.3", err: `"1.2.3" is not a size in GB`},
		{in: "80(ssd", err: "'(' without ')'"},
		{in: "80(ssd,,rotary)", err: "tags are non-empty"},
		{in: "80(ssd) ,90", err: `unexpected ' '`},
		{in: "my-disk:80", err: "expected a size"},
		{in: "99999999999", err: "is not a size in GB"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseStorageConstraint(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i].raw = ""
			}
			same(t, tt.in, got, tt.want)
		})
	}
}

// FuzzParseStorageConstraint: the parser never panics, and what it
// accepts renders back to the same text (MAAS's own validity test).
func FuzzParseStorageConstraint(f *testing.F) {
	for _, s := range []string{"", "80", "root:80(ssd),data:400(rotary,5400rpm),100", "1.5(partition)", "a:1(", "x:(y)", ",,", "1e9", "1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cs, err := ParseStorageConstraint(in)
		if err != nil {
			return
		}
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = c.String()
			if c.Size < 0 {
				t.Fatalf("%q: negative size %d", in, c.Size)
			}
		}
		if got := strings.Join(parts, ","); got != in {
			t.Fatalf("%q parsed and rendered as %q", in, got)
		}
	})
}

func TestMatchStorage(t *testing.T) {
	disks := []Disk{
		{ID: 1, Name: "sda", Size: 500e9, Tags: []string{"rotary"}},
		{ID: 2, Name: "sdb", Size: 200e9, Tags: []string{"ssd"}},
		{ID: 3, Name: "sdc", Size: 1000e9, Tags: []string{"rotary", "5400rpm"}},
		{ID: 4, Name: "sdd", Size: 300e9, Tags: []string{"ssd"}},
	}
	flat, err := ApplyLayout(LayoutFlat, Machine{Disks: disks, Firmware: UEFI}, LayoutParams{})
	if err != nil {
		t.Fatal(err)
	}
	flat.Tables[0].Partitions[1].ID = 71
	raid := twoDisks()
	tests := []struct {
		name, storage string
		c             Config
		want          string // constraints_by_type's storage, JSON; "" = no match
	}{
		{"root only", "root:100", flat, `{"root":[1]}`},
		{"root and the smallest fitting ssd", "root:100(rotary),cache:150(ssd)", flat, `{"cache":[2],"root":[1]}`},
		{"most tags first", "root:10,a:100,b:500(rotary,5400rpm)", flat, `{"a":[2],"b":[3],"root":[1]}`},
		{"unlabelled match but are not listed", "10,data:250(ssd)", flat, `{"data":[4]}`},
		{"root partition", "root:100(partition)", flat, `{"root":["partition:71"]}`},
		{"root too small", "root:600", flat, ""},
		{"root lacks the tag", "root:10(ssd)", flat, ""},
		{"not enough free disks", "root:10,a:10,b:10,c:10,d:10", flat, ""},
		{"a used disk is not free", "root:10,other:10", raid, ""},
		{"root through LVM on RAID", "root:10", raid, `{"root":[1]}`},
		{"no root filesystem", "root:10", Config{Disks: disks}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := ParseStorageConstraint(tt.storage)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := MatchStorage(cs, tt.c)
			if tt.want == "" {
				if ok {
					t.Fatalf("matched %v; want no match", got)
				}
				return
			}
			if !ok {
				t.Fatal("no match")
			}
			b, _ := json.Marshal(got)
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}
