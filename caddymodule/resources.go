package caddymodule

import (
	"sync"

	"github.com/llmstream/llmstream/toolserver"
)

// Resource updates (CONTRACT.md §13, specs/002 §3.6): while a stream is
// open, the updates of the resources its route subscribes to
// (toolserver.Watch) are written to it as the protocol shows them
// (skillpet resource_updated, aisdk data-resource-updated). A tool server
// must never wait for a slow client, so the latest update of each key is
// kept and written when the stream is free, as progress is.

// updatePump hands resource updates to a stream from a goroutine of its
// own.
type updatePump struct {
	sw      *streamWriter
	mu      sync.Mutex
	latest  map[string]toolserver.Update
	order   []string
	wake    chan struct{}
	done    chan struct{}
	unwatch func()
}

// watchResources starts handing the route's resource updates to sw; nil
// without tool servers. stop ends it.
func (h *Handler) watchResources(sw *streamWriter, tools *offer) *updatePump {
	if h.servers == nil {
		return nil
	}
	up := &updatePump{sw: sw, latest: map[string]toolserver.Update{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	var resolve toolserver.Resolver
	if tools != nil {
		resolve = tools.resolver
	}
	up.unwatch = h.servers.Watch(resolve, up.push)
	go up.run()
	return up
}

// stop stops the pump, and returns once nothing more is written.
func (up *updatePump) stop() {
	if up == nil {
		return
	}
	up.unwatch()
	close(up.wake)
	<-up.done
}

// flush writes what the pump holds now, from the caller's goroutine: the
// updates a round's calls caused go out before the next round.
func (up *updatePump) flush() {
	if up == nil {
		return
	}
	up.mu.Lock()
	batch, order := up.latest, up.order
	up.latest, up.order = map[string]toolserver.Update{}, nil
	up.mu.Unlock()
	for _, k := range order {
		up.sw.resourceUpdated(batch[k])
	}
}

// push keeps the latest update of its key; it never blocks.
func (up *updatePump) push(u toolserver.Update) {
	up.mu.Lock()
	if _, ok := up.latest[u.Key]; !ok {
		up.order = append(up.order, u.Key)
	}
	up.latest[u.Key] = u
	up.mu.Unlock()
	select {
	case up.wake <- struct{}{}:
	default:
	}
}

// run writes the updates, in the order their keys first came, until stop.
func (up *updatePump) run() {
	defer close(up.done)
	for range up.wake {
		up.flush()
	}
}

// resourceUpdated writes a resource update.
func (sw *streamWriter) resourceUpdated(u toolserver.Update) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.gone {
		return
	}
	sw.out = sw.p.ResourceUpdated(sw.out[:0], u.Key, u.Snapshot)
	sw.send()
}
