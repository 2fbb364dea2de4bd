package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/storage"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) machinesRoutes() []route {
	return []route{
		get("", authenticated, s.listMachines),
		post("", adminOnly, s.createMachine),
		get("is_registered", anonymous, s.isRegistered),
		post("allocate", authenticated, s.allocate),
		post("release", authenticated, s.releaseMany),
		post("accept", adminOnly, s.acceptMany),
		post("accept_all", authenticated, s.acceptAll),
		get("list_allocated", authenticated, s.listAllocated),
		post("set_zone", adminOnly, s.setZone),
		get("power_parameters", adminOnly, s.allPowerParameters),
	}
}

// listFilter turns MAAS's list parameters into a store filter; a value that
// cannot match anything (a malformed MAC, an unknown status) is a 400 so
// that a typo never reads as "no machines".
func (s *Server) listFilter(r *request) (store.MachineFilter, error) {
	f, err := parseFilter(r)
	if err != nil {
		return f, err
	}
	return f, s.namesExist(r, f)
}

// namesExist refuses zones, pools and tags that do not exist, as MAAS's
// filter form does, rather than matching nothing: a typo in a zone name
// should not read as an empty zone.
func (s *Server) namesExist(r *request, f store.MachineFilter) error {
	check := func(field, what string, want []string, quote bool, have func() ([]string, error)) error {
		if len(want) == 0 {
			return nil
		}
		names, err := have()
		if err != nil {
			return err
		}
		var missing []string
		for _, w := range want {
			if !slices.Contains(names, w) && !slices.Contains(missing, w) {
				if quote {
					w = "'" + w + "'"
				}
				missing = append(missing, w)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return badField(field, "No such %s(s): %s.", what, strings.Join(missing, ", "))
		}
		return nil
	}
	ctx := r.Context()
	if err := check("zone", "zone", f.Zones, false, func() ([]string, error) {
		zs, err := s.store.ListZones(ctx)
		return namesOf(zs, func(z store.Zone) string { return z.Name }), err
	}); err != nil {
		return err
	}
	if err := check("pool", "pool", f.Pools, false, func() ([]string, error) {
		ps, err := s.store.ListPools(ctx)
		return namesOf(ps, func(p store.Pool) string { return p.Name }), err
	}); err != nil {
		return err
	}
	return check("tags", "tag", f.Tags, true, func() ([]string, error) {
		ts, err := s.store.ListTags(ctx)
		return namesOf(ts, func(t store.Tag) string { return t.Name }), err
	})
}

func namesOf[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

func parseFilter(r *request) (store.MachineFilter, error) {
	f := store.MachineFilter{
		Hostnames: list(r, "hostname"), SystemIDs: list(r, "id"),
		Zones: list(r, "zone"), Pools: list(r, "pool"), Owners: list(r, "owner"),
		Tags: list(r, "tags"), NotTags: list(r, "not_tags"),
	}
	for _, mac := range list(r, "mac_address") {
		n, err := machine.NormaliseMAC(mac)
		if err != nil {
			return f, badField("mac_address", "%v", err)
		}
		f.MACs = append(f.MACs, n)
	}
	for _, st := range list(r, "status") {
		v, err := machine.ParseStatus(st)
		if err != nil {
			return f, badField("status", "%v", err)
		}
		f.Statuses = append(f.Statuses, v)
	}
	if a := r.form.Get("arch"); a != "" {
		n, err := machine.NormaliseArchitecture(a)
		if err != nil {
			return f, badField("arch", "%v", err)
		}
		f.Arch = n
	}
	var err error
	if f.MinCPU, _, err = intParam(r, "cpu_count", 0, maxQuery); err != nil {
		return f, err
	}
	mem, _, err := intParam(r, "mem", 0, maxQuery)
	f.MinMemory = int64(mem)
	if !r.who.user.Admin {
		f.VisibleTo = r.who.user.Name
	}
	return f, err
}

// listMachines answers from the render cache: one cheap query for the
// selected machines' versions, then full rows only for machines whose
// rendering is missing or stale.
func (s *Server) listMachines(w http.ResponseWriter, r *request) error {
	f, err := s.listFilter(r)
	if err != nil {
		return err
	}
	if f.Limit, _, err = intParam(r, "limit", 1, maxQuery); err != nil {
		return err
	}
	return s.writeMachines(w, r, f)
}

// writeMachines answers the machines f selects as a JSON array.
func (s *Server) writeMachines(w http.ResponseWriter, r *request, f store.MachineFilter) error {
	vs, err := s.store.ListMachineVersions(r.Context(), f)
	if err != nil {
		return err
	}
	n, err := s.loadNames(r)
	if err != nil {
		return err
	}
	ln, err := s.loadListNet(r.Context())
	if err != nil {
		return err
	}
	items := make([][]byte, len(vs))
	var missing []string
	at := map[string]int{}
	for i, v := range vs {
		if b, ok := s.cache.lookup(v.SystemID, v.Version, ln.stamp, n.zone(v.Zone), n.pool(v.Pool)); ok {
			items[i] = b
		} else {
			missing = append(missing, v.SystemID)
			at[v.SystemID] = i
		}
	}
	if len(missing) > 0 {
		ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{SystemIDs: missing})
		if err != nil {
			return err
		}
		dress, err := s.dressers(r.Context(), ln, ms)
		if err != nil {
			return err
		}
		for i := range ms {
			if k, ok := at[ms[i].SystemID]; ok {
				items[k] = s.cache.render(&ms[i], n, ln.stamp, dress[ms[i].SystemID])
			}
		}
	}
	out := items[:0]
	for _, it := range items {
		if it != nil { // deleted between the two queries
			out = append(out, it)
		}
	}
	if isFullList(f) {
		live := make(map[string]bool, len(vs))
		for _, v := range vs {
			live[v.SystemID] = true
		}
		s.cache.prune(live)
	}
	w.Header().Set("Content-Type", "application/json")
	return writeJSONArray(w, out)
}

// isFullList reports whether f selects every machine, so that the answer
// shows which cache entries belong to deleted machines.
func isFullList(f store.MachineFilter) bool {
	g := f
	g.VisibleTo = ""
	return reflect.DeepEqual(g, store.MachineFilter{}) && f.VisibleTo == ""
}

func (s *Server) createMachine(w http.ResponseWriter, r *request) error {
	m, commission, err := s.parseNewMachine(r)
	if err != nil {
		return err
	}
	if err := s.svc.Create(r.Context(), r.who.actor(), &m, commission); err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

func (s *Server) writeMachine(w http.ResponseWriter, r *request, code int, m *machine.Machine) error {
	n, err := s.loadNames(r)
	if err != nil {
		return err
	}
	j := renderMachine(m, n, false)
	if err := s.overlayNetwork(r, &j, m); err != nil {
		return err
	}
	writeJSON(w, code, j)
	return nil
}

// isRegistered answers MAAS's anonymous enlistment question for one MAC
// or several (comma-separated or repeated): true if any is known.
func (s *Server) isRegistered(w http.ResponseWriter, r *request) error {
	macs := list(r, "mac_address")
	if len(macs) == 0 {
		return badField("mac_address", "at least one MAC address is required")
	}
	if len(macs) > 64 {
		return badField("mac_address", "at most 64 MAC addresses may be asked at once")
	}
	f := store.MachineFilter{Limit: 1}
	for _, mac := range macs {
		n, err := machine.NormaliseMAC(mac)
		if err != nil {
			return badField("mac_address", "%v", err)
		}
		f.MACs = append(f.MACs, n)
	}
	ms, err := s.store.ListMachines(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, len(ms) > 0)
	return nil
}

func (s *Server) allocate(w http.ResponseWriter, r *request) error {
	if r.form.Get("devices") != "" {
		return badField("devices", "this constraint is not supported by Anvil yet")
	}
	f, err := s.listFilter(r)
	if err != nil {
		return err
	}
	if name := r.form.Get("name"); name != "" {
		f.Hostnames = append(f.Hostnames, strings.SplitN(name, ".", 2)[0])
	}
	f.SystemIDs = append(f.SystemIDs, list(r, "system_id")...)
	notZones, notPools := list(r, "not_in_zone"), list(r, "not_in_pool")
	dry, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	disks, err := storage.ParseStorageConstraint(r.form.Get("storage"))
	if err != nil {
		return badField("storage", "%v", err)
	}
	ask, err := parseNetAsk(r)
	if err != nil {
		return err
	}
	f.VisibleTo = ""
	candidates := func(m *machine.Machine) bool {
		if _, ok := storage.MatchStorage(disks, region.StorageOf(m)); !ok {
			return false
		}
		return !contains(notZones, m.Zone) && !contains(notPools, m.Pool)
	}
	matched := map[string]map[string][]int{}
	if dry || ask != nil || len(notZones)+len(notPools)+len(disks) > 0 {
		// Exclusions are rare: filter candidates here and allocate by id.
		ms, err := s.store.ListMachines(r.Context(), withReady(f))
		if err != nil {
			return err
		}
		keep := candidates
		if ask != nil {
			if keep, err = s.netCandidates(r, ask, ms, candidates, matched); err != nil {
				return err
			}
		}
		var ids []string
		for i := range ms {
			if keep(&ms[i]) {
				ids = append(ids, ms[i].SystemID)
			}
		}
		if len(ids) == 0 {
			return noMatch(r)
		}
		if dry {
			for i := range ms {
				if ms[i].SystemID == ids[0] {
					return s.writeAllocated(w, r, &ms[i], matched[ids[0]])
				}
			}
		}
		f.SystemIDs = ids
	}
	m, err := s.svc.Allocate(r.Context(), r.who.actor(), f, r.form.Get("comment"))
	if err != nil {
		return err
	}
	return s.writeAllocated(w, r, &m, matched[m.SystemID])
}

// netCandidates extends keep with the network constraints asked for,
// resolved against the network read with the candidates' interfaces;
// what each kept machine's interfaces matched goes into matched.
func (s *Server) netCandidates(r *request, ask *netAsk, ms []machine.Machine, keep func(*machine.Machine) bool,
	matched map[string]map[string][]int) (func(*machine.Machine) bool, error) {
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].SystemID
	}
	n, nets, err := s.store.MachineNetworks(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	nm, err := ask.compile(n)
	if err != nil {
		return nil, err
	}
	return func(m *machine.Machine) bool {
		if !keep(m) {
			return false
		}
		got, ok := nm.match(m, nets[m.SystemID])
		if ok && len(got) > 0 {
			matched[m.SystemID] = got
		}
		return ok
	}, nil
}

// constraintsByType is MAAS's constraints_by_type for the storage and
// interfaces asked for: each labelled storage constraint's block devices
// (ids, or "partition:ID"), each interfaces label's interface ids.
func constraintsByType(r *request, m *machine.Machine, ifaces map[string][]int) map[string]any {
	out := map[string]any{}
	if len(ifaces) > 0 {
		out["interfaces"] = interfaceMatches(ifaces)
	}
	disks, err := storage.ParseStorageConstraint(r.form.Get("storage"))
	if err != nil || len(disks) == 0 {
		return out
	}
	if matched, ok := storage.MatchStorage(disks, region.StorageOf(m)); ok {
		out["storage"] = matched
	}
	return out
}

func withReady(f store.MachineFilter) store.MachineFilter {
	f.Statuses = []machine.Status{machine.Ready}
	f.Owners = []string{""}
	return f
}

func noMatch(r *request) error {
	return &conflict{"No available machine matches constraints: " + r.form.Encode()}
}

// writeAllocated adds constraints_by_type, which clients expect on an
// allocation answer.
func (s *Server) writeAllocated(w http.ResponseWriter, r *request, m *machine.Machine, ifaces map[string][]int) error {
	n, err := s.loadNames(r)
	if err != nil {
		return err
	}
	j := renderMachine(m, n, false)
	if err := s.overlayNetwork(r, &j, m); err != nil {
		return err
	}
	j.ConstraintsMap = constraintsByType(r, m, ifaces)
	writeJSON(w, http.StatusOK, j)
	return nil
}

// releaseMany is MAAS's bulk release: all machines must exist and be
// releasable by the caller, else nothing is released.
func (s *Server) releaseMany(w http.ResponseWriter, r *request) error {
	ids := list(r, "machines")
	if len(ids) == 0 {
		return badField("machines", "at least one system_id is required")
	}
	actor := r.who.actor()
	var missing, refused, locked []string
	for _, id := range ids {
		m, err := s.store.GetMachine(r.Context(), id)
		switch {
		case err != nil || !machine.CanView(actor, &m):
			missing = append(missing, id)
		case !machine.CanEdit(actor, &m):
			refused = append(refused, id)
		case machine.CheckUnlocked(actor, &m, machine.Release) != nil:
			locked = append(locked, id)
		}
	}
	if len(missing) > 0 {
		return badField("machines", "unknown machines: %s", strings.Join(missing, ", "))
	}
	if len(refused) > 0 {
		return &machine.ForbiddenError{Action: machine.Release, Reason: "not yours: " + strings.Join(refused, ", ")}
	}
	if len(locked) > 0 {
		return &machine.ForbiddenError{Action: machine.Release, Reason: "locked: " + strings.Join(locked, ", ")}
	}
	var done []string
	for _, id := range ids {
		if _, _, err := s.svc.Act(r.Context(), actor, id, machine.Input{Action: machine.Release, Comment: r.form.Get("comment")}); err != nil {
			return err
		}
		done = append(done, id)
	}
	writeJSON(w, http.StatusOK, done)
	return nil
}

// acceptMany is MAAS's op=accept: for each machine, the boot last held for
// it (a boot that said it is a machine added by its BMC alone, without
// corroboration) is taken as the machine's. Nothing is accepted unless
// every machine named has one.
func (s *Server) acceptMany(w http.ResponseWriter, r *request) error {
	ids := list(r, "machines")
	if len(ids) == 0 {
		return badField("machines", "at least one system_id is required")
	}
	var none, locked []string
	for _, id := range ids {
		if _, err := s.store.HeldBoot(r.Context(), id); err != nil {
			none = append(none, id)
		} else if m, err := s.store.GetMachine(r.Context(), id); err == nil && machine.CheckUnlocked(r.who.actor(), &m, "accept") != nil {
			locked = append(locked, id)
		}
	}
	if len(none) > 0 {
		return badField("machines", "no held boot to accept for: %s", strings.Join(none, ", "))
	}
	if len(locked) > 0 {
		return &machine.ForbiddenError{Action: "accept", Reason: "locked: " + strings.Join(locked, ", ")}
	}
	n, err := s.loadNames(r)
	if err != nil {
		return err
	}
	out := make([]machineJSON, 0, len(ids))
	for _, id := range ids {
		m, err := s.svc.AcceptHeld(r.Context(), r.who.actor().Name, id)
		if err != nil {
			return err
		}
		out = append(out, renderMachine(&m, n, false))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) allPowerParameters(w http.ResponseWriter, r *request) error {
	ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{SystemIDs: list(r, "id"), WithPowerParams: true})
	if err != nil {
		return err
	}
	out := make(map[string]map[string]string, len(ms))
	for _, m := range ms {
		out[m.SystemID] = nonNil(m.PowerParams)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// conflict is a 409 with a message.
type conflict struct{ msg string }

func (c *conflict) Error() string { return c.msg }

// parsePowerParameters reads power_parameters (a JSON object) and
// power_parameters_<name> fields, which MAAS accepts interchangeably.
func parsePowerParameters(r *request) (map[string]string, bool, error) {
	params := map[string]string{}
	given := false
	if raw := r.form.Get("power_parameters"); raw != "" {
		given = true
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, true, badField("power_parameters", "must be a JSON object of strings: %v", err)
		}
		for k, v := range obj {
			switch t := v.(type) {
			case string:
				params[k] = t
			case float64, bool:
				params[k] = sprintf("%v", t)
			default:
				return nil, true, badField("power_parameters", "value of %q must be a string, number or boolean", k)
			}
		}
	}
	for k, v := range r.form {
		if name, ok := strings.CutPrefix(k, "power_parameters_"); ok && name != "" {
			given = true
			params[name] = v[0]
		}
	}
	for k, v := range params {
		if len(k) > 64 || len(v) > 1024 {
			return nil, true, badField("power_parameters", "parameter %q is too long", truncate(k, 64))
		}
	}
	return params, given, nil
}
