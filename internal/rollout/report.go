package rollout

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// changeNames are the words the text report uses.
var changeNames = map[Change]string{
	NewlyDenied: "newly denied", NewlyAllowed: "newly allowed", ReasonChanged: "reason changed",
	NowError: "now an error", NoLongerError: "no longer an error",
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the report for a person: the counts, the counts by
// rule, then each changed event.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%d tool.before decisions replayed from %d lines\n", r.Events, r.Lines)
	if s := r.Skipped; s.Malformed+s.TooLong+s.WithoutInput > 0 {
		fmt.Fprintf(tw, "skipped: %d malformed, %d too long, %d decisions without input\n",
			s.Malformed, s.TooLong, s.WithoutInput)
	}
	fmt.Fprintln(tw)
	for _, row := range []struct {
		name string
		n    int
	}{
		{"unchanged", r.Unchanged}, {changeNames[NewlyDenied], r.NewlyDenied}, {changeNames[NewlyAllowed], r.NewlyAllowed},
		{changeNames[ReasonChanged], r.ReasonChanged}, {changeNames[NowError], r.NowError},
		{changeNames[NoLongerError], r.NoLongerError},
	} {
		if row.n > 0 || row.name == "unchanged" {
			fmt.Fprintf(tw, "%s\t%d\n", row.name, row.n)
		}
	}
	if len(r.Rules) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "rule\tnewly denied\tnewly allowed\treason changed\tnow an error")
		for _, name := range r.sortedRules() {
			c := r.Rules[name]
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", name, c.NewlyDenied, c.NewlyAllowed, c.ReasonChanged, c.NowError)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Changed) == 0 {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "id\ttime\ttool\tcommand or path\tbefore → after\tchange\trule")
	for _, c := range r.Changed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s → %s\t%s\t%s\n", c.ID, c.Time.UTC().Format(time.RFC3339), c.Tool,
			c.Subject, c.Before, c.After, changeNames[c.Change], c.Rule)
	}
	if r.ChangedNotListed > 0 {
		fmt.Fprintf(tw, "… and %d more changed events\n", r.ChangedNotListed)
	}
	return tw.Flush()
}
