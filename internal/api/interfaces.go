package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// A machine's interfaces are served as MAAS's InterfacesHandler and
// InterfaceHandler: anyone who may see the machine reads them; changing
// them is for administrators, while the machine is in a status MAAS
// allows. A device's are changed by whoever may edit the device, at any
// time (see devices_ifaces.go). Every change is applied to a copy of the machine's model and
// checked whole by network.Validate before anything is written.

func (s *Server) interfacesRoutes() []route {
	return []route{
		get("", authenticated, s.readInterfaces),
		post("create_physical", authenticated, s.createIface(network.Physical, "create")),
		post("create_bond", authenticated, s.createIface(network.Bond, "create bond")),
		post("create_vlan", authenticated, s.createIface(network.VLANIf, "create VLAN")),
		post("create_bridge", authenticated, s.createIface(network.Bridge, "create bridge")),
	}
}

func (s *Server) interfaceRoutes() []route {
	return []route{
		get("", authenticated, s.readInterface),
		put(authenticated, s.updateIface),
		del(authenticated, s.deleteIface),
		post("link_subnet", authenticated, s.linkSubnet),
		post("unlink_subnet", authenticated, s.unlinkSubnet),
		post("set_default_gateway", authenticated, s.setDefaultGateway),
		post("disconnect", authenticated, s.disconnectIface),
		post("add_tag", authenticated, s.ifaceTag(true)),
		post("remove_tag", authenticated, s.ifaceTag(false)),
	}
}

// editableStatuses are the statuses in which MAAS lets an interface be
// changed (ALLOWED_STATES in its api/interfaces.py).
var editableStatuses = []machine.Status{machine.New, machine.Ready, machine.FailedTesting, machine.Allocated, machine.Broken}

// ifaceEdit is one change request's view of a machine's network.
type ifaceEdit struct {
	m   machine.Machine
	n   *network.Network
	nm  *network.Machine
	gw4 int
	gw6 int
	// dev is the device whose interfaces these are, nil for a machine.
	dev *store.Device
}

// editable loads the machine for a change: 404 if the caller cannot see
// it, 403 unless an administrator, 409 in a status MAAS refuses.
func (s *Server) editable(r *request, what string, extra ...machine.Status) (*ifaceEdit, error) {
	e, err := s.loadEdit(r)
	if err != nil {
		return nil, err
	}
	if err := e.mayEdit(r); err != nil || e.dev != nil {
		return e, err
	}
	if !slices.Contains(editableStatuses, e.m.Status) && !slices.Contains(extra, e.m.Status) {
		return nil, &conflict{fmt.Sprintf("Cannot %s interface because the machine is not New, Ready, Allocated, or Broken.", what)}
	}
	return e, nil
}

func (s *Server) loadEdit(r *request) (*ifaceEdit, error) {
	m, dev, err := s.ifaceNode(r)
	if err != nil {
		return nil, err
	}
	n, nm, err := s.store.MachineNetwork(r.Context(), m.SystemID)
	if err != nil {
		return nil, err
	}
	v4, v6, err := s.store.DefaultGatewayLinks(r.Context(), m.SystemID)
	if err != nil {
		return nil, err
	}
	nm.GatewayLink4, nm.GatewayLink6 = int(v4), int(v6)
	return &ifaceEdit{m: m, n: n, nm: nm, gw4: int(v4), gw6: int(v6), dev: dev}, nil
}

// iface finds the interface the path names, as MAAS's 404.
func (e *ifaceEdit) iface(r *request) (network.Interface, error) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err == nil {
		if i, ok := e.nm.Interface(id); ok {
			return i, nil
		}
	}
	return network.Interface{}, noSuch("Interface")
}

// check validates the machine's model with i in place of the interface of
// its ID (added when new). Only faults the change brings are reported, so
// a machine whose model was already imperfect can still be mended; the
// faults of i itself lose their "name." prefix, as MAAS's form errors name
// bare fields.
func (e *ifaceEdit) check(i network.Interface, alsoDrop ...int) (*network.Machine, error) {
	before := network.Validate(e.n, e.nm, nil)
	cand := *e.nm
	cand.Interfaces = nil
	replaced := false
	for _, o := range e.nm.Interfaces {
		if slices.Contains(alsoDrop, o.ID) {
			continue
		}
		if o.ID == i.ID {
			o, replaced = i, true
		}
		cand.Interfaces = append(cand.Interfaces, o)
	}
	if !replaced {
		cand.Interfaces = append(cand.Interfaces, i)
	}
	after := network.Validate(e.n, &cand, nil)
	own := i.Name + "."
	if i.Name == "" {
		own = fmt.Sprintf("interface %d.", i.ID)
	}
	// The interface's own faults, as the form's; when it has none, what
	// the change breaks elsewhere (another interface, the gateways).
	mine, others := fielderr.Errors{}, fielderr.Errors{}
	for f, msgs := range after {
		for _, msg := range msgs {
			if slices.Contains(before[f], msg) {
				continue
			}
			if rest, ok := strings.CutPrefix(f, own); ok {
				mine.Add(rest, "%s", msg)
			} else {
				others.Add(f, "%s", msg)
			}
		}
	}
	if len(mine) > 0 {
		return &cand, mine
	}
	return &cand, others.Err()
}

func (s *Server) readInterfaces(w http.ResponseWriter, r *request) error {
	e, err := s.loadEdit(r)
	if err != nil {
		return err
	}
	v, err := s.loadIfaceView(r.Context(), e.n)
	if err != nil {
		return err
	}
	out := make([]ifaceJSON, 0, len(e.nm.Interfaces))
	for _, i := range e.nm.Interfaces {
		out = append(out, v.renderNetIface(e.m.SystemID, e.nm, i, nicOf(&e.m, i.MAC)))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) readInterface(w http.ResponseWriter, r *request) error {
	e, err := s.loadEdit(r)
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	return s.writeIface(w, r, e.m.SystemID, i.ID)
}

// writeIface answers with the interface as stored now.
func (s *Server) writeIface(w http.ResponseWriter, r *request, systemID string, id int) error {
	e, err := s.loadEdit(r)
	if err != nil {
		return err
	}
	i, ok := e.nm.Interface(id)
	if !ok {
		return noSuch("Interface")
	}
	v, err := s.loadIfaceView(r.Context(), e.n)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v.renderNetIface(systemID, e.nm, i, nicOf(&e.m, i.MAC)))
	return nil
}

func nicOf(m *machine.Machine, mac string) *machine.NIC {
	if m.Inventory == nil {
		return nil
	}
	for k := range m.Inventory.NICs {
		if strings.EqualFold(m.Inventory.NICs[k].MAC, mac) {
			return &m.Inventory.NICs[k]
		}
	}
	return nil
}

func (s *Server) createIface(t network.InterfaceType, what string) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		e, err := s.editable(r, what)
		if err != nil {
			return err
		}
		i := network.Interface{Type: t, Enabled: true, Tags: []string{}}
		if fe := applyIfaceForm(r.form, e.n, e.nm, &i); len(fe) > 0 {
			return renameParent(t, fe)
		}
		if fe := required(r, t); len(fe) > 0 {
			return fe
		}
		if t == network.Physical && i.Name == "" {
			i.Name = nextEthName(e.nm)
		}
		if e.dev != nil {
			e.deviceDefaults(r.form, &i)
		}
		childDefaults(r.form, e.n, e.nm, &i)
		// A bond's or bridge's parents give their addresses to it, as in
		// MAAS: their links go, and the model is checked without them.
		var dropLinks []int64
		if t == network.Bond || t == network.Bridge {
			for k := range e.nm.Interfaces {
				if slices.Contains(i.Parents, e.nm.Interfaces[k].ID) {
					for _, l := range e.nm.Interfaces[k].Links {
						dropLinks = append(dropLinks, int64(l.ID))
					}
					e.nm.Interfaces[k].Links = nil
				}
			}
		}
		if _, err := e.check(i); err != nil {
			return renameParent(t, err.(fielderr.Errors))
		}
		created := storeIface(e.m.SystemID, i)
		write := &store.InterfaceWrite{SystemID: e.m.SystemID, Create: &created, DropLinks: dropLinks}
		if err := s.store.WriteInterfaces(r.Context(), write); err != nil {
			return ifaceStoreError(err)
		}
		return s.writeIface(w, r, e.m.SystemID, int(created.ID))
	}
}

// required are the fields MAAS's forms require on creation.
func required(r *request, t network.InterfaceType) fielderr.Errors {
	var fe fielderr.Errors
	given := func(f string) bool { return strings.TrimSpace(r.form.Get(f)) != "" }
	switch t {
	case network.Physical:
		if !given("mac_address") {
			fe.Add("mac_address", "This field is required.")
		}
	case network.Bond:
		if !given("name") {
			fe.Add("name", "This field is required.")
		}
		if !given("parents") {
			fe.Add("parents", "A bond interface must have one or more parents.")
		}
	case network.VLANIf:
		if !given("vlan") {
			fe.Add("vlan", "A VLAN interface must be connected to a tagged VLAN.")
		}
		if !given("parent") && !given("parents") {
			fe.Add("parent", "This field is required.")
		}
	case network.Bridge:
		if !given("name") {
			fe.Add("name", "This field is required.")
		}
		if !given("parent") && !given("parents") {
			fe.Add("parent", "A bridge interface must have at least one parent.")
		}
	}
	return fe
}

// renameParent answers a VLAN's or bridge's "parents" errors under
// "parent", the field MAAS's API names there.
func renameParent(t network.InterfaceType, fe fielderr.Errors) error {
	if t == network.VLANIf || t == network.Bridge {
		if msgs, ok := fe["parents"]; ok {
			delete(fe, "parents")
			fe["parent"] = append(fe["parent"], msgs...)
		}
	}
	return fe
}

func (s *Server) updateIface(w http.ResponseWriter, r *request) error {
	e, err := s.editable(r, "update interface", machine.Deployed)
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	if fe := applyIfaceForm(r.form, e.n, e.nm, &i); len(fe) > 0 {
		return renameParent(i.Type, fe)
	}
	if _, err := e.check(i); err != nil {
		return renameParent(i.Type, err.(fielderr.Errors))
	}
	if _, err := s.store.UpdateInterface(r.Context(), storeIface(e.m.SystemID, i)); err != nil {
		return ifaceStoreError(err)
	}
	return s.writeIface(w, r, e.m.SystemID, i.ID)
}

func (s *Server) deleteIface(w http.ResponseWriter, r *request) error {
	e, err := s.editable(r, "delete interface")
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	// MAAS deletes a VLAN interface with its parent; a bond's members and
	// a bridge's ports stay. Children other than VLANs keep the parent.
	for _, c := range e.nm.Children(i.ID, -1) {
		if c.Type != network.VLANIf {
			return &conflict{fmt.Sprintf("Cannot delete %s: it is a parent of %s %s.", i.Name, c.Type, c.Name)}
		}
	}
	write := &store.InterfaceWrite{SystemID: e.m.SystemID}
	for _, c := range e.nm.Children(i.ID, -1) {
		write.Deletes = append(write.Deletes, int64(c.ID))
	}
	write.Deletes = append(write.Deletes, int64(i.ID))
	if err := s.store.WriteInterfaces(r.Context(), write); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

func (s *Server) linkSubnet(w http.ResponseWriter, r *request) error {
	e, err := s.editable(r, "link subnet")
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	for _, c := range e.nm.Children(i.ID, -1) {
		if c.Type == network.Bond {
			return fielderr.Errors{"bond": {fmt.Sprintf("Cannot link interface(%s) when interface is in a bond(%s).", i.Name, c.Name)}}
		}
	}
	lr, fe := parseLinkForm(r.form, e.n)
	if len(fe) > 0 {
		return fe
	}
	pick := e.pickStatic(&lr.link)
	old := slices.Clone(i.Links)
	if fe := applyLink(e.n, &i, lr); len(fe) > 0 {
		return fe
	}
	if lr.link.IP.IsValid() {
		if fe := s.checkStatic(r.Context(), e, lr.link); len(fe) > 0 {
			return fe
		}
	}
	if _, err := e.check(i); err != nil {
		return linkErrors(err.(fielderr.Errors), len(i.Links)-1)
	}
	// The VLAN the link brings, the links it replaces, the link and the
	// gateway choice are one write.
	write := &store.InterfaceWrite{SystemID: e.m.SystemID}
	if i.VLANID != e.mustIface(i.ID).VLANID {
		write.Updates = []store.Interface{storeIface(e.m.SystemID, i)}
	}
	if len(i.Links) == 1 {
		for _, l := range old {
			write.DropLinks = append(write.DropLinks, int64(l.ID))
		}
	}
	link := stickyIf(pick, storeLink(i.ID, lr.link, r.who.user.Name))
	write.AddLink = &link
	if lr.defaultGateway {
		gw := [2]int64{int64(e.gw4), int64(e.gw6)}
		if s4, _ := e.n.Subnet(lr.link.SubnetID); s4.CIDR.Addr().Is4() {
			gw[0] = store.NewLink
		} else {
			gw[1] = store.NewLink
		}
		write.Gateways = &gw
	}
	if err := s.store.WriteInterfaces(r.Context(), write); err != nil {
		var ce *store.ConflictError
		var re *store.ReservedIPError
		if errors.As(err, &re) {
			return fielderr.Errors{"ip_address": {"The static IP " + re.IP + " is already reserved for the MAC address " + re.MAC + "."}}
		}
		if errors.As(err, &ce) && strings.HasPrefix(ce.What, "IP address") {
			return fielderr.Errors{"ip_address": {"IP address is already in use."}}
		}
		return ifaceStoreError(err)
	}
	// A device's AUTO link gets its address at once, as in MAAS.
	if e.dev != nil && lr.link.Mode == network.LinkAuto {
		if _, err := s.allocateDeviceLink(r, link); err != nil {
			return err
		}
	}
	return s.writeIface(w, r, e.m.SystemID, i.ID)
}

func (e *ifaceEdit) mustIface(id int) network.Interface {
	i, _ := e.nm.Interface(id)
	return i
}

// linkErrors answers the new link's faults (links.K.field) under their
// bare field names, as MAAS's link form does.
func linkErrors(fe fielderr.Errors, k int) error {
	prefix := "links." + strconv.Itoa(k) + "."
	out := fielderr.Errors{}
	for f, msgs := range fe {
		for _, m := range msgs {
			out.Add(strings.TrimPrefix(f, prefix), "%s", m)
		}
	}
	return out
}

// checkStatic refuses a STATIC address another node or reservation holds,
// before the unique index would.
func (s *Server) checkStatic(ctx context.Context, e *ifaceEdit, l network.Link) fielderr.Errors {
	held, err := s.store.ListIPAddresses(ctx, store.IPAddressFilter{SubnetID: int64(l.SubnetID)})
	if err != nil {
		return fielderr.Errors{fielderr.All: {"cannot read the subnet's addresses"}}
	}
	for _, a := range held {
		if a.IP == l.IP.String() {
			return fielderr.Errors{"ip_address": {"IP address is already in use."}}
		}
	}
	if held, err := s.store.RackAddresses(ctx); err != nil {
		return fielderr.Errors{fielderr.All: {"cannot read the racks' addresses"}}
	} else if held[l.IP] {
		return fielderr.Errors{"ip_address": {"IP address is already in use."}}
	}
	return nil
}

func (s *Server) unlinkSubnet(w http.ResponseWriter, r *request) error {
	e, err := s.editable(r, "unlink subnet")
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	id, _ := strconv.Atoi(strings.TrimSpace(r.form.Get("id")))
	k := slices.IndexFunc(i.Links, func(l network.Link) bool { return l.ID == id && id != 0 })
	if k < 0 {
		var ids []string
		for _, l := range i.Links {
			ids = append(ids, strconv.Itoa(l.ID))
		}
		return fielderr.Errors{"id": {fmt.Sprintf("'%s' is not a valid id.  It should be one of: '%s'.", r.form.Get("id"), strings.Join(ids, "', '"))}}
	}
	// The link and, when it was one, the gateway choice go together.
	write := &store.InterfaceWrite{SystemID: e.m.SystemID, DropLinks: []int64{int64(id)}}
	if id == e.gw4 || id == e.gw6 {
		write.Gateways = &[2]int64{int64(e.gw4), int64(e.gw6)}
	}
	if err := s.store.WriteInterfaces(r.Context(), write); err != nil {
		return err
	}
	return s.writeIface(w, r, e.m.SystemID, i.ID)
}

// setDefaultGateway is MAAS's InterfaceSetDefaultGatwayForm: the link
// given, or the interface's one usable link per family.
func (s *Server) setDefaultGateway(w http.ResponseWriter, r *request) error {
	e, err := s.editable(r, "set default gateway")
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	var usable []network.Link
	for _, l := range i.Links {
		if sn, ok := e.n.Subnet(l.SubnetID); ok && sn.Gateway.IsValid() && (l.Mode == network.LinkAuto || l.Mode == network.LinkStatic) {
			usable = append(usable, l)
		}
	}
	if len(usable) == 0 {
		return fielderr.Errors{fielderr.All: {"This interface has no usable gateways."}}
	}
	is4 := func(l network.Link) bool { sn, _ := e.n.Subnet(l.SubnetID); return sn.Gateway.Is4() }
	if raw := strings.TrimSpace(r.form.Get("link_id")); raw != "" {
		id, _ := strconv.Atoi(raw)
		k := slices.IndexFunc(usable, func(l network.Link) bool { return l.ID == id })
		if k < 0 {
			var ids []string
			for _, l := range usable {
				ids = append(ids, strconv.Itoa(l.ID))
			}
			return fielderr.Errors{"link_id": {fmt.Sprintf("'%s' is not a valid link_id.  It should be one of: '%s'.", raw, strings.Join(ids, "', '"))}}
		}
		if is4(usable[k]) {
			e.gw4 = id
		} else {
			e.gw6 = id
		}
	} else {
		gws := map[bool]map[string]bool{true: {}, false: {}}
		for _, l := range usable {
			sn, _ := e.n.Subnet(l.SubnetID)
			gws[is4(l)][sn.Gateway.String()] = true
		}
		var many []string
		if len(gws[true]) > 1 {
			many = append(many, "IPv4")
		}
		if len(gws[false]) > 1 {
			many = append(many, "IPv6")
		}
		if len(many) > 0 {
			plural := ""
			if len(many) > 1 {
				plural = "s"
			}
			return fielderr.Errors{"link_id": {fmt.Sprintf("This field is required; Interface has more than one usable %s gateway%s.", strings.Join(many, " and "), plural)}}
		}
		for _, fam := range []bool{true, false} {
			if k := slices.IndexFunc(usable, func(l network.Link) bool { return is4(l) == fam }); k >= 0 {
				if fam {
					e.gw4 = usable[k].ID
				} else {
					e.gw6 = usable[k].ID
				}
			}
		}
	}
	if err := s.store.SetDefaultGatewayLinks(r.Context(), e.m.SystemID, int64(e.gw4), int64(e.gw6)); err != nil {
		return err
	}
	return s.writeIface(w, r, e.m.SystemID, i.ID)
}

// disconnectIface deletes the interface's links and takes it off its VLAN.
func (s *Server) disconnectIface(w http.ResponseWriter, r *request) error {
	e, err := s.editable(r, "disconnect")
	if err != nil {
		return err
	}
	i, err := e.iface(r)
	if err != nil {
		return err
	}
	write := &store.InterfaceWrite{SystemID: e.m.SystemID}
	for _, l := range i.Links {
		write.DropLinks = append(write.DropLinks, int64(l.ID))
	}
	i.VLANID, i.Links = 0, nil
	write.Updates = []store.Interface{storeIface(e.m.SystemID, i)}
	if err := s.store.WriteInterfaces(r.Context(), write); err != nil {
		return ifaceStoreError(err)
	}
	return s.writeIface(w, r, e.m.SystemID, i.ID)
}

// ifaceTag is add_tag and remove_tag: MAAS checks only permission here,
// not the machine's status.
func (s *Server) ifaceTag(add bool) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		e, err := s.loadEdit(r)
		if err != nil {
			return err
		}
		if err := e.mayEdit(r); err != nil {
			return err
		}
		i, err := e.iface(r)
		if err != nil {
			return err
		}
		tag := strings.TrimSpace(r.form.Get("tag"))
		if tag == "" {
			return badField("tag", "This field is required.")
		}
		if strings.Contains(tag, ",") {
			return badField("tag", "A tag cannot contain a comma.")
		}
		i.Tags = slices.DeleteFunc(slices.Clone(i.Tags), func(t string) bool { return t == tag })
		if add {
			i.Tags = append(i.Tags, tag)
		}
		if _, err := s.store.UpdateInterface(r.Context(), storeIface(e.m.SystemID, i)); err != nil {
			return ifaceStoreError(err)
		}
		return s.writeIface(w, r, e.m.SystemID, i.ID)
	}
}

// clearDefaultGateways is the machine op: the owner's choices go, and the
// gateways are MAAS's best guess again.
func (s *Server) clearDefaultGateways(w http.ResponseWriter, r *request) error {
	m, err := s.visibleMachine(r)
	if err != nil {
		return err
	}
	if !r.who.user.Admin {
		return machine.ErrForbidden
	}
	if !slices.Contains(editableStatuses, m.Status) {
		return &conflict{"Cannot clear default gateways because the machine is not New, Ready, Allocated, or Broken."}
	}
	if err := s.store.SetDefaultGatewayLinks(r.Context(), m.SystemID, 0, 0); err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

// ifaceStoreError words the store's refusals as MAAS's form errors.
func ifaceStoreError(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		if strings.Contains(strings.ToLower(ce.What), "mac") {
			return fielderr.Errors{"mac_address": {"This MAC address is already in use by another interface."}}
		}
		return fielderr.Errors{"name": {ce.Error()}}
	}
	return err
}

// storeIface is i as the store keeps it.
func storeIface(systemID string, i network.Interface) store.Interface {
	out := store.Interface{ID: int64(i.ID), SystemID: systemID, Name: i.Name, Type: string(i.Type), MAC: i.MAC,
		VLANID: int64(i.VLANID), Enabled: i.Enabled, Tags: i.Tags}
	for _, p := range i.Parents {
		out.Parents = append(out.Parents, int64(p))
	}
	out.Params = store.InterfaceParams{MTU: i.MTU}
	switch i.Type {
	case network.Bond:
		b := i.Bond.Defaults()
		out.Params.BondMode, out.Params.BondMIIMon, out.Params.BondUpDelay, out.Params.BondDownDelay = string(b.Mode), b.MIIMon, b.UpDelay, b.DownDelay
		out.Params.BondLACPRate, out.Params.BondXmitHashPolicy = b.LACPRate, b.XmitHashPolicy
	case network.Bridge:
		out.Params.BridgeType, out.Params.BridgeSTP, out.Params.BridgeFD = string(i.Bridge.Type), i.Bridge.STP, i.Bridge.ForwardDelay
	}
	return out
}

// storeLink is a new link as an ip_addresses row (MAAS's alloc types:
// AUTO, STICKY with an address for STATIC, DHCP, STICKY without one for
// LINK_UP).
func storeLink(ifaceID int, l network.Link, owner string) store.IPAddress {
	a := store.IPAddress{InterfaceID: int64(ifaceID), SubnetID: int64(l.SubnetID), Owner: owner}
	switch l.Mode {
	case network.LinkAuto:
		a.AllocType = store.AllocAuto
	case network.LinkDHCP:
		a.AllocType = store.AllocDHCP
	case network.LinkStatic:
		a.AllocType, a.IP = store.AllocSticky, l.IP.String()
	default:
		a.AllocType = store.AllocSticky
	}
	return a
}
