package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/ipmisim"
)

// LoginPrompt matches the deployed Debian's getty on the serial console.
var LoginPrompt = regexp.MustCompile(`(?m)^\S+ login: `)

// machine is what the demo reads of a machine.
type machine struct {
	SystemID   string `json:"system_id"`
	Hostname   string `json:"hostname"`
	StatusName string `json:"status_name"`
	StatusMsg  string `json:"status_message"`
	Interfaces []nic  `json:"interface_set"`
}

type nic struct {
	MAC string `json:"mac_address"`
}

// provision adds the DHCP subnet, its range and the image through the
// API, boots the machine at its BMC, waits for it to enlist and be
// commissioned, deploys the image and waits for DEPLOYED and for the
// login prompt on its serial console.
func (d *run) provision(ctx context.Context) error {
	cl, err := d.client()
	if err != nil {
		return err
	}
	if err := d.step("subnet "+subnetCIDR+" with DHCP, dynamic range "+rangeStart+"-"+rangeEnd, func() error {
		if _, err := cl.CreateSubnet(ctx, url.Values{"cidr": {subnetCIDR}, "dhcp_on": {"true"}}); err != nil {
			return err
		}
		_, err := cl.CreateIPRange(ctx, url.Values{"type": {"dynamic"}, "start_ip": {rangeStart}, "end_ip": {rangeEnd}})
		return err
	}); err != nil {
		return err
	}
	if err := d.step("upload "+imageName+" ("+filepath.Base(d.image)+")", func() error {
		return uploadImage(ctx, cl, imageName, "tgz", d.image, d.key)
	}); err != nil {
		return err
	}
	b, err := d.startMachine()
	if err != nil {
		return err
	}
	var m machine
	if err := d.step("machine "+machineMAC+" to enlist (network boot into the ephemeral environment)", func() error {
		return d.wait(ctx, 10*time.Minute, func() (bool, error) {
			ms, err := machines(ctx, cl)
			for _, x := range ms {
				if slices.Contains(x.Interfaces, nic{machineMAC}) {
					m = x
					return true, nil
				}
			}
			return false, err
		})
	}); err != nil {
		return err
	}
	d.say("machine %s is %s (%s)", m.Hostname, m.SystemID, m.StatusName)
	if err := d.step("commissioning to Ready", func() error {
		return d.waitStatus(ctx, cl, m.SystemID, "Ready", 15*time.Minute)
	}); err != nil {
		return err
	}
	form := url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {strings.TrimPrefix(imageName, "custom/")},
		"hostname": {hostname}}
	if ud, err := d.userData(); err != nil {
		return err
	} else if ud != "" {
		form.Set("user_data", base64.StdEncoding.EncodeToString([]byte(ud)))
	}
	if err := d.step("deploy "+imageName+" as "+hostname+" to Deployed", func() error {
		if _, err := cl.Do(ctx, "POST", "machines/"+m.SystemID+"/", nil, form); err != nil {
			return err
		}
		return d.waitStatus(ctx, cl, m.SystemID, "Deployed", 20*time.Minute)
	}); err != nil {
		return err
	}
	if err := d.step("Debian to boot to its login prompt", func() error {
		return d.wait(ctx, 10*time.Minute, func() (bool, error) {
			out, _ := os.ReadFile(b.Serial())
			return LoginPrompt.Match(out), nil
		})
	}); err != nil {
		return err
	}
	return nil
}

// startMachine starts the lab BMC (ipmi_sim) at bmcIP with the QEMU
// machine behind it, set to boot from the network first as sites set
// their servers, and powers it on.
func (d *run) startMachine() (*ipmisim.BMC, error) {
	dir := d.path("machine")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	disk := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		return nil, err
	}
	if err := os.Truncate(disk, int64(d.cfg.DiskGiB)<<30); err != nil {
		return nil, err
	}
	b, err := ipmisim.Start(ipmisim.Config{
		Dir: dir, Netns: d.cfg.Netns, Addr: bmcIP, MAC: bmcMAC, User: bmcUser, Password: bmcPass,
		QEMU: lab.QEMUConfig{
			ID: "demo", UUID: machineID, MACs: []string{machineMAC}, NetDevs: []string{tap},
			Memory: d.cfg.Memory, Disk: disk, Accel: d.cfg.Accel,
		},
	})
	if err != nil {
		return nil, err
	}
	d.onCleanup(func() {
		pid := b.Machine().Pid()
		b.Close()
		d.say("stopped the lab BMC and the QEMU machine (pid %d)", pid)
	})
	if err := b.Machine().SetBootDevice("network", true, false); err != nil {
		return nil, err
	}
	if err := b.Machine().PowerOn(); err != nil {
		return nil, err
	}
	d.say("QEMU machine (pid %d; %s, %d MiB, %d GiB disk, network boot first) behind the BMC at %s; serial console %s",
		b.Machine().Pid(), d.cfg.Accel, d.cfg.Memory, d.cfg.DiskGiB, bmcIP, b.Serial())
	return b, nil
}

// userData gives the deployed machine's default user the SSH key, if any.
func (d *run) userData() (string, error) {
	if d.cfg.SSHKey == "" {
		return "", nil
	}
	key, err := os.ReadFile(d.cfg.SSHKey)
	if err != nil {
		return "", fmt.Errorf("ssh key: %w", err)
	}
	k, _ := json.Marshal(strings.TrimSpace(string(key)))
	return "#cloud-config\nssh_authorized_keys:\n  - " + string(k) + "\n", nil
}

func (d *run) waitStatus(ctx context.Context, cl *client.Client, id, status string, limit time.Duration) error {
	last := ""
	return d.wait(ctx, limit, func() (bool, error) {
		m, err := getMachine(ctx, cl, id)
		if err != nil {
			return false, nil // the next poll may answer
		}
		if m.StatusName != last {
			last = m.StatusName
			d.say("  %s: %s %s", m.Hostname, m.StatusName, m.StatusMsg)
		}
		if strings.HasPrefix(m.StatusName, "Failed") {
			return false, fmt.Errorf("machine %s is %s: %s (its timeline: anvil events --follow)", id, m.StatusName, m.StatusMsg)
		}
		return m.StatusName == status, nil
	})
}

// wait polls cond every second until it holds, fails, ctx ends or limit
// passes.
func (d *run) wait(ctx context.Context, limit time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func machines(ctx context.Context, cl *client.Client) ([]machine, error) {
	b, err := cl.Do(ctx, "GET", "machines/", nil, nil)
	if err != nil {
		return nil, err
	}
	var ms []machine
	return ms, json.Unmarshal(b, &ms)
}

func getMachine(ctx context.Context, cl *client.Client, id string) (machine, error) {
	var m machine
	b, err := cl.Do(ctx, "GET", "machines/"+id+"/", nil, nil)
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}
