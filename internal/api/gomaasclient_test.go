package api_test

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"
)

// TestGomaasclient drives Anvil with the client of terraform-provider-maas
// (gomaasclient), call by call, as the provider's resources for machines,
// zones, pools, tags, users, keys, subnets, ranges, images and settings
// make them. Every call must succeed and give back what was asked for.
func TestGomaasclient(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
		if err != nil {
			t.Fatal(err)
		}
		e.defaultImage()
		var id string
		var subnetID, rangeID, keyID, poolID int
		var tokenKey string
		calls := []struct {
			name string
			call func() error
		}{
			{"Version.Get", func() error {
				v, err := c.Version.Get()
				if err == nil && v.Version == "" {
					err = fmt.Errorf("no version in %+v", v)
				}
				return err
			}},
			{"MAASServer.Post", func() error { return c.MAASServer.Post("maas_name", "tf-site") }},
			{"MAASServer.Get", func() error {
				b, err := c.MAASServer.Get("maas_name")
				if err == nil && !strings.Contains(string(b), "tf-site") {
					err = fmt.Errorf("maas_name = %s", b)
				}
				return err
			}},
			{"Zones.Create", func() error {
				_, err := c.Zones.Create(&entity.ZoneParams{Name: "tf-zone", Description: "from terraform"})
				return err
			}},
			{"Zone.Update", func() error {
				z, err := c.Zone.Update("tf-zone", &entity.ZoneParams{Name: "tf-zone", Description: "changed"})
				if err == nil && z.Description != "changed" {
					err = fmt.Errorf("zone %+v", z)
				}
				return err
			}},
			{"Zones.Get", func() error {
				zs, err := c.Zones.Get()
				if err == nil && len(zs) != 2 {
					err = fmt.Errorf("%d zones", len(zs))
				}
				return err
			}},
			{"ResourcePools.Create", func() error {
				p, err := c.ResourcePools.Create(&entity.ResourcePoolParams{Name: "tf-pool", Description: "gpu"})
				if err == nil {
					poolID = p.ID
				}
				return err
			}},
			{"ResourcePool.Get", func() error {
				p, err := c.ResourcePool.Get(poolID)
				if err == nil && p.Name != "tf-pool" {
					err = fmt.Errorf("pool %+v", p)
				}
				return err
			}},
			{"ResourcePool.GetByName", func() error { _, err := c.ResourcePool.GetByName("tf-pool"); return err }},
			{"Machines.Create", func() error {
				m, err := c.Machines.Create(&entity.MachineParams{Hostname: "tf-1", Architecture: "amd64/generic",
					MACAddresses: []string{"52:54:00:7f:00:01"}, PowerType: "manual", Zone: "tf-zone", Pool: "tf-pool"}, nil)
				if err == nil {
					id = m.SystemID
				}
				return err
			}},
			{"Machine.Get", func() error {
				m, err := c.Machine.Get(id)
				if err == nil && (m.Hostname != "tf-1" || m.Zone.Name != "tf-zone" || m.Pool.Name != "tf-pool") {
					err = fmt.Errorf("machine %s in %s/%s", m.Hostname, m.Zone.Name, m.Pool.Name)
				}
				return err
			}},
			{"Machine.Update", func() error {
				m, err := c.Machine.Update(id, &entity.MachineParams{Description: "rack 4 slot 2"}, nil)
				if err == nil && m.Description != "rack 4 slot 2" {
					err = fmt.Errorf("description %q", m.Description)
				}
				return err
			}},
			{"Machines.Get", func() error {
				ms, err := c.Machines.Get(&entity.MachinesParams{Hostname: []string{"tf-1"}})
				if err == nil && len(ms) != 1 {
					err = fmt.Errorf("%d machines", len(ms))
				}
				return err
			}},
			{"Machine.GetPowerParameters", func() error { _, err := c.Machine.GetPowerParameters(id); return err }},
			{"Machine.GetPowerState", func() error { _, err := c.Machine.GetPowerState(id); return err }},
			{"Tags.Create", func() error {
				_, err := c.Tags.Create(&entity.TagParams{Name: "tf-tag", Comment: "fast"})
				return err
			}},
			{"Tag.AddMachines", func() error { return c.Tag.AddMachines("tf-tag", []string{id}) }},
			{"Tag.GetMachines", func() error {
				ms, err := c.Tag.GetMachines("tf-tag")
				if err == nil && (len(ms) != 1 || ms[0].SystemID != id) {
					err = fmt.Errorf("tagged %+v", ms)
				}
				return err
			}},
			{"Tag.RemoveMachines", func() error { return c.Tag.RemoveMachines("tf-tag", []string{id}) }},
			{"Tag.Delete", func() error { return c.Tag.Delete("tf-tag") }},
			{"Machine.Details", func() error { _, err := c.Machine.Details(id); return err }},
			{"RackControllers.Get", func() error {
				_, err := c.RackControllers.Get(&entity.RackControllersGetParams{})
				return err
			}},
			{"BootSources.Get", func() error {
				bs, err := c.BootSources.Get()
				if err == nil && len(bs) != 1 {
					err = fmt.Errorf("%d boot sources", len(bs))
				}
				return err
			}},
			{"BootSourceSelections.Get", func() error {
				sel, err := c.BootSourceSelections.Get(1)
				if err == nil && len(sel) == 0 {
					err = fmt.Errorf("no selections for the uploaded image")
				}
				return err
			}},
			{"Account.CreateAuthorisationToken", func() error {
				tok, err := c.Account.CreateAuthorisationToken("terraform")
				if err == nil {
					tokenKey = tok.TokenKey
				}
				return err
			}},
			{"Account.ListAuthorisationTokens", func() error {
				ts, err := c.Account.ListAuthorisationTokens()
				found := false
				for _, tk := range ts {
					found = found || tk.Name == "terraform"
				}
				if err == nil && !found {
					err = fmt.Errorf("tokens %+v", ts)
				}
				return err
			}},
			{"Account.UpdateTokenName", func() error { return c.Account.UpdateTokenName("terraform-ci", tokenKey) }},
			{"Account.DeleteAuthorisationToken", func() error { return c.Account.DeleteAuthorisationToken(tokenKey) }},
			{"Machine.MarkBroken", func() error { _, err := c.Machine.MarkBroken(id, "fan"); return err }},
			{"Machine.MarkFixed", func() error { _, err := c.Machine.MarkFixed(id, "fixed"); return err }},
			{"Users.Create", func() error {
				_, err := c.Users.Create(&entity.UserParams{UserName: "tf-user", Password: "s3cret-pass", Email: "tf@example.org"})
				return err
			}},
			{"User.Get", func() error { _, err := c.User.Get("tf-user"); return err }},
			{"Users.Get", func() error { _, err := c.Users.Get(); return err }},
			{"SSHKeys.Create", func() error {
				k, err := c.SSHKeys.Create(testKey(9, "tf@desk"))
				if err == nil {
					keyID = k.ID
				}
				return err
			}},
			{"SSHKey.Get", func() error { _, err := c.SSHKey.Get(keyID); return err }},
			{"SSHKeys.Get", func() error { _, err := c.SSHKeys.Get(); return err }},
			{"SSHKey.Delete", func() error { return c.SSHKey.Delete(keyID) }},
			{"Subnets.Create", func() error {
				s, err := c.Subnets.Create(&entity.SubnetParams{CIDR: "198.51.100.0/24", Name: "tf-net", GatewayIP: "198.51.100.1",
					DNSServers: []string{"198.51.100.53"}, Managed: true, AllowDNS: true})
				if err == nil {
					subnetID = s.ID
				}
				return err
			}},
			{"Subnet.Get", func() error {
				s, err := c.Subnet.Get(subnetID)
				if err == nil && (s.CIDR != "198.51.100.0/24" || s.GatewayIP.String() != "198.51.100.1") {
					err = fmt.Errorf("subnet %+v", s)
				}
				return err
			}},
			{"IPRanges.Create", func() error {
				r, err := c.IPRanges.Create(&entity.IPRangeParams{Type: "dynamic", Subnet: strconv.Itoa(subnetID),
					StartIP: "198.51.100.100", EndIP: "198.51.100.150", Comment: "pool"})
				if err == nil {
					rangeID = r.ID
				}
				return err
			}},
			{"IPRange.Get", func() error {
				r, err := c.IPRange.Get(rangeID)
				if err == nil && (r.StartIP.String() != "198.51.100.100" || r.Subnet.ID != subnetID) {
					err = fmt.Errorf("range %+v", r)
				}
				return err
			}},
			{"IPRanges.Get", func() error { _, err := c.IPRanges.Get(); return err }},
			{"IPRange.Delete", func() error { return c.IPRange.Delete(rangeID) }},
			{"Subnet.Delete", func() error { return c.Subnet.Delete(subnetID) }},
			{"BootResources.Get", func() error {
				rs, err := c.BootResources.Get(&entity.BootResourcesReadParams{})
				if err == nil && len(rs) != 1 {
					err = fmt.Errorf("%d boot resources", len(rs))
				}
				return err
			}},
			{"BootResources.IsImporting", func() error { _, err := c.BootResources.IsImporting(); return err }},
			{"Events.Get", func() error {
				ev, err := c.Events.Get(&entity.EventParams{ID: id, Limit: "20"})
				if err == nil && len(ev.Events) == 0 {
					err = fmt.Errorf("no events for %s", id)
				}
				return err
			}},
			{"Machines.Allocate", func() error {
				_, err := e.srv.Store.GetMachine(t.Context(), id)
				if err != nil {
					return err
				}
				e.ready(id)
				m, err := c.Machines.Allocate(&entity.MachineAllocateParams{Zone: "tf-zone"})
				if err == nil && m.SystemID != id {
					err = fmt.Errorf("allocated %s", m.SystemID)
				}
				return err
			}},
			{"Machines.ListAllocated", func() error {
				ms, err := c.Machines.ListAllocated()
				if err == nil && (len(ms) != 1 || ms[0].SystemID != id) {
					err = fmt.Errorf("allocated: %+v", ms)
				}
				return err
			}},
			{"Machine.Deploy", func() error {
				m, err := c.Machine.Deploy(id, &entity.MachineDeployParams{DistroSeries: "noble",
					UserData: base64.StdEncoding.EncodeToString([]byte("#cloud-config\n{}\n"))})
				if err == nil && m.StatusName != "Deploying" {
					err = fmt.Errorf("status %s", m.StatusName)
				}
				return err
			}},
			{"Machine.SetWorkloadAnnotations", func() error {
				m, err := c.Machine.SetWorkloadAnnotations(id, map[string]string{"env": "prod"})
				if err == nil && m.WorkloadAnnotations["env"] != "prod" {
					err = fmt.Errorf("annotations %v", m.WorkloadAnnotations)
				}
				return err
			}},
			{"Machine.Lock", func() error {
				m, err := c.Machine.Lock(id, "change freeze")
				if err == nil && !m.Locked {
					err = fmt.Errorf("not locked")
				}
				return err
			}},
			{"Machine.Abort refused while locked", func() error {
				if _, err := c.Machine.Abort(id, "no"); err == nil || !strings.Contains(err.Error(), "locked") {
					return fmt.Errorf("abort of a locked machine: %v", err)
				}
				return nil
			}},
			{"Machine.Unlock", func() error { _, err := c.Machine.Unlock(id, "thaw"); return err }},
			{"Machine.GetToken", func() error { _, err := c.Machine.GetToken(id); return err }},
			{"Machines.AcceptAll", func() error { return c.Machines.AcceptAll() }},
			{"Machine.Abort", func() error { _, err := c.Machine.Abort(id, "changed my mind"); return err }},
			{"Machine.Release", func() error {
				_, err := c.Machine.Release(id, &entity.MachineReleaseParams{Comment: "done"})
				return err
			}},
			{"Machine.Delete", func() error { return c.Machine.Delete(id) }},
			{"ResourcePool.Delete", func() error { return c.ResourcePool.Delete(poolID) }},
			{"Zone.Delete", func() error { return c.Zone.Delete("tf-zone") }},
			{"User.Delete", func() error { return c.User.Delete("tf-user") }},
		}
		for _, cl := range calls {
			if err := cl.call(); err != nil {
				t.Errorf("%s: %v", cl.name, err)
			}
		}
	})
}
