package network

// ValidateRoute checks a static route: a source subnet, a destination of
// the same family that is not the source itself, a gateway inside the
// source subnet (the router must be on-link), a metric of 0 or more.
// The words are MAAS's.
func ValidateRoute(n *Network, r StaticRoute) FieldErrors {
	var e FieldErrors
	s, ok := n.Subnet(r.SourceID)
	if !ok {
		e.Add("source", "Subnet %d does not exist.", r.SourceID)
		return e
	}
	switch {
	case !r.Destination.IsValid():
		e.Add("destination", "This field is required.")
	case r.Destination.Addr().Is4() != s.CIDR.Addr().Is4():
		e.Add("destination", "source and destination must be the same IP version.")
	case r.Destination.Masked() == s.CIDR.Masked():
		e.Add("destination", "source and destination cannot be the same subnet.")
	case r.Destination.Masked() != r.Destination:
		e.Add("destination", "%s has host bits set; the network is %s.", r.Destination, r.Destination.Masked())
	}
	if !s.CIDR.Contains(r.Gateway) {
		e.Add("gateway_ip", "gateway_ip must be with in the source subnet.")
	}
	if r.Metric < 0 {
		e.Add("metric", "Ensure this value is greater than or equal to 0.")
	}
	return e
}
