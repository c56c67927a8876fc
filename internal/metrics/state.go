package metrics

import "github.com/prometheus/client_golang/prometheus"

// StateCounts are what a shared state store (state.store: redis) and the
// decisions using it count.
type StateCounts struct {
	Up             bool   // the store answers
	StaleDecisions uint64 // decided with this replica's facts: the store could not be read in time
	Refused        uint64 // answered -32003 for that, with state.required
	ReadErrors     uint64 // reads on the answer path that failed or timed out
	Dropped        uint64 // updates dropped on a full write queue
	WriteFailures  uint64 // updates the store refused, or lost at shutdown
	ItemsEvicted   uint64 // fact entries and ids pushed out by the bounds
	Behind         bool   // this replica holds updates the store lacks (its outage backlog)
	BehindReads    uint64 // facts reads marked stale while a replica was behind
}

// TrackState exports a shared store's state, read at scrape time:
// state_up, state_behind and the state_*_total counters.
func (m *Metrics) TrackState(f func() StateCounts) {
	if m == nil || f == nil {
		return
	}
	flag := func(name, help string, pick func(StateCounts) bool) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help},
			func() float64 {
				if pick(f()) {
					return 1
				}
				return 0
			})
	}
	m.reg.MustRegister(
		flag("state_up", "1 while the shared session state store answers, else 0.",
			func(c StateCounts) bool { return c.Up }),
		flag("state_behind", "1 while this replica holds session state updates the shared store lacks (queued while it was away, not all written yet), else 0; meanwhile every replica reads facts as stale.",
			func(c StateCounts) bool { return c.Behind }),
		counterOf(f, "state_behind_reads_total", "Session facts reads marked stale because a replica (this one or another) was still writing updates it queued while the shared store was away.",
			func(c StateCounts) uint64 { return c.BehindReads }),
		counterOf(f, "state_stale_decisions_total", "Decisions whose session facts were stale: the shared store could not be read in time, a replica was still writing its backlog, or the facts were not read for the policy that judged.",
			func(c StateCounts) uint64 { return c.StaleDecisions }),
		counterOf(f, "state_refused_total", "Decisions answered -32003 because the shared store could not be read and state.required is set.",
			func(c StateCounts) uint64 { return c.Refused }),
		counterOf(f, "state_read_errors_total", "Reads of the shared store on the answer path that failed or timed out.",
			func(c StateCounts) uint64 { return c.ReadErrors }),
		counterOf(f, "state_updates_dropped_total", "Session state updates dropped because the write queue was full.",
			func(c StateCounts) uint64 { return c.Dropped }),
		counterOf(f, "state_write_failures_total", "Session state updates the store refused, or that were lost at shutdown.",
			func(c StateCounts) uint64 { return c.WriteFailures }),
		counterOf(f, "state_items_evicted_total", "Session fact entries and call ids pushed out by their bounds in the shared store.",
			func(c StateCounts) uint64 { return c.ItemsEvicted }),
	)
}
