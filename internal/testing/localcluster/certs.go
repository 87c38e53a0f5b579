package localcluster

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
)

// configFiles are the credential files the components read, in <Dir>/pki.
type configFiles struct {
	ca, clientCA, clientCAKey   string
	servingCert, servingKey     string
	saPublic, saPrivate, tokens string
	frontProxyCA                string
	proxyClientCert             string
	proxyClientKey              string
}

// credentials are generated afresh at every start, so no two clusters, and no
// two starts of the dev cluster, trust each other's users.
type credentials struct {
	ca           *pki.KeyPair // signs the API server's serving certificate
	serving      *pki.KeyPair
	clientCA     *pki.KeyPair // signs the client certificates
	admin        *pki.KeyPair // CertUser's client certificate
	components   map[string]*pki.KeyPair
	frontProxyCA *pki.KeyPair
	proxyClient  *pki.KeyPair
	saKeyPEM     []byte // signs service account tokens
	saPubPEM     []byte
	token        string // TokenUser's bearer token
}

// writeConfig generates the cluster's credentials and writes every file the
// components read them from, their kubeconfigs, and the user kubeconfig. It
// fills CAPEM, Token and the client certificate of c; c.Host must be set, as
// the kubeconfigs name it.
func (c *Cluster) writeConfig() (*configFiles, error) {
	cr, err := newCredentials()
	if err != nil {
		return nil, err
	}
	c.Token = cr.token
	c.CAPEM = cr.ca.CertPEM
	c.ClientCertPEM, c.ClientKeyPEM = cr.admin.CertPEM, cr.admin.KeyPEM

	inPKI := func(name string) string { return filepath.Join(c.Dir, "pki", name) }
	f := &configFiles{
		ca: inPKI("ca.crt"), clientCA: inPKI("client-ca.crt"), clientCAKey: inPKI("client-ca.key"),
		servingCert: inPKI("apiserver.crt"), servingKey: inPKI("apiserver.key"),
		saPublic: inPKI("sa.pub"), saPrivate: inPKI("sa.key"), tokens: inPKI("tokens.csv"),
		frontProxyCA: inPKI("front-proxy-ca.crt"), proxyClientCert: inPKI("front-proxy-client.crt"), proxyClientKey: inPKI("front-proxy-client.key"),
	}
	for path, data := range map[string][]byte{
		f.ca: cr.ca.CertPEM, inPKI("ca.key"): cr.ca.KeyPEM,
		f.clientCA: cr.clientCA.CertPEM, f.clientCAKey: cr.clientCA.KeyPEM,
		f.servingCert: cr.serving.CertPEM, f.servingKey: cr.serving.KeyPEM,
		f.saPublic: cr.saPubPEM, f.saPrivate: cr.saKeyPEM,
		f.frontProxyCA:    cr.frontProxyCA.CertPEM,
		f.proxyClientCert: cr.proxyClient.CertPEM, f.proxyClientKey: cr.proxyClient.KeyPEM,
		f.tokens: []byte(fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.Token, TokenUser, TokenUser)),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	if err := c.writeKubeconfigs(cr.components); err != nil {
		return nil, err
	}
	return f, nil
}

// newCredentials makes three CAs (serving, client, front proxy), the
// certificates they sign, the service account signing key and the admin token.
func newCredentials() (*credentials, error) {
	cr := &credentials{}
	var err error
	if cr.ca, err = pki.NewCA("k8sconnect-local-ca"); err != nil {
		return nil, err
	}
	if cr.clientCA, err = pki.NewCA("k8sconnect-local-client-ca"); err != nil {
		return nil, err
	}
	// 10.96.0.1 is the address of the "kubernetes" Service, the first of
	// serviceCIDR.
	if cr.serving, err = cr.ca.Issue(pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 96, 0, 1)}); err != nil {
		return nil, err
	}
	if cr.frontProxyCA, err = pki.NewCA("k8sconnect-local-front-proxy-ca"); err != nil {
		return nil, err
	}
	if cr.proxyClient, err = cr.frontProxyCA.Issue(pkix.Name{CommonName: "front-proxy-client"}, x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return nil, err
	}
	if err := cr.issueClientCerts(); err != nil {
		return nil, err
	}
	if cr.saKeyPEM, cr.saPubPEM, err = newServiceAccountKey(); err != nil {
		return nil, err
	}
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	cr.token = hex.EncodeToString(tok)
	return cr, nil
}

// issueClientCerts signs the client certificates of CertUser and of the
// components that talk to the API server; the subject's organizations are the
// user's groups.
func (cr *credentials) issueClientCerts() error {
	issue := func(cn string, groups ...string) (*pki.KeyPair, error) {
		return cr.clientCA.Issue(pkix.Name{CommonName: cn, Organization: groups}, x509.ExtKeyUsageClientAuth, nil, nil)
	}
	var err error
	if cr.admin, err = issue(CertUser, "system:masters"); err != nil {
		return err
	}
	cr.components = map[string]*pki.KeyPair{}
	for _, u := range []struct {
		component, user string
		groups          []string
	}{
		{kcmName, "system:kube-controller-manager", nil},
		{schedulerName, "system:kube-scheduler", nil},
		{kwokName, "k8sconnect-kwok", []string{"system:masters"}},
	} {
		kp, err := issue(u.user, u.groups...)
		if err != nil {
			return err
		}
		cr.components[u.component] = kp
	}
	return nil
}

// newServiceAccountKey returns a new key pair, PEM-encoded, for signing and
// verifying service account tokens.
func newServiceAccountKey() (keyPEM, pubPEM []byte, err error) {
	key, err := pki.NewKey()
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = pki.EncodeKey(key); err != nil {
		return nil, nil, err
	}
	if pubPEM, err = pki.EncodePublicKey(key); err != nil {
		return nil, nil, err
	}
	return keyPEM, pubPEM, nil
}

// componentKubeconfig is the kubeconfig of a component that talks to the API
// server with its own client certificate.
func (c *Cluster) componentKubeconfig(name string) string {
	return filepath.Join(c.Dir, "components", name+".kubeconfig")
}

// writeKubeconfigs writes each component's kubeconfig and the user kubeconfig.
func (c *Cluster) writeKubeconfigs(components map[string]*pki.KeyPair) error {
	for name, kp := range components {
		cfg := c.kubeconfig(map[string]*clientcmdapi.AuthInfo{name: {ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}}, name, name)
		if err := clientcmd.WriteToFile(*cfg, c.componentKubeconfig(name)); err != nil {
			return err
		}
	}
	return clientcmd.WriteToFile(*c.userKubeconfig(), c.KubeconfigPath)
}

// userKubeconfig has the two admin users, one context each.
func (c *Cluster) userKubeconfig() *clientcmdapi.Config {
	cfg := c.kubeconfig(map[string]*clientcmdapi.AuthInfo{
		TokenUser: {Token: c.Token},
		CertUser:  {ClientCertificateData: c.ClientCertPEM, ClientKeyData: c.ClientKeyPEM},
	}, TokenContext, TokenUser)
	cfg.Contexts[CertContext] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: CertUser, Namespace: metav1.NamespaceDefault}
	return cfg
}

func (c *Cluster) kubeconfig(users map[string]*clientcmdapi.AuthInfo, ctxName, user string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAPEM}
	cfg.AuthInfos = users
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user, Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = ctxName
	return cfg
}
