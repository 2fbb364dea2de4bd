package scripts

// Run is what scheduling needs of one script run.
type Run struct {
	Name     string
	Parallel Parallel
	Testing  bool // a testing run; commissioning runs come first
}

// Batches orders runs as MAAS's environment does, as batches of indexes
// into runs: the runs of one batch go side by side, batches one after
// another. Commissioning runs come before testing runs; within each,
// first every "disabled" run alone, in order, then each script's
// "instance" runs together (one batch per script, by first appearance),
// then every "any" run together.
func Batches(runs []Run) [][]int {
	var out [][]int
	for _, testing := range []bool{false, true} {
		var alone, any []int
		var byName [][]int
		group := map[string]int{}
		for i, r := range runs {
			if r.Testing != testing {
				continue
			}
			switch r.Parallel {
			case ParallelInstance:
				g, ok := group[r.Name]
				if !ok {
					g = len(byName)
					group[r.Name] = g
					byName = append(byName, nil)
				}
				byName[g] = append(byName[g], i)
			case ParallelAny:
				any = append(any, i)
			default: // disabled, and anything unknown, runs alone
				alone = append(alone, i)
			}
		}
		for _, i := range alone {
			out = append(out, []int{i})
		}
		out = append(out, byName...)
		if len(any) > 0 {
			out = append(out, any)
		}
	}
	return out
}
