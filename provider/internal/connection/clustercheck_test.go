package connection

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

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
