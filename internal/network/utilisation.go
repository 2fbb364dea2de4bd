package network

import (
	"math/big"
	"net/netip"
)

// Utilisation is how much of a subnet is taken: its host addresses
// outside what no one may use, how many of them are free, the largest
// free span, and the share in use (0 to 1).
type Utilisation struct {
	Total, Available, Largest *big.Int
	Usage                     float64
}

// Use is s's utilisation given the addresses assigned on it.
func Use(n *Network, s Subnet, assigned []netip.Addr) Utilisation {
	u := Utilisation{Total: new(big.Int), Available: new(big.Int), Largest: new(big.Int)}
	for _, w := range Windows(n, s) {
		u.Total.Add(u.Total, w.Size())
	}
	for _, sp := range Unused(n, s, assigned) {
		z := sp.Size()
		u.Available.Add(u.Available, z)
		if z.Cmp(u.Largest) > 0 {
			u.Largest = z
		}
	}
	if u.Total.Sign() > 0 {
		u.Usage, _ = new(big.Rat).SetFrac(u.Unavailable(), u.Total).Float64()
	}
	return u
}

// Unavailable is the number of addresses in use.
func (u Utilisation) Unavailable() *big.Int { return new(big.Int).Sub(u.Total, u.Available) }
