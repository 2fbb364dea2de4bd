package machine

// BootPurpose is what a machine that network-boots should be given.
type BootPurpose string

const (
	// BootEnlist is for machines Anvil does not know: the ephemeral
	// environment, which asks whether it is known before enlisting.
	BootEnlist BootPurpose = "enlist"
	// BootEphemeral runs the ephemeral environment for a phase Anvil
	// drives (commissioning, testing, erasing, rescue).
	BootEphemeral BootPurpose = "ephemeral"
	// BootInstall runs the ephemeral environment to write an image.
	BootInstall BootPurpose = "install"
	// BootLocal boots the machine's own disk.
	BootLocal BootPurpose = "local"
	// BootPowerOff tells the firmware there is nothing to boot; the
	// machine should be off.
	BootPowerOff BootPurpose = "poweroff"
)

// PurposeOf decides a known machine's boot by its status, as MAAS does:
// phases Anvil drives in the ephemeral environment netboot it, deploying
// installs, deployed boots its disk, and anything else should be off.
func PurposeOf(s Status) BootPurpose {
	switch s {
	case New, Commissioning, Testing, Releasing, DiskErasing, EnteringRescueMode, RescueMode:
		return BootEphemeral
	case Deploying:
		return BootInstall
	case Deployed:
		return BootLocal
	}
	return BootPowerOff
}

// BootPurposeOf decides a known machine's boot: PurposeOf its status,
// except that a deploying machine whose image is on its disk (Netboot
// off) boots that disk, and so does a deployed machine leaving rescue
// mode: the rack's local answer is what shows it booted.
func BootPurposeOf(m *Machine) BootPurpose {
	if m.AwaitsLocalBoot() || m.LeavesRescueForDisk() {
		return BootLocal
	}
	if m.InMemory() {
		return BootInstall
	}
	return PurposeOf(m.Status)
}

// InMemory says the machine is deployed to memory: its disk holds nothing
// of the deployment, so each of its boots is a network boot into the
// deployer, which runs the same deployment from memory again (as MAAS
// re-deploys an ephemeral deployment on every boot).
func (m *Machine) InMemory() bool { return m.Status == Deployed && m.EphemeralDeploy }

// PhaseFor names the work the environment does for m: PhaseOf its status,
// and deploying again for a machine deployed to memory.
func PhaseFor(m *Machine) string {
	if m.InMemory() {
		return PhaseOf(Deploying)
	}
	return PhaseOf(m.Status)
}

// AwaitsLocalBoot says the machine is deploying and its image is on disk:
// its next boot from disk ends the phase.
func (m *Machine) AwaitsLocalBoot() bool { return m.Status == Deploying && !m.Netboot }

// LeavesRescueForDisk says the machine is leaving rescue mode back to its
// deployed OS: its next boot from disk ends the exit.
func (m *Machine) LeavesRescueForDisk() bool {
	return m.Status == ExitingRescueMode && m.PreviousStatus == Deployed
}

// EndsOnLocalBoot says the rack answering the machine's network boot with
// a local boot is news for its status (AwaitsLocalBoot or
// LeavesRescueForDisk).
func (m *Machine) EndsOnLocalBoot() bool { return m.AwaitsLocalBoot() || m.LeavesRescueForDisk() }

// ownerless are the statuses in which MAAS keeps no owner: a rescue that
// returns to one gives back the machine it lent to the rescuer.
func ownerless(s Status) bool {
	switch s {
	case New, FailedCommissioning, Ready, Missing, Retired, Commissioning:
		return true
	}
	return false
}
