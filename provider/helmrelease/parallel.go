package helmrelease

import (
	"errors"
	"sync"
)

// parallelRequests bounds the requests one plan or apply has in flight: they
// wait on round trips, not on CPU, and a 200-object chart is planned in a few
// rounds of this width without crowding the API server's per-client limits.
const parallelRequests = 32

// inParallel runs f(0) ... f(n-1), at most parallelRequests at a time, and
// returns once all have; what each reports goes where f puts it.
func inParallel(n int, f func(i int)) {
	sem := make(chan struct{}, parallelRequests)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// kindByKind runs do on the items of each run of one kind in items (sorted
// by kind order already), one run after the other and the items of a run in
// parallel, as helm installs and uninstalls: a ServiceAccount exists before
// the Deployment that runs as it. It stops after the first run with errors.
func kindByKind[T any](items []T, kind func(T) string, do func(T) error) error {
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && kind(items[end]) == kind(items[start]) {
			end++
		}
		run := items[start:end]
		errs := make([]error, len(run))
		inParallel(len(run), func(i int) { errs[i] = do(run[i]) })
		if err := errors.Join(errs...); err != nil {
			return err
		}
		start = end
	}
	return nil
}
