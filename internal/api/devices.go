package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anvilmetal/anvil/internal/device"
	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// devices/ is MAAS's DevicesHandler and DeviceHandler: nodes Anvil never
// boots, with interfaces, addresses and DNS names. A user sees and
// changes the devices it created and those of the machines it owns; an
// administrator every one.

func (s *Server) devicesRoutes() []route {
	return []route{
		get("", authenticated, s.listDevices),
		post("", authenticated, s.createDevice),
	}
}

func (s *Server) deviceRoutes() []route {
	return []route{
		get("", authenticated, s.readDevice),
		put(authenticated, s.updateDevice),
		del(authenticated, s.deleteDevice),
		get("details", authenticated, s.deviceDetails),
		post("set_workload_annotations", authenticated, s.setDeviceAnnotations),
		post("set_owner_data", authenticated, s.setDeviceAnnotations),
		post("restore_networking_configuration", authenticated, s.restoreDeviceNetwork),
		post("restore_default_configuration", authenticated, s.restoreDeviceNetwork),
	}
}

// visibleDevice loads the device the path names; one the caller may not
// see is MAAS's 404, so that its id is not confirmed.
func (s *Server) visibleDevice(r *request) (store.Device, error) {
	d, err := s.store.GetDevice(r.Context(), r.id)
	if err == nil && !device.CanView(r.who.actor(), d.Owner, d.ParentOwner) {
		err = fmt.Errorf("device %s: %w", r.id, store.ErrNotFound)
	}
	return d, err
}

func (s *Server) listDevices(w http.ResponseWriter, r *request) error {
	f := store.DeviceFilter{
		SystemIDs: append(list(r, "id"), list(r, "system_id")...),
		Hostnames: list(r, "hostname"),
		Domains:   list(r, "domain"),
		Owners:    list(r, "owner"),
		Parents:   list(r, "parent"),
	}
	if z := strings.TrimSpace(r.form.Get("zone")); z != "" {
		f.Zones = []string{z}
	}
	var bad []string
	for _, mac := range list(r, "mac_address") {
		n, err := machine.NormaliseMAC(mac)
		if err != nil {
			bad = append(bad, mac)
			continue
		}
		f.MACs = append(f.MACs, n)
	}
	if len(bad) > 0 {
		return &badRequest{"Invalid MAC address(es): " + strings.Join(bad, ", ")}
	}
	if !r.who.user.Admin {
		f.VisibleTo = r.who.user.Name
	}
	ds, err := s.store.ListDevices(r.Context(), f)
	if err != nil {
		return err
	}
	rd, err := s.deviceRenderer(r)
	if err != nil {
		return err
	}
	out := make([]deviceJSON, 0, len(ds))
	for k := range ds {
		j, err := rd.render(r.Context(), &ds[k])
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) readDevice(w http.ResponseWriter, r *request) error {
	d, err := s.visibleDevice(r)
	if err != nil {
		return err
	}
	return s.writeDevice(w, r, &d)
}

func (s *Server) writeDevice(w http.ResponseWriter, r *request, d *store.Device) error {
	rd, err := s.deviceRenderer(r)
	if err != nil {
		return err
	}
	j, err := rd.render(r.Context(), d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

func (s *Server) createDevice(w http.ResponseWriter, r *request) error {
	d, macs, err := s.parseNewDevice(r)
	if err != nil {
		return err
	}
	if err := s.store.CreateDevice(r.Context(), &d, macs); err != nil {
		return deviceStoreError(err)
	}
	s.log.Info("added device", "hostname", d.Hostname, "system_id", d.SystemID, "parent", d.Parent)
	return s.writeDevice(w, r, &d)
}

func (s *Server) updateDevice(w http.ResponseWriter, r *request) error {
	d, err := s.visibleDevice(r)
	if err != nil {
		return err
	}
	if err := s.applyDeviceForm(r, &d, false); err != nil {
		return err
	}
	if err := s.store.UpdateDevice(r.Context(), d); err != nil {
		return deviceStoreError(err)
	}
	if d, err = s.store.GetDevice(r.Context(), d.SystemID); err != nil {
		return err
	}
	return s.writeDevice(w, r, &d)
}

// deleteDevice deletes the device with its interfaces; their addresses
// are free again at once.
func (s *Server) deleteDevice(w http.ResponseWriter, r *request) error {
	d, err := s.visibleDevice(r)
	if err != nil {
		return err
	}
	if err := s.store.DeleteDevice(r.Context(), d.SystemID); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

// deviceDetails is NodeHandler's details: a device was never
// commissioned, so MAAS answers lshw and lldp as null.
func (s *Server) deviceDetails(w http.ResponseWriter, r *request) error {
	if _, err := s.visibleDevice(r); err != nil {
		return err
	}
	return writeBSON(w, bsonDoc{{Key: "lshw"}, {Key: "lldp"}})
}

// setDeviceAnnotations is set_workload_annotations (set_owner_data, its
// older name): only the device's owner sets them, as in MAAS.
func (s *Server) setDeviceAnnotations(w http.ResponseWriter, r *request) error {
	d, err := s.visibleDevice(r)
	if err != nil {
		return err
	}
	if d.Owner != r.who.user.Name {
		return &machine.Violation{Msg: "Cannot set workload annotation: it hasn't been acquired."}
	}
	in := map[string]string{}
	for k, v := range r.form {
		if k != "op" {
			in[k] = v[len(v)-1]
		}
	}
	if d.OwnerData, err = machine.MergeAnnotations(d.OwnerData, in); err != nil {
		return err
	}
	if err := s.store.UpdateDevice(r.Context(), d); err != nil {
		return deviceStoreError(err)
	}
	return s.writeDevice(w, r, &d)
}

// restoreDeviceNetwork is MAAS's set_initial_networking_configuration for
// a device, for administrators: every link goes, and the first interface
// gets an AUTO address on the first subnet of its VLAN, else DHCP; the
// others are LINK_UP.
func (s *Server) restoreDeviceNetwork(w http.ResponseWriter, r *request) error {
	d, err := s.visibleDevice(r)
	if err != nil {
		return err
	}
	if !r.who.user.Admin {
		return machine.ErrForbidden
	}
	if err := s.resetDeviceLinks(r, d.SystemID); err != nil {
		return err
	}
	return s.writeDevice(w, r, &d)
}

// deviceStoreError words the store's refusals as MAAS's form errors.
func deviceStoreError(err error) error {
	var ce *store.ConflictError
	switch {
	case errors.As(err, &ce) && strings.HasPrefix(ce.What, "hostname"):
		return fielderr.Errors{"hostname": {"Node with this Hostname already exists."}}
	case errors.As(err, &ce) && strings.HasPrefix(ce.What, "mac_address"):
		mac := strings.TrimSpace(strings.TrimPrefix(ce.What, "mac_address"))
		if ce.HolderName != "" {
			return fielderr.Errors{"mac_addresses": {fmt.Sprintf("MAC address %s already in use on %s.", mac, ce.HolderName)}}
		}
		return fielderr.Errors{"mac_addresses": {fmt.Sprintf("MAC address %s already in use.", mac)}}
	}
	return err
}
