package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

// eventFilter holds the events command's filters.
type eventFilter struct {
	hostnames, ids []string
	level          string
	limit          int
}

func (f eventFilter) query() url.Values {
	q := url.Values{"hostname": f.hostnames, "id": f.ids}
	setNonEmpty(q, "level", f.level)
	if f.limit > 0 {
		q.Set("limit", strconv.Itoa(f.limit))
	}
	for k, v := range q {
		if len(v) == 0 {
			delete(q, k)
		}
	}
	return q
}

// levelRank orders levels as the server does, so that --level INFO shows
// warnings and errors too, in streamed events as in queried ones.
var levelRank = map[string]int{"DEBUG": 10, "INFO": 20, "AUDIT": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}

// match applies the filters to a streamed event. Anvil filters the stream
// itself; this keeps --follow right against a server that does not.
func (f eventFilter) match(e client.Event) bool {
	if len(f.hostnames) > 0 && !slices.Contains(f.hostnames, e.Hostname) {
		return false
	}
	if len(f.ids) > 0 && !slices.Contains(f.ids, e.Node) {
		return false
	}
	return f.level == "" || levelRank[strings.ToUpper(e.Level)] >= levelRank[strings.ToUpper(f.level)]
}

func (f eventFilter) filtered() bool { return len(f.hostnames) > 0 || len(f.ids) > 0 || f.level != "" }

func eventsCmd(o *options) *cobra.Command {
	var f eventFilter
	var follow, asJSON bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the event log, oldest first; --follow streams new events",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if follow {
				// Interrupting --follow is how it is meant to end: exit 0.
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			page, err := c.QueryEvents(ctx, f.query())
			if err != nil {
				if follow && ctx.Err() != nil {
					return nil
				}
				return err
			}
			if asJSON && !follow {
				return printJSON(cmd.OutOrStdout(), page.Raw)
			}
			// The server answers newest first; a log reads oldest first.
			evs := page.Events
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].ID < evs[j].ID })
			out := newEventPrinter(cmd.OutOrStdout(), asJSON, evs)
			if !follow {
				return nil
			}
			return followEvents(ctx, cmd.ErrOrStderr(), c, f, evs, out)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.hostnames, "hostname", nil, "only events of machines with this hostname")
	fl.StringSliceVar(&f.ids, "id", nil, "only events of the machine with this system id")
	fl.StringVar(&f.level, "level", "", "only events at this level or above: DEBUG, INFO, WARNING, ERROR, CRITICAL")
	fl.IntVar(&f.limit, "limit", 0, "at most this many events, the latest (default: the server's)")
	fl.BoolVarP(&follow, "follow", "f", false, "after the latest events, print new ones as they happen until interrupted")
	fl.BoolVar(&asJSON, "json", false, "print the server's JSON (with --follow: one event per line)")
	return cmd
}

// followEvents streams events after the ones already printed until ctx
// ends, which is a normal end, not an error. Reconnects are reported on
// stderr, so the user knows why the stream went quiet.
func followEvents(ctx context.Context, stderr io.Writer, c *client.Client, f eventFilter, printed []client.Event, out func(client.Event)) error {
	after, err := streamStart(ctx, c, f, printed)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	c.OnWatchRetry = func(err error, wait time.Duration) {
		fmt.Fprintf(stderr, "event stream interrupted (%v); reconnecting in %s\n", err, wait)
	}
	err = c.WatchEventsFiltered(ctx, f.query(), after, func(e client.Event) error {
		if f.match(e) {
			out(e)
		}
		return nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// streamStart returns the id to stream after. It is the newest event
// printed; with filters that matched nothing it is the newest event of all,
// which saves streaming the whole history only to filter it away.
func streamStart(ctx context.Context, c *client.Client, f eventFilter, printed []client.Event) (int64, error) {
	if len(printed) > 0 {
		return printed[len(printed)-1].ID, nil
	}
	if !f.filtered() {
		return 0, nil
	}
	page, err := c.QueryEvents(ctx, url.Values{"limit": {"1"}})
	if err != nil || len(page.Events) == 0 {
		return 0, err
	}
	return page.Events[0].ID, nil
}

// newEventPrinter prints evs and returns a function that prints one more
// event the same way: as a table row aligned with those above it, or as a
// line of JSON.
func newEventPrinter(w io.Writer, asJSON bool, evs []client.Event) func(client.Event) {
	if asJSON {
		out := func(e client.Event) {
			var b bytes.Buffer
			if json.Compact(&b, e.Raw) == nil {
				fmt.Fprintln(w, b.String())
			}
		}
		for _, e := range evs {
			out(e)
		}
		return out
	}
	rows := make([][]string, len(evs))
	for i, e := range evs {
		rows[i] = eventRow(e)
	}
	t := printTable(w, "", []string{"TIME", "HOSTNAME", "LEVEL", "TYPE", "DESCRIPTION", "USER"}, rows)
	return func(e client.Event) { t.row(eventRow(e)...) }
}

func eventRow(e client.Event) []string {
	return []string{eventTime(e.Created), e.Hostname, e.Level, e.Type, e.Description, e.Username}
}

// maasTime is how MAAS (and Anvil, in UTC) writes an event's time.
const maasTime = "Mon, 02 Jan. 2006 15:04:05"

// eventTime shows an event's time in local time, to the second, sortable.
// MAAS's format carries no zone; Anvil writes it in UTC, and so do MAAS
// regions as usually installed. Anything unparseable is shown as sent.
func eventTime(s string) string {
	for _, layout := range []string{maasTime, time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.Local().Format("2006-01-02 15:04:05")
		}
	}
	return s
}
