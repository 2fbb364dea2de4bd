package scripts

import (
	"fmt"
	"testing"
)

func TestBatches(t *testing.T) {
	d, in, an := ParallelDisabled, ParallelInstance, ParallelAny
	for _, c := range []struct {
		name string
		runs []Run
		want string
	}{
		{"none", nil, "[]"},
		{"disabled one by one", []Run{{"a", d, true}, {"b", d, true}, {"c", d, true}}, "[[0] [1] [2]]"},
		{"instances of a script together", []Run{{"fio", in, true}, {"fio", in, true}, {"fio", in, true}}, "[[0 1 2]]"},
		{"each script's instances apart", []Run{{"fio", in, true}, {"smart", in, true}, {"fio", in, true}, {"smart", in, true}}, "[[0 2] [1 3]]"},
		{"any all together", []Run{{"a", an, true}, {"b", an, true}, {"c", an, true}}, "[[0 1 2]]"},
		{"disabled, then instance, then any", []Run{{"x", an, true}, {"fio", in, true}, {"mem", d, true}, {"y", an, true}, {"fio", in, true}, {"cpu", d, true}},
			"[[2] [5] [1 4] [0 3]]"},
		{"commissioning before testing", []Run{{"t", d, true}, {"lshw", an, false}, {"inv", d, false}, {"bb", in, true}, {"bb", in, true}},
			"[[2] [1] [0] [3 4]]"},
		{"unknown setting runs alone", []Run{{"a", Parallel(7), true}, {"b", an, true}}, "[[0] [1]]"},
	} {
		got := Batches(c.runs)
		if s := fmt.Sprint(got); s != c.want && !(c.want == "[]" && len(got) == 0) {
			t.Errorf("%s: %s, want %s", c.name, s, c.want)
		}
		seen := map[int]int{}
		for _, b := range got {
			for _, i := range b {
				seen[i]++
			}
		}
		for i := range c.runs {
			if seen[i] != 1 {
				t.Errorf("%s: run %d scheduled %d times", c.name, i, seen[i])
			}
		}
	}
}
