package localcluster

import (
	"context"
	"net/http"
	"strconv"
)

// etcdURL is where etcd serves its clients (the API server), over plain HTTP:
// it listens on loopback only.
func (s *startup) etcdURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.ports.etcd) }

// startEtcd starts a single-member etcd and waits until it is healthy, since
// the API server cannot become ready without it.
func (s *startup) startEtcd(ctx context.Context) error {
	clientURL := s.etcdURL()
	peerURL := "http://127.0.0.1:" + strconv.Itoa(s.ports.etcdPeer)
	if err := s.run(etcdName, []string{
		"--name=k8sconnect",
		"--data-dir=" + s.c.path("etcd", "data"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=k8sconnect=" + peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true", // a throw-away test cluster: speed over durability
		"--auto-compaction-mode=periodic",
		"--auto-compaction-retention=5m",
		"--quota-backend-bytes=" + strconv.Itoa(4<<30),
		"--log-level=warn",
	}); err != nil {
		return err
	}
	return s.c.waitFor(ctx, "etcd to be healthy", etcdName, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, clientURL+"/health", "")
	})
}
