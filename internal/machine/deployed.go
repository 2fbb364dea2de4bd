package machine

import "fmt"

// DeployedAt is what makes a deployment of an image DEPLOYED, a setting of
// each image (boot resource).
type DeployedAt string

const (
	// DeployedAtOS, the default: the installed OS reports that it is up
	// (cloud-init's phone_home, with the deployment's own token), as MAAS
	// waits for cloud-init. The rack serving the disk boot shows only that
	// the firmware was sent to the disk, not that an OS came up.
	DeployedAtOS DeployedAt = "os"
	// DeployedAtLocalBoot is for images without cloud-init: the first
	// local-boot answer after the image is written ends the deployment.
	DeployedAtLocalBoot DeployedAt = "local_boot"
)

// ParseDeployedAt reads an image's setting; "" is DeployedAtOS.
func ParseDeployedAt(s string) (DeployedAt, error) {
	switch DeployedAt(s) {
	case "", DeployedAtOS:
		return DeployedAtOS, nil
	case DeployedAtLocalBoot:
		return DeployedAtLocalBoot, nil
	}
	return "", fmt.Errorf("%q is not %s (the deployed OS reports it is up) or %s (deployed when it boots from its disk)",
		s, DeployedAtOS, DeployedAtLocalBoot)
}
