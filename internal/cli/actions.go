package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/anvilmetal/anvil/internal/client"
)

// action is a machine command that maps onto one MAAS op.
type action struct {
	use, op, short string
	// flags registers the command's flags and returns what turns them into
	// the op's form parameters.
	flags func(*pflag.FlagSet) params
}

// params turns a command's flags into the op's form parameters, or says
// why they cannot be (a file that does not read).
type params func() (url.Values, error)

// commentFlag is the --comment flag most actions take; MAAS records it in
// the machine's event log.
func commentFlag(fs *pflag.FlagSet) params {
	comment := fs.String("comment", "", "comment recorded with the action")
	return func() (url.Values, error) { return setNonEmpty(url.Values{}, "comment", *comment), nil }
}

func noFlags(*pflag.FlagSet) params { return func() (url.Values, error) { return url.Values{}, nil } }

var actions = []action{
	{"commission", "commission", "Commission a machine (inventory its hardware)", noFlags},
	{"deploy", "deploy", "Deploy an operating system to an allocated machine", deployFlags},
	{"release", "release", "Release a machine back to the pool", func(fs *pflag.FlagSet) params {
		erase := fs.Bool("erase", false, "erase the disks")
		quick := fs.Bool("quick-erase", false, "erase quickly: wipe only the start and end of each disk (implies --erase)")
		secure := fs.Bool("secure-erase", false, "use the disks' secure erase (implies --erase)")
		comment := commentFlag(fs)
		return func() (url.Values, error) {
			v, _ := comment()
			// MAAS ignores quick_erase and secure_erase unless erase is set.
			if *erase || *quick || *secure {
				v.Set("erase", "true")
			}
			if *quick {
				v.Set("quick_erase", "true")
			}
			if *secure {
				v.Set("secure_erase", "true")
			}
			return v, nil
		}
	}},
	{"abort", "abort", "Abort a machine's current operation", commentFlag},
	{"mark-broken", "mark_broken", "Mark a machine broken", commentFlag},
	{"mark-fixed", "mark_fixed", "Mark a broken machine fixed", commentFlag},
	{"power-on", "power_on", "Power a machine on", commentFlag},
	{"power-off", "power_off", "Power a machine off", commentFlag},
	{"rescue-mode", "rescue_mode", "Boot a machine into the rescue environment", commentFlag},
	{"exit-rescue-mode", "exit_rescue_mode", "Take a machine out of rescue mode", commentFlag},
	{"test", "test", "Run a machine's hardware tests", commentFlag},
}

func actionCmds(o *options) []*cobra.Command {
	var cmds []*cobra.Command
	for _, a := range actions {
		cmds = append(cmds, opCmd(o, a.use+" ID", a.short, a.flags,
			func(ctx context.Context, c *client.Client, id string, params url.Values) (client.Machine, error) {
				return c.MachineOp(ctx, id, a.op, params)
			}))
	}
	// Allocation is an op on the collection, and power-state a query; both
	// still end by showing the machine.
	cmds = append(cmds,
		opCmd(o, "allocate ID", "Allocate (claim) a Ready machine, as deploy requires", commentFlag,
			func(ctx context.Context, c *client.Client, id string, params url.Values) (client.Machine, error) {
				// Allocating an unknown id is a 409 ("no machine matches"),
				// not a 404; look the machine up first so a hostname works.
				if _, err := c.GetMachine(ctx, id); err != nil {
					return client.Machine{}, err
				}
				return c.AllocateMachine(ctx, id, params)
			}),
		opCmd(o, "power-state ID", "Ask the server to check a machine's power now", noFlags,
			func(ctx context.Context, c *client.Client, id string, _ url.Values) (client.Machine, error) {
				ps, err := c.QueryPowerState(ctx, id)
				if err != nil {
					return client.Machine{}, err
				}
				m, err := c.GetMachine(ctx, id)
				if err == nil {
					m.PowerState = ps.State // what was just checked, whatever the record says
				}
				return m, err
			}),
	)
	return cmds
}

// opCmd builds a command that runs one action on the machine named by its
// argument and prints where the machine ended up.
func opCmd(o *options, use, short string, flags func(*pflag.FlagSet) params,
	run func(context.Context, *client.Client, string, url.Values) (client.Machine, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1)}
	form := flags(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON for the machine")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := o.client()
		if err != nil {
			return err
		}
		f, err := form()
		if err != nil {
			return err
		}
		var m client.Machine
		_, err = withMachine(cmd.Context(), c, args[0], func(id string) (err error) {
			m, err = run(cmd.Context(), c, id, f)
			return err
		})
		if err != nil {
			return err
		}
		return printResult(cmd, m, asJSON)
	}
	return cmd
}

// setNonEmpty sets k only when v says something, so the server's defaults
// apply to everything the user left out.
func setNonEmpty(v url.Values, k, s string) url.Values {
	if s != "" {
		v.Set(k, s)
	}
	return v
}

// deployFlags name the image as the server lists it (--image custom/NAME,
// ubuntu/noble; a bare NAME is a custom image) or as MAAS's osystem and
// distro_series, and the cloud-init user data the machine gets.
func deployFlags(fs *pflag.FlagSet) params {
	image := fs.String("image", "", "image to deploy, as boot-resources lists it: custom/NAME (or NAME), ubuntu/noble (default: the server's)")
	series := fs.String("distro-series", "", "release to deploy, e.g. noble (default: the server's)")
	osys := fs.String("osystem", "", "operating system, e.g. ubuntu or custom (default: the server's)")
	userData := fs.String("user-data", "", "file of cloud-init user data for the deployed OS (- for standard input)")
	hostname := fs.String("hostname", "", "hostname the deployed machine takes")
	return func() (url.Values, error) {
		v := url.Values{}
		o, s := *osys, *series
		if *image != "" {
			if s != "" || o != "" {
				return nil, fmt.Errorf("--image names the osystem and distro series; give it or --osystem/--distro-series, not both")
			}
			var ok bool
			if o, s, ok = strings.Cut(*image, "/"); !ok {
				o, s = "custom", *image
			}
		}
		setNonEmpty(setNonEmpty(v, "distro_series", s), "osystem", o)
		setNonEmpty(v, "hostname", *hostname)
		if *userData != "" {
			var b []byte
			var err error
			if *userData == "-" {
				b, err = io.ReadAll(io.LimitReader(os.Stdin, maxUserData+1))
			} else {
				b, err = os.ReadFile(*userData)
			}
			if err != nil {
				return nil, fmt.Errorf("--user-data: %w", err)
			}
			if len(b) > maxUserData {
				return nil, fmt.Errorf("--user-data: %d bytes; the server takes at most 1 MiB", len(b))
			}
			v.Set("user_data", base64.StdEncoding.EncodeToString(b))
		}
		return v, nil
	}
}

const maxUserData = 1 << 20
