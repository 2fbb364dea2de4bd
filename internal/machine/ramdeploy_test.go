package machine

import "testing"

// A deployment to memory: it boots the deployer on every boot, its
// release erases nothing, and Ready forgets it.
func TestDeployToMemory(t *testing.T) {
	cfg := DefaultConfig()
	m := fixture(Allocated)
	m.Owner = "alice"
	alice := Actor{Name: "alice"}
	out, err := Step(m, Input{Action: Deploy, Actor: alice, Now: tNow, Ephemeral: true}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m = out.Machine
	if !m.EphemeralDeploy || m.Status != Deploying || BootPurposeOf(&m) != BootInstall || PhaseFor(&m) != "deploying" {
		t.Fatalf("deploy: %+v boot %s", m.Status, BootPurposeOf(&m))
	}
	// The deployer reports the image running from memory.
	if out, err = Step(m, Input{Action: Succeed, Actor: SystemActor, Now: tNow}, cfg); err != nil {
		t.Fatal(err)
	}
	m = out.Machine
	if m.Status != Deployed || !m.InMemory() {
		t.Fatalf("succeed: %s", m.Status)
	}
	// Its next boot is the deployer again, with the deploying phase, and
	// the deployer's report then only notes it.
	if BootPurposeOf(&m) != BootInstall || PhaseFor(&m) != "deploying" || !m.NetbootFlag() {
		t.Fatalf("deployed in memory boots %s, phase %q", BootPurposeOf(&m), PhaseFor(&m))
	}
	again, err := Step(m, Input{Action: Succeed, Actor: SystemActor, Now: tNow}, cfg)
	if err != nil || again.Machine.Status != Deployed || len(again.Events) != 1 {
		t.Fatalf("booted again: %v %s %d events", err, again.Machine.Status, len(again.Events))
	}
	// A release asked to erase skips it: nothing was written.
	rel, err := Step(m, Input{Action: Release, Actor: alice, Now: tNow, Erase: EraseQuick}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Machine.Status != Releasing || rel.Power != PowerDown || rel.Machine.EraseMode != EraseNone {
		t.Fatalf("release: %s power %s erase %s", rel.Machine.Status, rel.Power, rel.Machine.EraseMode)
	}
	done := ApplyPower(rel.Machine, PowerReport{Action: PowerDown, State: PowerOff, Now: tNow}, cfg)
	if done.Machine.Status != Ready || done.Machine.EphemeralDeploy {
		t.Fatalf("released: %s ephemeral=%v", done.Machine.Status, done.Machine.EphemeralDeploy)
	}

	// A disk deployment is untouched by all this.
	disk := fixture(Deployed)
	if disk.EphemeralDeploy || BootPurposeOf(&disk) != BootLocal || PhaseFor(&disk) != "" {
		t.Fatalf("disk deployment boots %s", BootPurposeOf(&disk))
	}
	if _, err := Step(disk, Input{Action: Succeed, Actor: SystemActor, Now: tNow}, cfg); err == nil {
		t.Fatal("a disk deployment took a deployer's report")
	}
}

// An environment that boots for a machine deployed in memory is told to
// proceed with deploying, with the enrolment secret as for any netboot.
func TestGreetDeployedInMemory(t *testing.T) {
	m := fixture(Deployed)
	m.EphemeralDeploy = true
	h := Hello{Booted: BootInstall, MACs: []string{m.Interfaces[0].MAC}, EnrolOK: true, Now: tNow}
	o := Greet(m, h, false, DefaultConfig())
	if o.Answer != AnswerProceed || o.Phase != "deploying" {
		t.Fatalf("answer %s phase %q: %v", o.Answer, o.Phase, o.Events)
	}
}
