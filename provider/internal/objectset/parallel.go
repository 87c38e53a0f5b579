package objectset

import "sync"

// ParallelRequests bounds the requests one plan or apply has in flight: they
// wait on round trips, not on CPU, and a set of 200 objects is planned in a
// few rounds of this width without crowding the API server's per-client
// limits.
const ParallelRequests = 32

// InParallel runs f(0) ... f(n-1), at most ParallelRequests at a time, and
// returns once all have; what each reports goes where f puts it.
func InParallel(n int, f func(i int)) {
	sem := make(chan struct{}, ParallelRequests)
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
