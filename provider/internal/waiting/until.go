package waiting

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
)

// Options tune Until. Zero values take the defaults.
type Options struct {
	Timeout time.Duration
	// PollInterval is the pace of the fallback when the watch cannot be used.
	PollInterval time.Duration
	// ProgressInterval is how often Progress hears where things stand.
	ProgressInterval time.Duration
	// Progress, when set, is called every ProgressInterval while waiting.
	Progress func(st State, elapsed time.Duration)
	// FinalCheckTimeout bounds the last read made after the deadline.
	FinalCheckTimeout time.Duration
}

const (
	DefaultPollInterval     = 2 * time.Second
	DefaultProgressInterval = 10 * time.Second
	defaultFinalCheck       = 15 * time.Second
)

// Result is the last object seen (nil if it never existed) and its State.
type Result struct {
	Object *unstructured.Unstructured
	State  State
	// Watched is false when the wait fell back to polling.
	Watched bool
}

// TimeoutError is returned when the deadline passed without the Spec being met.
type TimeoutError struct {
	Timeout time.Duration
	Last    Result
	// ReadErr is the last error reading the object, if reads failed.
	ReadErr error
	// Operation, when set, is the deadline of the operation the wait was
	// part of (a timeouts block, or Pulumi's customTimeouts), which ran out
	// before Timeout did.
	Operation *optimeout.Exceeded
}

// Unwrap gives the operation's deadline, when that is what ended the wait.
func (e *TimeoutError) Unwrap() error {
	if e.Operation == nil {
		return nil
	}
	return e.Operation
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("not done after %s: %s", e.Timeout, e.Last.State.Summary)
	if e.Operation != nil {
		msg = e.Operation.Error() + ": " + e.Last.State.Summary
	}
	if e.ReadErr != nil {
		msg += fmt.Sprintf(" (last read failed: %v)", e.ReadErr)
	}
	return msg
}

// StuckError is returned as soon as the object reaches a state the Spec can no
// longer be met from (State.Stuck).
type StuckError struct{ Last Result }

func (e *StuckError) Error() string { return "cannot succeed: " + e.Last.State.Summary }

// Until waits until eval says the named object is done, the object appears if
// it does not exist yet, or opts.Timeout passes.
//
// It lists the object to learn the current resourceVersion and watches from
// there, so no change between the read and the watch is lost; if listing or
// watching is refused or breaks, it polls with Get instead. When the deadline
// passes it reads the object once more and judges that, because the last watch
// event may lag a write that already satisfied the wait.
func Until(ctx context.Context, ri dynamic.ResourceInterface, name string, eval func(*unstructured.Unstructured) State, opts Options) (Result, error) {
	opts = opts.withDefaults()
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	w := &waiter{ri: ri, name: name, eval: eval, opts: opts}
	stopProgress := w.reportProgress(start)
	err := w.run(wctx)
	stopProgress()

	res, readErr := w.snapshot()
	var stuck *StuckError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &stuck):
		return res, err
	case optimeout.Ran(ctx) != nil:
		// The operation's deadline, before the wait's own: no request
		// outlives it, so no last read either; the last state seen is
		// what the error reports.
		if readErr != nil && ownDeadline(readErr) {
			readErr = nil // cut by that deadline: nothing the server said
		}
		return res, &TimeoutError{Timeout: opts.Timeout, Last: res, ReadErr: readErr, Operation: optimeout.Ran(ctx)}
	case ctx.Err() != nil:
		// Cancelled from outside (Ctrl-C), not our deadline.
		return res, fmt.Errorf("wait cancelled: %w", ctx.Err())
	}

	fctx, fcancel := context.WithTimeout(ctx, opts.FinalCheckTimeout)
	defer fcancel()
	obj, gerr := w.get(fctx)
	if gerr == nil {
		res = w.observe(obj)
		if res.State.Met {
			return res, nil
		}
		readErr = nil
	} else if readErr == nil {
		readErr = gerr
	}
	return res, &TimeoutError{Timeout: opts.Timeout, Last: res, ReadErr: readErr}
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.FinalCheckTimeout <= 0 {
		o.FinalCheckTimeout = defaultFinalCheck
	}
	return o
}

type waiter struct {
	ri   dynamic.ResourceInterface
	name string
	eval func(*unstructured.Unstructured) State
	opts Options

	mu      sync.Mutex
	last    Result
	seen    bool
	readErr error
}

var errStop = errors.New("done")

// observe records obj and its state.
func (w *waiter) observe(obj *unstructured.Unstructured) Result {
	st := w.eval(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last.Object, w.last.State, w.seen, w.readErr = obj, st, true, nil
	return w.last
}

func (w *waiter) failedRead(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	// A read cut short by the wait's own deadline says nothing about the
	// server: keep the server's last answer, which the timeout reports.
	var answer apierrors.APIStatus
	if errors.As(w.readErr, &answer) && !errors.As(err, &answer) && ownDeadline(err) {
		return
	}
	w.readErr = err
}

// ownDeadline reports an error of the wait's own running out of time: its
// context, or client-go's rate limiter refusing to wait past the deadline.
func ownDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		strings.Contains(err.Error(), "would exceed context deadline")
}

func (w *waiter) snapshot() (Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	res := w.last
	if !w.seen {
		res.State = State{Summary: "the object could not be read"}
	}
	return res, w.readErr
}

// settle turns a fresh observation into a reason to stop, or nil to go on.
func (w *waiter) settle(obj *unstructured.Unstructured) error {
	res := w.observe(obj)
	switch {
	case res.State.Met:
		return errStop
	case res.State.Stuck:
		return &StuckError{Last: res}
	}
	return nil
}

func (w *waiter) run(ctx context.Context) error {
	err := w.watchLoop(ctx)
	if errors.Is(err, errStop) {
		return nil
	}
	var stuck *StuckError
	if errors.As(err, &stuck) || ctx.Err() != nil {
		return err
	}
	// The watch could not be had (RBAC without list/watch, a proxy that cuts
	// long requests...): polling is slower but needs only get.
	w.mu.Lock()
	w.last.Watched = false
	w.mu.Unlock()
	err = w.pollLoop(ctx)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// errRelist asks for a fresh list, after the server expired our resourceVersion.
var errRelist = errors.New("relist")

func (w *waiter) watchLoop(ctx context.Context) error {
	selector := fields.OneTermEqualSelector("metadata.name", w.name).String()
	for {
		list, err := w.ri.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			w.failedRead(err)
			return err
		}
		var obj *unstructured.Unstructured
		for i := range list.Items {
			if list.Items[i].GetName() == w.name {
				obj = &list.Items[i]
			}
		}
		if err := w.settle(obj); err != nil {
			return err
		}
		w.mu.Lock()
		w.last.Watched = true
		w.mu.Unlock()
		rv := list.GetResourceVersion()
		quickCloses := 0
		for {
			began := time.Now()
			err = w.watchOnce(ctx, selector, &rv)
			if errors.Is(err, errRelist) {
				break
			}
			if err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Something between us and the server (a proxy, a load balancer)
			// may end every watch at once; re-watching would then spin.
			if time.Since(began) < time.Second {
				quickCloses++
			} else {
				quickCloses = 0
			}
			if quickCloses >= 3 {
				return errors.New("the watch keeps closing as soon as it opens")
			}
		}
	}
}

// watchOnce follows one watch request until it ends. It returns nil when the
// server closed the watch normally (they do, after a few minutes), so the
// caller watches again from *rv.
func (w *waiter) watchOnce(ctx context.Context, selector string, rv *string) error {
	wi, err := w.ri.Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: *rv, AllowWatchBookmarks: true})
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return errRelist
		}
		return err
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return errRelist
				}
				return err
			case watch.Bookmark:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					*rv = u.GetResourceVersion()
				}
			case watch.Added, watch.Modified, watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || u.GetName() != w.name {
					continue
				}
				*rv = u.GetResourceVersion()
				if ev.Type == watch.Deleted {
					u = nil
				}
				if err := w.settle(u); err != nil {
					return err
				}
			}
		}
	}
}

func (w *waiter) pollLoop(ctx context.Context) error {
	t := time.NewTicker(w.opts.PollInterval)
	defer t.Stop()
	for {
		obj, err := w.get(ctx)
		if err != nil {
			w.failedRead(err)
		} else if err := w.settle(obj); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// get reads the object; a missing object is (nil, nil).
func (w *waiter) get(ctx context.Context) (*unstructured.Unstructured, error) {
	obj, err := w.ri.Get(ctx, w.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

func (w *waiter) reportProgress(start time.Time) (stop func()) {
	if w.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(w.opts.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				res, _ := w.snapshot()
				w.opts.Progress(res.State, time.Since(start))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
