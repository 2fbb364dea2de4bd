package storage

import (
	"fmt"
	"strconv"
	"strings"
)

// StorageConstraint is one disk asked for by storage= (MAAS's and Juju's
// grammar): [label:]size[(tag,...)], size in GB (10^9 bytes). The first
// one is the root disk.
type StorageConstraint struct {
	Label string
	Size  int64 // bytes, at least
	Tags  []string
	raw   string // the size as written, so a parse renders back exactly
}

// Partition reports the "partition" tag: match a partition, not a disk.
func (s StorageConstraint) Partition() bool {
	for _, t := range s.Tags {
		if t == "partition" {
			return true
		}
	}
	return false
}

// tagsBut returns the tags other than "partition".
func (s StorageConstraint) tagsBut() []string {
	var out []string
	for _, t := range s.Tags {
		if t != "partition" {
			out = append(out, t)
		}
	}
	return out
}

func (s StorageConstraint) String() string {
	out := s.raw
	if s.Label != "" {
		out = s.Label + ":" + out
	}
	if len(s.Tags) > 0 {
		out += "(" + strings.Join(s.Tags, ",") + ")"
	}
	return out
}

// maxGB keeps size × 10^9 inside an int64.
const maxGB = 9e9

// ParseStorageConstraint reads a storage= value: comma-separated
// constraints, "root:80(ssd),data:400(rotary,5400rpm),100". Errors say
// where the value stops being the grammar.
func ParseStorageConstraint(v string) ([]StorageConstraint, error) {
	if v == "" {
		return nil, nil
	}
	bad := func(at int, why string) error {
		return fmt.Errorf("malformed storage constraint %q at character %d: %s (the form is [label:]size[(tag,...)],... with size in GB)", v, at+1, why)
	}
	var out []StorageConstraint
	i := 0
	for {
		var c StorageConstraint
		start := i
		for i < len(v) && isAlnum(v[i]) {
			i++
		}
		if i < len(v) && v[i] == ':' {
			if i == start {
				return nil, bad(i, "a label before ':' is letters and digits")
			}
			c.Label = v[start:i]
			i++
		} else {
			i = start
		}
		start = i
		for i < len(v) && (v[i] == '.' || (v[i] >= '0' && v[i] <= '9')) {
			i++
		}
		if i == start {
			return nil, bad(i, "expected a size")
		}
		c.raw = v[start:i]
		gb, err := strconv.ParseFloat(c.raw, 64)
		if err != nil || gb > maxGB {
			return nil, bad(start, fmt.Sprintf("%q is not a size in GB", c.raw))
		}
		c.Size = int64(gb * 1e9)
		if i < len(v) && v[i] == '(' {
			end := strings.IndexByte(v[i:], ')')
			if end < 0 {
				return nil, bad(i, "'(' without ')'")
			}
			for _, t := range strings.Split(v[i+1:i+end], ",") {
				if t == "" || strings.ContainsRune(t, '(') {
					return nil, bad(i, "tags are non-empty names separated by commas")
				}
				c.Tags = append(c.Tags, t)
			}
			i += end + 1
		}
		out = append(out, c)
		if i == len(v) {
			return out, nil
		}
		if v[i] != ',' {
			return nil, bad(i, fmt.Sprintf("unexpected %q", v[i]))
		}
		i++
	}
}

func isAlnum(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
