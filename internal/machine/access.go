package machine

// CanView reports whether a user may see a machine: admins see everything,
// others see free machines and their own, as in MAAS.
func CanView(a Actor, m *Machine) bool {
	return a.System || a.Admin || m.Owner == "" || m.Owner == a.Name
}

// CanEdit reports whether a user may act on a machine: admins always, others
// only on machines they own.
func CanEdit(a Actor, m *Machine) bool {
	return a.System || a.Admin || (m.Owner != "" && m.Owner == a.Name)
}
