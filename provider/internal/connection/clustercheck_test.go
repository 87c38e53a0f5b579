package connection

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

func TestIdentitySourcesAndMessages(t *testing.T) {
	for identity, want := range map[string]source{
		"": noIdentity, "6f1c1b0e-0000-4000-8000-000000000000": fromKubeSystem,
		tlsCAPrefix + "ab": fromTLSCA, rootCAPrefix + "cd": fromRootCA,
	} {
		if got := sourceOf(identity); got != want {
			t.Errorf("sourceOf(%q) = %v, want %v", identity, got, want)
		}
	}
	uid := (&OtherClusterError{Object: "ConfigMap a/b", Recorded: "uid-1", Reaching: "uid-2", Host: "https://h"}).Error()
	if !strings.Contains(uid, "kube-system namespace has UID uid-1") || strings.Contains(uid, "rotated") {
		t.Errorf("a UID refusal: %s", uid)
	}
	ca := (&OtherClusterError{Object: "ConfigMap a/b", Recorded: tlsCAPrefix + "old", Reaching: tlsCAPrefix + "new", Host: "https://h"}).Error()
	for _, want := range []string{"different cluster", "fingerprint old", "fingerprint new", "CA was rotated", "state rm", "import"} {
		if !strings.Contains(ca, want) {
			t.Errorf("a CA refusal lacks %q: %s", want, ca)
		}
	}
}

// memoryPrivate is a private state held in a map.
type memoryPrivate map[string][]byte

func (m memoryPrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return m[key], nil
}
func (m memoryPrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	m[key] = value
	return nil
}

// What an apply or refresh keeps is what the next check compares after
// cluster_uid; an unconfirmed check keeps what was there, and cluster_uid is
// not repeated among the others.
func TestRecordedIdentitiesRoundTrip(t *testing.T) {
	ctx := context.Background()
	private := memoryPrivate{}
	if got := RecordedIn(ctx, "uid-1", private); len(got.Also) != 0 || got.Identity != "uid-1" {
		t.Fatalf("nothing kept yet: %+v", got)
	}
	seen := []string{"uid-1", tlsCAPrefix + "aa", rootCAPrefix + "bb"}
	if d := Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: seen}); d.HasError() {
		t.Fatal(d)
	}
	if got := RecordedIn(ctx, "uid-1", private); !slices.Equal(got.Also, seen[1:]) {
		t.Fatalf("kept %v, want %v", got.Also, seen[1:])
	}
	if raw := string(private[privatestate.ClusterIdentities]); strings.Contains(raw, "uid-1") {
		t.Errorf("private state repeats cluster_uid, which state holds: %s", raw)
	}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{"uid-1"}})
	if got := RecordedIn(ctx, "uid-1", private); !slices.Equal(got.Also, seen[1:]) {
		t.Fatalf("a check that saw only cluster_uid replaced what was kept: %v", got.Also)
	}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{tlsCAPrefix + "cc"}, Unconfirmed: "could not compare"})
	if got := RecordedIn(ctx, "uid-1", private); !slices.Equal(got.Also, seen[1:]) {
		t.Fatalf("an unconfirmed check replaced what was kept: %v", got.Also)
	}
	if got := RecordedIn(ctx, "", private); len(got.Also) != 0 {
		t.Fatalf("no cluster_uid, yet others to compare: %v", got.Also)
	}
	private[privatestate.ClusterIdentities] = []byte("not json")
	if got := RecordedIn(ctx, "uid-1", private); len(got.Also) != 0 || got.Identity != "uid-1" {
		t.Fatalf("an unreadable list: %+v", got)
	}
}

// fakeCluster is a Client whose cluster shows kube-system's UID uid (none
// when ""), kube-root-ca.crt holding rootCA in every namespace (none when
// nil), and whose handshakes were verified by anchors. Each read it
// answers is counted in reads.
func fakeCluster(t *testing.T, uid string, rootCA *pki.KeyPair, anchors []string) (*Client, *int) {
	t.Helper()
	var objects []runtime.Object
	if uid != "" {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName("kube-system")
		ns.SetUID(ktypes.UID(uid))
		objects = append(objects, ns)
	}
	for _, namespace := range []string{"default", "app"} {
		if rootCA == nil {
			break
		}
		cm := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"ca.crt": string(rootCA.CertPEM)}}}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace(namespace)
		cm.SetName(rootCAConfigMap)
		objects = append(objects, cm)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		namespaces: "NamespaceList", configMaps: "ConfigMapList"}, objects...)
	reads := new(int)
	dyn.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		*reads++
		return false, nil, nil
	})
	c := &Client{Host: "https://cluster.example:6443", Dynamic: dyn}
	if anchors != nil {
		c.identity.handshake = &handshakeCAs{anchors: anchors}
	} else {
		c.identity.why = "the connection is insecure (insecure = true)"
	}
	return c, reads
}

func newTestCA(t *testing.T, name string) *pki.KeyPair {
	t.Helper()
	ca, err := pki.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Every recorded identity whose source can be read now is compared, not
// only the first that matches. Two clusters behind one front CA (Rancher,
// Teleport, one corporate PKI) present the same handshake CA; their
// kube-root-ca.crt tells them apart, even to credentials that may not read
// kube-system. The kube-system UID alone outranks a CA that changed, as a
// rotation or a new proxy changes it.
func TestCheckClusterComparesEveryReadableSource(t *testing.T) {
	ctx := context.Background()
	front, first, second := newTestCA(t, "front"), newTestCA(t, "first"), newTestCA(t, "second")
	frontFP, firstFP, secondFP := fingerprint(front.Cert.Raw), fingerprint(first.Cert.Raw), fingerprint(second.Cert.Raw)
	tls := func(fp string) string { return tlsCAPrefix + fp }
	root := func(fp string) string { return rootCAPrefix + fp }

	for _, tc := range []struct {
		name     string
		recorded Recorded
		uid      string // what the cluster shows now
		rootCA   *pki.KeyPair
		anchors  []string
		// refused: the source the refusal names (recorded, then reaching);
		// unconfirmed or changed otherwise.
		refused           []string
		unconfirmed       bool
		changed           bool
		via               string
		wantSeenAtLeast   []string
		wantIdentityIsNew string
	}{
		{name: "front CA, namespace account, the other cluster's kube-root-ca.crt",
			recorded: Recorded{Identity: tls(frontFP), Also: []string{root(firstFP)}},
			rootCA:   second, anchors: []string{frontFP},
			refused: []string{root(firstFP), root(secondFP)}, via: tls(frontFP)},
		{name: "front CA, kube-root-ca.crt recorded first",
			recorded: Recorded{Identity: root(firstFP), Also: []string{tls(frontFP)}},
			rootCA:   second, anchors: []string{frontFP},
			refused: []string{root(firstFP), root(secondFP)}},
		{name: "front CA, the same cluster",
			recorded: Recorded{Identity: tls(frontFP), Also: []string{root(firstFP)}},
			rootCA:   first, anchors: []string{frontFP}},
		{name: "front CA, kube-root-ca.crt unreadable now: the handshake confirms",
			recorded: Recorded{Identity: tls(frontFP), Also: []string{root(firstFP)}},
			anchors:  []string{frontFP}},
		{name: "UID differs while both CAs match",
			recorded: Recorded{Identity: "uid-1", Also: []string{tls(frontFP), root(firstFP)}},
			uid:      "uid-2", rootCA: first, anchors: []string{frontFP},
			refused: []string{"uid-1", "uid-2"}},
		{name: "UID matches, CAs rotated: a warning, not a refusal",
			recorded: Recorded{Identity: "uid-1", Also: []string{tls(firstFP), root(firstFP)}},
			uid:      "uid-1", rootCA: second, anchors: []string{secondFP},
			changed: true, wantSeenAtLeast: []string{"uid-1", tls(secondFP), root(secondFP)}},
		{name: "a rotation in progress: the old CA still in kube-root-ca.crt confirms the handshake's",
			recorded: Recorded{Identity: tls(firstFP)},
			rootCA:   first, anchors: []string{secondFP}},
		{name: "a CA of another source never refutes",
			recorded: Recorded{Identity: root(firstFP)},
			anchors:  []string{frontFP}, unconfirmed: true},
		{name: "nothing recorded is readable",
			recorded: Recorded{Identity: "uid-1", Also: []string{tls(firstFP)}},
			rootCA:   nil, anchors: nil, unconfirmed: true},
		{name: "a create records every source, kube-root-ca.crt included",
			recorded: Recorded{}, uid: "uid-1", rootCA: first, anchors: []string{frontFP},
			wantSeenAtLeast: []string{"uid-1", tls(frontFP), root(firstFP)}, wantIdentityIsNew: "uid-1"},
		{name: "a create by a namespace account behind a front CA records both CAs",
			recorded: Recorded{}, rootCA: first, anchors: []string{frontFP},
			wantSeenAtLeast: []string{tls(frontFP), root(firstFP)}, wantIdentityIsNew: tls(frontFP)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fakeCluster(t, tc.uid, tc.rootCA, tc.anchors)
			check, err := c.CheckCluster(ctx, tc.recorded, "ConfigMap app/x", "app")
			var other *OtherClusterError
			switch {
			case tc.refused != nil:
				if !errors.As(err, &other) {
					t.Fatalf("want a refusal naming %v, got %+v, %v", tc.refused, check, err)
				}
				if other.Recorded != tc.refused[0] || other.Reaching != tc.refused[1] || other.Via != tc.via {
					t.Fatalf("refusal names %s -> %s (via %q), want %s -> %s (via %q)", other.Recorded, other.Reaching,
						other.Via, tc.refused[0], tc.refused[1], tc.via)
				}
				return
			case err != nil:
				t.Fatalf("want no refusal, got %v", err)
			}
			if got := check.Unconfirmed != ""; got != tc.unconfirmed {
				t.Fatalf("unconfirmed = %v (%q), want %v", got, check.Unconfirmed, tc.unconfirmed)
			}
			if got := check.Changed != ""; got != tc.changed {
				t.Fatalf("changed = %v (%q), want %v", got, check.Changed, tc.changed)
			}
			for _, id := range tc.wantSeenAtLeast {
				if !slices.Contains(check.Seen, id) {
					t.Errorf("Seen %v lacks %s", check.Seen, id)
				}
			}
			if tc.wantIdentityIsNew != "" && check.Identity != tc.wantIdentityIsNew {
				t.Errorf("Identity = %q, want %q", check.Identity, tc.wantIdentityIsNew)
			}
		})
	}
}

// The identities are read once per Client, however many objects are
// checked: kube-root-ca.crt, now always read, costs one request per Client.
func TestCheckClusterReadsOncePerClient(t *testing.T) {
	ctx := context.Background()
	ca := newTestCA(t, "cluster")
	c, reads := fakeCluster(t, "uid-1", ca, []string{fingerprint(ca.Cert.Raw)})
	for range 50 {
		if _, err := c.ConfirmCluster(ctx, Recorded{Identity: "uid-1", Also: []string{rootCAPrefix + fingerprint(ca.Cert.Raw)}},
			"ConfigMap app/x", "app"); err != nil {
			t.Fatal(err)
		}
	}
	if *reads != 2 {
		t.Fatalf("50 checks made %d reads, want 2 (kube-system, kube-root-ca.crt)", *reads)
	}
}

// A cluster_id that differs from the recorded one is refused before any
// request, naming both values and the remedy; a matching one still compares
// what the cluster shows, and confirms nothing by itself.
func TestCheckClusterPin(t *testing.T) {
	ctx := context.Background()
	ca := newTestCA(t, "cluster")
	c, reads := fakeCluster(t, "uid-2", ca, nil)
	c.pin = "staging"
	_, err := c.CheckCluster(ctx, Recorded{Identity: "uid-1", Pin: "prod-eu"}, "ConfigMap app/x", "app")
	var pinned *PinMismatchError
	if !errors.As(err, &pinned) {
		t.Fatalf("want a PinMismatchError, got %v", err)
	}
	for _, want := range []string{`cluster_id is "staging"`, `pinned as "prod-eu"`, `set cluster_id back to "prod-eu"`,
		"state rm", "import", "rename", "reads and writes nothing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if *reads != 0 {
		t.Fatalf("a cluster_id mismatch made %d requests before refusing", *reads)
	}

	c.pin = "prod-eu"
	_, err = c.CheckCluster(ctx, Recorded{Identity: "uid-1", Pin: "prod-eu"}, "ConfigMap app/x", "app")
	var other *OtherClusterError
	if !errors.As(err, &other) {
		t.Fatalf("a matching cluster_id must not hide another cluster's UID: %v", err)
	}
	_, err = c.ConfirmCluster(ctx, Recorded{Identity: tlsCAPrefix + "aa", Pin: "prod-eu"}, "ConfigMap app/x", "app")
	var unconfirmed *UnconfirmedError
	if !errors.As(err, &unconfirmed) {
		t.Fatalf("a matching cluster_id confirmed a cluster nothing else could: %v", err)
	}
	check, err := c.CheckCluster(ctx, Recorded{Identity: "uid-2"}, "ConfigMap app/x", "app")
	if err != nil || check.Pin != "prod-eu" {
		t.Fatalf("a cluster_id set on an object that recorded none: %+v, %v; want it confirmed and kept", check, err)
	}
	c.pin = ""
	if _, err := c.CheckCluster(ctx, Recorded{Identity: "uid-2", Pin: "prod-eu"}, "ConfigMap app/x", "app"); err != nil {
		t.Fatalf("a cluster_id removed from the configuration: %v", err)
	}
}

// What Record keeps of the pin: the connection's now when the check
// confirmed the cluster (none: removed) or when nothing names the cluster;
// what was there when the check could not confirm it.
func TestRecordedPinRoundTrip(t *testing.T) {
	ctx := context.Background()
	private := memoryPrivate{}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{"uid-1"}, Pin: "prod"})
	if got := RecordedIn(ctx, "uid-1", private); got.Pin != "prod" {
		t.Fatalf("pin %q, want prod", got.Pin)
	}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{"uid-1"}, Pin: "other", Unconfirmed: "could not compare"})
	if got := RecordedIn(ctx, "uid-1", private); got.Pin != "prod" {
		t.Fatalf("an unconfirmed check replaced the pin: %q", got.Pin)
	}
	Record(ctx, private, ClusterCheck{Identity: "uid-1", Seen: []string{"uid-1"}})
	if got := RecordedIn(ctx, "uid-1", private); got.Pin != "" {
		t.Fatalf("a confirmed check without cluster_id kept the pin %q", got.Pin)
	}
	Record(ctx, private, ClusterCheck{Unconfirmed: "no identity", Pin: "lab"})
	if got := RecordedIn(ctx, "", private); got.Pin != "lab" {
		t.Fatalf("a resource without any identity lost its pin: %q", got.Pin)
	}
}

// cluster_id is refused at validation when empty, too long or holding
// characters a message would quote ambiguously; the errors name no
// attribute, as every cluster_connection error.
func TestClusterIDValidation(t *testing.T) {
	ctx := context.Background()
	for value, ok := range map[string]bool{
		"prod-eu": true, "arn:aws:eks:eu-west-1:123456789012:cluster/prod": true, "projects/p/locations/l/clusters/c": true,
		"/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/c": true,
		"": false, "prod eu": false, `prod"`: false, strings.Repeat("a", maxClusterIDLength+1): false,
	} {
		var resp validator.StringResponse
		for _, v := range clusterIDValidators {
			v.ValidateString(ctx, validator.StringRequest{Path: path.Root("cluster_connection").AtName("cluster_id"),
				ConfigValue: types.StringValue(value)}, &resp)
		}
		if got := !resp.Diagnostics.HasError(); got != ok {
			t.Errorf("cluster_id %q: valid = %v, want %v (%v)", value, got, ok, resp.Diagnostics)
		}
		for _, d := range resp.Diagnostics {
			if _, attached := d.(diag.DiagnosticWithPath); attached {
				t.Errorf("cluster_id %q: the error is attached to an attribute", value)
			}
		}
	}
}
