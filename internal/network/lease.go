package network

// MaxLeaseSeconds bounds a subnet's DHCP lease time. DHCP carries it in
// 32 bits and the store in a 32-bit column; a year is more than any
// network leases for, and short enough that time arithmetic on it cannot
// overflow.
const MaxLeaseSeconds = 365 * 24 * 3600

// LeaseSeconds is a stored lease time as DHCP may offer it: a row written
// before the bound is clamped to it, and a negative one reads as 0 (the
// server's default).
func LeaseSeconds(stored int) int { return min(max(stored, 0), MaxLeaseSeconds) }
