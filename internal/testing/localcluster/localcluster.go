package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

const (
	// NodeName is the kwok node every pod runs on.
	NodeName = "k8sconnect-node"
	// HoldAnnotation, set to "true" on a pod, keeps it Pending (see the package
	// documentation for how to release it).
	HoldAnnotation = "k8sconnect.test/hold"
	// FailAnnotation, set to "true" on a pod with restartPolicy Never, makes it
	// fail instead of succeed.
	FailAnnotation = "k8sconnect.test/fail"

	// Context names in the kubeconfig.
	TokenContext = "k8sconnect-local"      // admin token user; the current context
	CertContext  = "k8sconnect-local-cert" // admin client-certificate user

	// Users the cluster knows.
	TokenUser = "k8sconnect-admin"
	CertUser  = "k8sconnect-cert-admin"

	// EnvKubeconfig names a running cluster for Main and Shared to use.
	EnvKubeconfig = "K8SCONNECT_KUBECONFIG"
	// EnvClusterDir overrides DevDir.
	EnvClusterDir = "K8SCONNECT_CLUSTER_DIR"

	serviceCIDR = "10.96.0.0/16"

	clusterName = "k8sconnect-local"
)

// Options configure Start.
type Options struct {
	// Dir holds the cluster's state: certificates and keys, kubeconfig files,
	// etcd's data, logs/ and run/ (pid files). Empty: a new temporary
	// directory, removed by Stop. A given Dir is cleared of an earlier
	// cluster's state (the caller must have stopped that cluster).
	Dir string
	// Detach starts the components in their own session so that they outlive
	// this process. Stop them later with Load(...).Stop().
	Detach bool
	// Logf, if set, receives progress messages (never credentials).
	Logf func(format string, args ...any)
}

// Cluster is a running local cluster.
type Cluster struct {
	Dir            string // state directory (see Options.Dir)
	KubeconfigPath string // kubeconfig with contexts TokenContext and CertContext
	Host           string // https://127.0.0.1:<port>
	CAPEM          []byte // CA that signed the API server's certificate
	Token          string // bearer token of TokenUser (system:masters)
	ClientCertPEM  []byte // client certificate of CertUser (system:masters)
	ClientKeyPEM   []byte // its private key

	tempDir bool       // Start created Dir: Stop removes it
	managed bool       // Dir has pid files (run/): the components are known
	procs   []*process // in start order
}

// DevDir is the state directory of the detached dev cluster (`make
// cluster-up`): $K8SCONNECT_CLUSTER_DIR, else os.UserCacheDir()/k8sconnect/cluster.
func DevDir() (string, error) {
	if d := os.Getenv(EnvClusterDir); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the cluster (%v): set %s", err, EnvClusterDir)
	}
	return filepath.Join(d, "k8sconnect", "cluster"), nil
}

// component names, in start order.
const (
	etcdName      = "etcd"
	apiserverName = "kube-apiserver"
	kcmName       = "kube-controller-manager"
	schedulerName = "kube-scheduler"
	kwokName      = "kwok"
)

var componentNames = []string{etcdName, apiserverName, kcmName, schedulerName, kwokName}

// Start starts a cluster and waits until it is usable: /readyz answers, the
// controller manager and scheduler are healthy, the kwok node is Ready and the
// default ServiceAccount exists. Without a deadline on ctx it gives up after
// three minutes. ctx only bounds the start: the cluster runs until Stop.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bins, err := componentBinaries()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, tempDir, err := stateDir(opts.Dir, logf)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		c := &Cluster{Dir: dir, tempDir: tempDir, managed: true}
		err := c.start(ctx, opts.Detach, bins, logf)
		if err == nil {
			return c, nil
		}
		c.stopProcesses()
		if errors.Is(err, errPortInUse) && attempt < 3 && ctx.Err() == nil {
			logf("localcluster: %v; retrying with other ports", err)
			continue
		}
		// Keep the logs for the error's reader; drop the rest.
		for _, sub := range []string{"etcd", "pki", "components", "kubeconfig", "run"} {
			_ = os.RemoveAll(filepath.Join(dir, sub))
		}
		return nil, fmt.Errorf("starting the local cluster (logs in %s): %w", filepath.Join(dir, "logs"), err)
	}
}

// componentBinaries finds each component's binary (component name: path) in
// package toolchain's cache, before anything is written.
func componentBinaries() (map[string]string, error) {
	bins := map[string]string{}
	for _, name := range componentNames {
		p, err := toolchain.Path(name)
		if err != nil {
			return nil, err
		}
		bins[name] = p
	}
	return bins, nil
}

// stateDir is dir made absolute, or, if dir is empty, a new temporary
// directory (tempDir true), made after the stale ones of killed runs are swept.
func stateDir(dir string, logf func(string, ...any)) (abs string, tempDir bool, err error) {
	if dir != "" {
		abs, err = filepath.Abs(dir)
		return abs, false, err
	}
	sweepStale(logf)
	abs, err = os.MkdirTemp("", tempPrefix)
	return abs, err == nil, err
}

const tempPrefix = "k8sconnect-cluster-"

// sweepStale removes the temporary directories of clusters whose test binary
// was killed before it could stop them (their etcd data is about 100 MB): no
// component runs any more and nothing changed in them for ten minutes. The
// logs that Main keeps after failed tests go after a day.
func sweepStale(logf func(string, ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		age := time.Since(st.ModTime())
		_, err = os.Stat(filepath.Join(d, "etcd"))
		killed := err == nil
		if (killed && age < 10*time.Minute) || (!killed && age < 24*time.Hour) {
			continue
		}
		running := false
		for _, name := range componentNames {
			if adoptProcess(d, name) != nil {
				running = true
			}
		}
		if !running {
			logf("localcluster: removing %s, left by an earlier run", d)
			_ = os.RemoveAll(d)
		}
	}
}

var errPortInUse = errors.New("a port picked for the cluster was taken meanwhile")

// state files and directories a cluster owns inside its Dir.
var stateEntries = []string{"etcd", "pki", "components", "kwok", "logs", "run", "kubeconfig"}

// startup is one attempt at starting a cluster: what its steps share.
type startup struct {
	c      *Cluster
	detach bool              // Options.Detach
	bins   map[string]string // component name: binary
	logf   func(format string, args ...any)
	begin  time.Time
	ports  ports
	files  *configFiles
	admin  kubernetes.Interface // once the API server is ready
}

// ports are the loopback ports of one start.
type ports struct {
	etcd, etcdPeer, apiserver, controllerManager, scheduler int
}

// start makes one attempt at starting the cluster in c.Dir, step by step; on
// an error the caller stops what did start.
func (c *Cluster) start(ctx context.Context, detach bool, bins map[string]string, logf func(string, ...any)) error {
	s := &startup{c: c, detach: detach, bins: bins, logf: logf, begin: time.Now()}
	for _, step := range []func(context.Context) error{
		s.prepare,
		s.startEtcd,
		s.startAPIServer,
		s.createNode,
		// The controller manager, the scheduler and kwok start side by side;
		// the waits after them cover all three.
		s.startControllerManager,
		s.startScheduler,
		s.startKwok,
		s.waitControllers,
		s.waitNodeReady,
		s.waitDefaultServiceAccount,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	logf("localcluster: cluster ready after %s (state in %s)", time.Since(s.begin).Round(10*time.Millisecond), c.Dir)
	return nil
}

// prepare clears Dir of an earlier cluster, picks the ports, and writes the
// credentials and configuration files the components read.
func (s *startup) prepare(context.Context) error {
	if err := s.c.resetDir(); err != nil {
		return err
	}
	p, err := freePorts(5)
	if err != nil {
		return err
	}
	s.ports = ports{etcd: p[0], etcdPeer: p[1], apiserver: p[2], controllerManager: p[3], scheduler: p[4]}
	s.c.Host = "https://127.0.0.1:" + strconv.Itoa(s.ports.apiserver)
	s.c.KubeconfigPath = s.c.path("kubeconfig")
	if s.files, err = s.c.writeConfig(); err != nil {
		return err
	}
	return s.c.writeStages()
}

// resetDir removes the state of an earlier cluster from Dir and makes the
// directories the components write to.
func (c *Cluster) resetDir() error {
	for _, e := range stateEntries {
		if err := os.RemoveAll(c.path(e)); err != nil {
			return err
		}
	}
	for _, sub := range []string{"", "etcd", "pki", "components", "kwok", "logs", "run"} {
		if err := os.MkdirAll(c.path(sub), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// path is the file or directory parts inside Dir.
func (c *Cluster) path(parts ...string) string {
	return filepath.Join(append([]string{c.Dir}, parts...)...)
}

// run starts one component; the cluster's processes list it at once, so that
// a failed start still stops it.
func (s *startup) run(name string, args []string, env ...string) error {
	p, err := startProcess(s.c.Dir, name, s.bins[name], args, env, s.detach)
	if err != nil {
		return err
	}
	s.c.procs = append(s.c.procs, p)
	s.logf("localcluster: started %s (pid %d)", name, p.pid)
	return nil
}

// waitFor polls check until it succeeds, ctx ends, or a component exits. On a
// timeout the error carries the end of the log of the component named by who.
func (c *Cluster) waitFor(ctx context.Context, what, who string, check func(context.Context) error) error {
	var last error
	for {
		for _, p := range c.procs {
			if p.exited() {
				err := p.exitError()
				if strings.Contains(err.Error(), "address already in use") {
					return fmt.Errorf("%w: %v", errPortInUse, err)
				}
				return err
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("timed out waiting for %s (last error: %v)", what, last)
			for _, p := range c.procs {
				if p.name == who {
					msg += p.logTail()
				}
			}
			return errors.New(msg)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func httpOK(ctx context.Context, client *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// freePorts reserves n distinct free loopback ports. They are released before
// the components bind them; a race with another process is detected by the
// caller (errPortInUse) and retried.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		addr, _ := l.Addr().(*net.TCPAddr) // a "tcp" listener's address
		ports = append(ports, addr.Port)
	}
	return ports, nil
}

// RESTConfig is a client configuration for the token admin user (the client
// certificate user when the cluster has no token). It allows 100 requests per
// second, bursts of 200, so that tests are not throttled by client-go.
func (c *Cluster) RESTConfig() *rest.Config {
	cfg := &rest.Config{
		Host:            c.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), c.CAPEM...)},
		QPS:             100,
		Burst:           200,
	}
	if c.Token != "" {
		cfg.BearerToken = c.Token
	} else {
		cfg.CertData = append([]byte(nil), c.ClientCertPEM...)
		cfg.KeyData = append([]byte(nil), c.ClientKeyPEM...)
	}
	return cfg
}

// Load attaches to a cluster from its kubeconfig: one written by Start
// (contexts TokenContext and CertContext) or any kubeconfig whose current
// context has CA data and a token or client certificate. It does not contact
// the cluster (see Check). If the kubeconfig's directory holds the pid files of
// a cluster started there (the dev cluster), Check and Stop know its processes.
func Load(kubeconfigPath string) (*Cluster, error) {
	path, err := filepath.Abs(kubeconfigPath)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	ctxName := cfg.CurrentContext
	if _, ok := cfg.Contexts[TokenContext]; ok {
		ctxName = TokenContext
	}
	kctx, ok := cfg.Contexts[ctxName]
	if !ok {
		return nil, fmt.Errorf("kubeconfig %s: no context %q", path, ctxName)
	}
	cl, ok := cfg.Clusters[kctx.Cluster]
	if !ok || cl.Server == "" {
		return nil, fmt.Errorf("kubeconfig %s: context %q has no cluster server", path, ctxName)
	}
	c := &Cluster{Dir: filepath.Dir(path), KubeconfigPath: path, Host: cl.Server, CAPEM: cl.CertificateAuthorityData}
	if len(c.CAPEM) == 0 && cl.CertificateAuthority != "" {
		if c.CAPEM, err = os.ReadFile(cl.CertificateAuthority); err != nil {
			return nil, err
		}
	}
	if u := cfg.AuthInfos[kctx.AuthInfo]; u != nil {
		c.Token = u.Token
		c.ClientCertPEM, c.ClientKeyPEM = u.ClientCertificateData, u.ClientKeyData
	}
	if certCtx, ok := cfg.Contexts[CertContext]; ok {
		if u := cfg.AuthInfos[certCtx.AuthInfo]; u != nil {
			c.ClientCertPEM, c.ClientKeyPEM = u.ClientCertificateData, u.ClientKeyData
		}
	}
	if len(c.CAPEM) == 0 {
		return nil, fmt.Errorf("kubeconfig %s: cluster %q has no certificate-authority-data", path, kctx.Cluster)
	}
	if c.Token == "" && len(c.ClientCertPEM) == 0 {
		return nil, fmt.Errorf("kubeconfig %s: context %q has neither a token nor a client certificate", path, ctxName)
	}
	c.adoptProcesses()
	return c, nil
}

// adoptProcesses finds the running components of a cluster started in Dir
// through its pid files, if it has any.
func (c *Cluster) adoptProcesses() {
	if st, err := os.Stat(c.path("run")); err != nil || !st.IsDir() {
		return
	}
	c.managed = true
	for _, name := range componentNames {
		if p := adoptProcess(c.Dir, name); p != nil {
			c.procs = append(c.procs, p)
		}
	}
}

// PIDs returns the process ids of the components this process knows: those it
// started, or those found through the pid files of a loaded cluster.
func (c *Cluster) PIDs() map[string]int {
	m := map[string]int{}
	for _, p := range c.procs {
		if !p.exited() {
			m[p.name] = p.pid
		}
	}
	return m
}

// Check reports whether the cluster works: the API server answers /readyz
// within ten seconds (or ctx's deadline) and, for a cluster started by Start
// or loaded from a directory with pid files, every component runs.
func (c *Cluster) Check(ctx context.Context) error {
	if c.managed || c.procs != nil {
		running := c.PIDs()
		for _, name := range componentNames {
			if _, ok := running[name]; !ok {
				return fmt.Errorf("%s is not running%s", name,
					(&process{name: name, logPath: filepath.Join(c.Dir, "logs", name+".log")}).logTail())
			}
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	if err := c.readyz(ctx); err != nil {
		return fmt.Errorf("%s does not answer /readyz: %w", c.Host, err)
	}
	return nil
}

// Stop shuts the cluster's components down (SIGTERM, then SIGKILL after ten
// seconds; etcd last) and removes Dir if Start created it. A cluster from Load
// stops the processes named by the pid files in its Dir, and leaves Dir.
func (c *Cluster) Stop() error {
	c.stopProcesses()
	if c.tempDir {
		return os.RemoveAll(c.Dir)
	}
	return nil
}

// stopKeepLogs stops the cluster and, if Start created Dir, deletes all of it
// but the logs. It returns the logs directory.
func (c *Cluster) stopKeepLogs() string {
	c.stopProcesses()
	if c.tempDir {
		for _, e := range stateEntries {
			if e != "logs" {
				_ = os.RemoveAll(filepath.Join(c.Dir, e))
			}
		}
	}
	return filepath.Join(c.Dir, "logs")
}

func (c *Cluster) stopProcesses() {
	var etcd []*process
	var rest []*process
	for _, p := range c.procs {
		if p.name == etcdName {
			etcd = append(etcd, p)
		} else {
			rest = append(rest, p)
		}
	}
	stopAll(rest, 10*time.Second)
	stopAll(etcd, 5*time.Second)
	for _, p := range c.procs {
		_ = os.Remove(filepath.Join(c.Dir, "run", p.name+".pid"))
	}
	c.procs = nil
}

func stopAll(ps []*process, grace time.Duration) {
	for _, p := range ps {
		_ = p.signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, p := range ps {
		if !p.wait(time.Until(deadline)) {
			_ = p.kill()
			p.wait(5 * time.Second)
		}
	}
}
