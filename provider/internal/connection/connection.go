// Package connection turns a cluster_connection value into a Kubernetes client.
//
// Every k8sconnect resource carries its own connection rather than inheriting one
// from the provider block, so a single apply can create a cluster and the objects in
// it. The same attribute set appears as an input (k8sconnect_object, _patch) and as
// a computed copy inside resource_ref (read back by k8sconnect_wait), so the schema
// is built here once for both uses.
//
// Beside the client, the package holds what every resource needs to say about
// the cluster it reaches: which cluster that is (identity.go) and whether it is
// still the one an object was recorded in (clustercheck.go), what a user can do
// about a request that failed (remedies.go), and whether a kind is served
// (kinds.go).
package connection

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Model is the cluster_connection attribute. Fields stay framework types so an
// unknown connection (a cluster created in the same apply) can still be planned.
type Model struct {
	Host                 types.String `tfsdk:"host"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Token                types.String `tfsdk:"token"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	Kubeconfig           types.String `tfsdk:"kubeconfig"`
	KubeconfigFile       types.String `tfsdk:"kubeconfig_file"`
	Context              types.String `tfsdk:"context"`
	ProxyURL             types.String `tfsdk:"proxy_url"`
	Exec                 types.Object `tfsdk:"exec"`
	RequestTimeout       types.String `tfsdk:"request_timeout"`
	ClusterID            types.String `tfsdk:"cluster_id"`
}

// ExecModel is the exec credential plugin block, as in a kubeconfig's users[].user.exec.
type ExecModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

// ExecAttrTypes are the attribute types of cluster_connection.exec.
var ExecAttrTypes = map[string]attr.Type{
	"api_version": types.StringType,
	"command":     types.StringType,
	"args":        types.ListType{ElemType: types.StringType},
	"env":         types.MapType{ElemType: types.StringType},
}

// AttrTypes is the object type of a cluster_connection value.
var AttrTypes = map[string]attr.Type{
	"host":                   types.StringType,
	"cluster_ca_certificate": types.StringType,
	"token":                  types.StringType,
	"client_certificate":     types.StringType,
	"client_key":             types.StringType,
	"insecure":               types.BoolType,
	"kubeconfig":             types.StringType,
	"kubeconfig_file":        types.StringType,
	"context":                types.StringType,
	"proxy_url":              types.StringType,
	"exec":                   types.ObjectType{AttrTypes: ExecAttrTypes},
	"request_timeout":        types.StringType,
	"cluster_id":             types.StringType,
}

// Mode says whether the attributes are set by the user or copied by the provider.
type Mode int

const (
	Input    Mode = iota // the user writes it (cluster_connection)
	Computed             // the provider fills it (resource_ref.cluster_connection)
)

// field describes one cluster_connection attribute. Resource and data-source
// schemas are distinct framework types, so each is built from this table and from
// AttrTypes: neither descriptions, sensitivity nor types can drift between them.
type field struct {
	description string
	sensitive   bool
	nested      map[string]field // for object attributes (exec)
	// validators check a value the user writes; the computed copy in
	// resource_ref has none.
	validators []validator.String
}

var fields = map[string]field{
	"host":                   {description: "API server URL, e.g. https://10.0.0.1:6443."},
	"cluster_ca_certificate": {description: "PEM (or base64 of PEM) CA bundle that signs the API server's certificate."},
	"token":                  {description: "Bearer token.", sensitive: true},
	"client_certificate":     {description: "PEM (or base64 of PEM) client certificate."},
	"client_key":             {description: "PEM (or base64 of PEM) client key.", sensitive: true},
	"insecure":               {description: "Skip verification of the server certificate. Only for throw-away clusters."},
	"kubeconfig":             {description: "Raw kubeconfig content. Conflicts with kubeconfig_file. Other attributes override the selected context.", sensitive: true},
	"kubeconfig_file": {description: "Path to a kubeconfig file; a leading ~ is the home directory. Several paths separated by " +
		"the OS list separator (\":\" on Linux and macOS), as in $KUBECONFIG, are merged the way kubectl merges them. " +
		"The files are read each time the provider connects and their content is never stored in state, so a rotated " +
		"credential in them changes no plan. Conflicts with kubeconfig. Other attributes override the selected context."},
	"context":   {description: "Context to use from kubeconfig or kubeconfig_file; defaults to its current-context."},
	"proxy_url": {description: "HTTP(S) or SOCKS5 proxy for API requests. Sensitive: a proxy URL may carry credentials.", sensitive: true},
	"exec": {
		description: "Exec credential plugin that prints an ExecCredential, such as `aws eks get-token`.",
		nested: map[string]field{
			"api_version": {description: "client.authentication.k8s.io API version the plugin speaks."},
			"command":     {description: "Command to run."},
			"args":        {description: "Arguments to the command. Sensitive: some plugins take credentials as arguments.", sensitive: true},
			"env":         {description: "Environment variables for the command.", sensitive: true},
		},
	},
	"request_timeout": {
		description: "How long one request to the API server may take before it fails, its retries included, as " +
			"kubectl's --request-timeout: a Go duration such as \"20s\" or \"2m\" (default \"" + DefaultRequestTimeout.String() +
			"\"). Within it a read or dry run that got no answer (a connection reset, closed or stalled) is sent again; " +
			"an attempt still without its answer when it runs out is cut. A request whose answer takes longer, such as " +
			"an apply behind slow admission webhooks, needs a longer one.",
		validators: []validator.String{requestTimeoutValidator{}},
	},
	"cluster_id": {
		description: "A name you give the cluster, such as \"prod-eu\" or its cloud resource ID, that makes the " +
			"cluster check strict (as pulumi-kubernetes' clusterIdentifier). Every resource that records the cluster it " +
			"acts in (cluster_uid) records this too, and a later plan, refresh or destroy whose cluster_id differs " +
			"from the recorded one is refused before anything is read or written. A matching cluster_id confirms " +
			"nothing by itself: what the cluster shows is still compared. Removing it unpins at the next apply or " +
			"refresh. 1 to " + fmt.Sprint(maxClusterIDLength) + " characters: letters, digits and . _ - : / @.",
		validators: clusterIDValidators,
	},
}

// FromObject reads a cluster_connection object value. known is false when any part
// of it is unknown at plan time. A null value is the empty Model, which
// Cache.Client resolves to the provider's default connection.
func FromObject(ctx context.Context, obj types.Object) (m Model, known bool, diags diag.Diagnostics) {
	if obj.IsNull() {
		return m, true, nil
	}
	if obj.IsUnknown() {
		return m, false, nil
	}
	diags = obj.As(ctx, &m, basetypes.ObjectAsOptions{})
	return m, isFullyKnown(obj), diags
}

// ToObject is the inverse of FromObject.
func (m Model) ToObject(ctx context.Context) (types.Object, diag.Diagnostics) {
	return types.ObjectValueFrom(ctx, AttrTypes, m)
}

func isFullyKnown(v attr.Value) bool {
	if v.IsUnknown() {
		return false
	}
	if o, ok := v.(basetypes.ObjectValue); ok {
		for _, a := range o.Attributes() {
			if !isFullyKnown(a) {
				return false
			}
		}
	}
	if l, ok := v.(basetypes.ListValue); ok {
		for _, e := range l.Elements() {
			if !isFullyKnown(e) {
				return false
			}
		}
	}
	if mv, ok := v.(basetypes.MapValue); ok {
		for _, e := range mv.Elements() {
			if !isFullyKnown(e) {
				return false
			}
		}
	}
	return true
}

// kubeconfigSource is the kubeconfig a connection names, read once so the cache
// key and the client are built from the same content.
type kubeconfigSource struct {
	content []byte
	path    string // the file it was read from; empty for inline content
	attr    string // how errors name it
	merged  bool   // several files merged: relative paths are resolved already
}

// mergedKubeconfig reads a list of kubeconfig files as kubectl reads
// $KUBECONFIG: the first file to set a map entry or the current-context wins,
// missing files are skipped, and relative paths are relative to the file that
// holds them.
func mergedKubeconfig(list string) (*kubeconfigSource, error) {
	var paths []string
	for _, p := range filepath.SplitList(list) {
		if p == "" {
			continue
		}
		expanded, err := expandHome(p)
		if err != nil {
			return nil, fmt.Errorf("cluster_connection.kubeconfig_file %q: %w", p, err)
		}
		paths = append(paths, expanded)
	}
	attr := fmt.Sprintf("cluster_connection.kubeconfig_file %q", list)
	found := false
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: none of the files exists", attr)
	}
	raw, err := (&clientcmd.ClientConfigLoadingRules{Precedence: paths}).Load()
	if err != nil {
		// clientcmd's errors name files and fields, never their content.
		return nil, fmt.Errorf("%s: %v", attr, err)
	}
	content, err := clientcmd.Write(*raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", attr, err)
	}
	return &kubeconfigSource{content: content, path: list, attr: attr, merged: true}, nil
}

// kubeconfig reads the connection's kubeconfig; nil when it names none. A file is
// read on every call, so an edited file reaches the next client that is built.
func (m Model) kubeconfig() (*kubeconfigSource, error) {
	inline, file := m.Kubeconfig.ValueString(), m.KubeconfigFile.ValueString()
	switch {
	case inline != "" && file != "":
		return nil, errors.New("cluster_connection sets both kubeconfig and kubeconfig_file; set only one of them")
	case inline != "":
		return &kubeconfigSource{content: []byte(inline), attr: "cluster_connection.kubeconfig"}, nil
	case file == "":
		return nil, nil
	}
	if strings.ContainsRune(file, filepath.ListSeparator) {
		return mergedKubeconfig(file)
	}
	path, err := expandHome(file)
	if err != nil {
		return nil, fmt.Errorf("cluster_connection.kubeconfig_file %q: %w", file, err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		// The path is quoted, never the file's content (a kubeconfig holds credentials).
		reason := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err
		}
		return nil, fmt.Errorf("cluster_connection.kubeconfig_file %q cannot be read: %v", path, reason)
	}
	return &kubeconfigSource{content: content, path: path, attr: fmt.Sprintf("cluster_connection.kubeconfig_file %q", path)}, nil
}

// expandHome expands a leading ~ the way a shell would for the current user.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand ~: %w", err)
	}
	return filepath.Join(home, p[1:]), nil
}

// RESTConfig builds a client configuration. Errors never quote credential values.
func (m Model) RESTConfig(ctx context.Context) (*rest.Config, error) {
	src, err := m.kubeconfig()
	if err != nil {
		return nil, err
	}
	return m.restConfig(ctx, src)
}

func (m Model) restConfig(ctx context.Context, src *kubeconfigSource) (*rest.Config, error) {
	var cfg *rest.Config
	if src != nil {
		raw, err := clientcmd.Load(src.content)
		if err != nil {
			return nil, fmt.Errorf("%s is not a valid kubeconfig: %w", src.attr, err)
		}
		if src.path != "" && !src.merged {
			// Relative certificate and key paths in a kubeconfig file are
			// relative to the file, as kubectl reads them.
			for _, c := range raw.Clusters {
				c.LocationOfOrigin = src.path
			}
			for _, a := range raw.AuthInfos {
				a.LocationOfOrigin = src.path
			}
			if err := clientcmd.ResolveLocalPaths(raw); err != nil {
				return nil, fmt.Errorf("%s: %w", src.attr, err)
			}
		}
		contextName := m.Context.ValueString()
		if contextName == "" {
			contextName = raw.CurrentContext
		}
		if contextName == "" {
			return nil, fmt.Errorf("%s has no current-context; set cluster_connection.context to one of: %s", src.attr, contextNames(raw))
		}
		if _, ok := raw.Contexts[contextName]; !ok {
			where := "the kubeconfig"
			if src.path != "" {
				where = fmt.Sprintf("the kubeconfig file %q", src.path)
			}
			return nil, fmt.Errorf("cluster_connection.context %q is not in %s; it has: %s", contextName, where, contextNames(raw))
		}
		cfg, err = clientcmd.NewNonInteractiveClientConfig(*raw, contextName, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("%s context %q: %w", src.attr, contextName, err)
		}
	} else {
		if m.Host.ValueString() == "" {
			return nil, errors.New("cluster_connection needs kubeconfig, kubeconfig_file or host")
		}
		cfg = &rest.Config{}
	}

	if s := m.Host.ValueString(); s != "" {
		cfg.Host = s
	}
	if s := m.ClusterCACertificate.ValueString(); s != "" {
		pem, err := pemOrBase64(s, "cluster_ca_certificate")
		if err != nil {
			return nil, err
		}
		cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = pem, ""
	}
	if s := m.Token.ValueString(); s != "" {
		cfg.BearerToken, cfg.BearerTokenFile = s, ""
	}
	if s := m.ClientCertificate.ValueString(); s != "" {
		pem, err := pemOrBase64(s, "client_certificate")
		if err != nil {
			return nil, err
		}
		cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.CertFile = pem, ""
	}
	if s := m.ClientKey.ValueString(); s != "" {
		pem, err := pemOrBase64(s, "client_key")
		if err != nil {
			return nil, err
		}
		cfg.TLSClientConfig.KeyData, cfg.TLSClientConfig.KeyFile = pem, ""
	}
	if m.Insecure.ValueBool() {
		cfg.TLSClientConfig.Insecure = true
		cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, ""
	}
	if s := m.ProxyURL.ValueString(); s != "" {
		u, err := parseProxyURL(s)
		if err != nil {
			return nil, err
		}
		cfg.Proxy = u
	}
	if !m.Exec.IsNull() && !m.Exec.IsUnknown() {
		exec, err := m.execConfig(ctx)
		if err != nil {
			return nil, err
		}
		cfg.ExecProvider = exec
	}
	cfg.UserAgent = "k8sconnect"
	// One client serves every object of a run. The engine already bounds how
	// many run at once (terraform -parallelism, 10 by default), so a client-side
	// limit only adds waiting: client-go's default of 5 requests a second, and
	// even the 50 used before, capped a 1,000-object update at 5,000 requests
	// in 100 s or more (make bench). The limit stays as a backstop for an
	// unbounded engine (Pulumi's default --parallel); beyond it, the API
	// server's own priority and fairness queues what it cannot take.
	cfg.QPS, cfg.Burst = 500, 1000
	return cfg, nil
}

func (m Model) execConfig(ctx context.Context) (*clientcmdapi.ExecConfig, error) {
	var e ExecModel
	if diags := m.Exec.As(ctx, &e, basetypes.ObjectAsOptions{}); diags.HasError() {
		return nil, errors.New("cluster_connection.exec could not be read")
	}
	if e.Command.ValueString() == "" {
		return nil, errors.New("cluster_connection.exec.command is required")
	}
	apiVersion := e.APIVersion.ValueString()
	if apiVersion == "" {
		apiVersion = "client.authentication.k8s.io/v1"
	}
	var args []string
	if diags := e.Args.ElementsAs(ctx, &args, false); diags.HasError() {
		return nil, errors.New("cluster_connection.exec.args must be a list of strings")
	}
	env := map[string]string{}
	if diags := e.Env.ElementsAs(ctx, &env, false); diags.HasError() {
		return nil, errors.New("cluster_connection.exec.env must be a map of strings")
	}
	cfg := &clientcmdapi.ExecConfig{
		APIVersion:      apiVersion,
		Command:         e.Command.ValueString(),
		Args:            args,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cfg.Env = append(cfg.Env, clientcmdapi.ExecEnvVar{Name: k, Value: env[k]})
	}
	return cfg, nil
}

func contextNames(cfg *clientcmdapi.Config) string {
	names := make([]string, 0, len(cfg.Contexts))
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// pemOrBase64 accepts PEM as written in a kubeconfig's *-data fields after
// decoding, or the base64 form that cloud providers' outputs usually carry.
func pemOrBase64(s, field string) ([]byte, error) {
	if strings.Contains(s, "-----BEGIN") {
		return []byte(s), nil
	}
	decoded, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || !strings.Contains(string(decoded), "-----BEGIN") {
		return nil, fmt.Errorf("cluster_connection.%s must be PEM or base64-encoded PEM", field)
	}
	return decoded, nil
}
