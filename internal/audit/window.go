package audit

import "time"

// window is a map whose entries expire after a fixed time and whose size is
// bounded: past max entries, the oldest go first. Entries are kept in
// insertion order, which is expiry order, so eviction is cheap. It is not
// safe for concurrent use.
type window[K comparable, V any] struct {
	ttl   time.Duration
	max   int
	items map[K]windowItem[V]
	order []windowKey[K] // insertion order; may hold stale keys
	// evicted counts live entries dropped because the window was full.
	evicted uint64
}

type windowItem[V any] struct {
	v     V
	added time.Time
}

type windowKey[K comparable] struct {
	k     K
	added time.Time
}

func newWindow[K comparable, V any](ttl time.Duration, max int) *window[K, V] {
	return &window[K, V]{ttl: ttl, max: max, items: make(map[K]windowItem[V])}
}

func (w *window[K, V]) get(k K, now time.Time) (V, bool) {
	it, ok := w.items[k]
	if !ok || now.Sub(it.added) > w.ttl {
		var zero V
		return zero, false
	}
	return it.v, true
}

func (w *window[K, V]) put(k K, v V, now time.Time) {
	w.items[k] = windowItem[V]{v: v, added: now}
	w.order = append(w.order, windowKey[K]{k: k, added: now})
	w.expire(now, nil)
}

func (w *window[K, V]) delete(k K) { delete(w.items, k) }

func (w *window[K, V]) len() int { return len(w.items) }

// expire drops entries older than the ttl, and the oldest ones while over
// max, calling gone (if not nil) for each entry it drops.
func (w *window[K, V]) expire(now time.Time, gone func(K, V)) {
	n := 0
	for ; n < len(w.order); n++ {
		o := w.order[n]
		it, ok := w.items[o.k]
		if !ok || !it.added.Equal(o.added) {
			continue // deleted, or re-added later: a stale key
		}
		if now.Sub(it.added) <= w.ttl && len(w.items) <= w.max {
			break
		}
		if now.Sub(it.added) <= w.ttl {
			w.evicted++
		}
		delete(w.items, o.k)
		if gone != nil {
			gone(o.k, it.v)
		}
	}
	w.order = w.order[n:]
	if cap(w.order) > 4*len(w.order)+64 {
		w.order = append([]windowKey[K](nil), w.order...) // let the old array go
	}
}
