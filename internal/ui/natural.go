package ui

import "strings"

// naturalCompare orders names as people count: runs of digits compare by
// their value, so lab-2 comes before lab-10 and node-9 before node-010.
// Equal values with different zero padding fall back to byte order, so
// the order stays total and stable.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			if c := compareDigits(a[si:i], b[sj:j]); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case len(a)-i < len(b)-j:
		return -1
	case len(a)-i > len(b)-j:
		return 1
	}
	// Same by value: the byte order decides (lab-02 before lab-2).
	return strings.Compare(a, b)
}

// compareDigits compares two runs of decimal digits by value, however
// long they are.
func compareDigits(x, y string) int {
	for len(x) > 1 && x[0] == '0' {
		x = x[1:]
	}
	for len(y) > 1 && y[0] == '0' {
		y = y[1:]
	}
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
