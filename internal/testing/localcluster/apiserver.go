package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
)

// startAPIServer starts kube-apiserver, waits until it answers /readyz, and
// connects the admin client the later steps use.
func (s *startup) startAPIServer(ctx context.Context) error {
	if err := s.run(apiserverName, s.apiserverArgs()); err != nil {
		return err
	}
	client, err := s.c.httpClient()
	if err != nil {
		return err
	}
	if err := s.c.waitFor(ctx, "kube-apiserver to be ready", apiserverName, func(ctx context.Context) error {
		return httpOK(ctx, client, s.c.Host+"/readyz", s.c.Token)
	}); err != nil {
		return err
	}
	s.logf("localcluster: kube-apiserver ready at %s after %s", s.c.Host, time.Since(s.begin).Round(10*time.Millisecond))
	s.admin, err = kubernetes.NewForConfig(s.c.RESTConfig())
	return err
}

func (s *startup) apiserverArgs() []string {
	f := s.files
	return []string{
		"--etcd-servers=" + s.etcdURL(),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.ports.apiserver),
		// The "kubernetes" Service gets no endpoints: a loopback address cannot be
		// published, and nothing in this cluster reaches the API through it.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + s.c.path("pki", "apiserver-generated"),
		"--tls-cert-file=" + f.servingCert,
		"--tls-private-key-file=" + f.servingKey,
		"--client-ca-file=" + f.clientCA,
		"--token-auth-file=" + f.tokens,
		// Front proxy (aggregated APIs), and so that the controller manager and
		// the scheduler find the request-header CA they look up at start.
		"--requestheader-client-ca-file=" + f.frontProxyCA,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + f.proxyClientCert,
		"--proxy-client-key-file=" + f.proxyClientKey,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.saPublic,
		"--service-account-signing-key-file=" + f.saPrivate,
		"--service-cluster-ip-range=" + serviceCIDR,
		// This admission plugin taints new nodes not-ready until the node
		// lifecycle controller, which is off here, clears the taint.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--allow-privileged=true",
		"--profiling=false",
	}
}

// httpClient is an HTTP client that verifies the API server against CAPEM.
func (c *Cluster) httpClient() (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CAPEM) {
		return nil, errors.New("no CA certificate for the cluster")
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}, nil
}

// readyz polls the API server's /readyz as the cluster's admin user (the
// token, else the client certificate) until it answers 200 or ctx ends.
func (c *Cluster) readyz(ctx context.Context) error {
	client, err := c.httpClient()
	if err != nil {
		return err
	}
	tr, ok := client.Transport.(*http.Transport)
	if !ok {
		return fmt.Errorf("unexpected transport %T", client.Transport)
	}
	if c.Token == "" {
		cert, err := tls.X509KeyPair(c.ClientCertPEM, c.ClientKeyPEM)
		if err != nil {
			return err
		}
		tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
	}
	var last error
	for {
		if last = httpOK(ctx, client, c.Host+"/readyz", c.Token); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(200 * time.Millisecond):
		}
	}
}
