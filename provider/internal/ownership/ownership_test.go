package ownership

import (
	"strings"
	"testing"
)

// All 16 rows of ADR 0008's table.
func TestClassifyEveryRow(t *testing.T) {
	want := map[int]Kind{
		0: Silent, 1: Silent, 2: Silent, 3: Silent,
		4: Impossible, 5: Impossible, 6: Taking, 7: TakingConflict,
		8: Impossible, 9: Impossible, 10: Releasing, 11: Releasing,
		12: Silent, 13: DriftRevert, 14: Silent, 15: UpdateConflict,
	}
	for row := 0; row < 16; row++ {
		tr := Transition{Prev: row&8 != 0, Now: row&4 != 0, Config: row&2 != 0, External: row&1 != 0}
		if tr.Row() != row {
			t.Fatalf("%+v.Row() = %d, want %d", tr, tr.Row(), row)
		}
		if got := Classify(tr); got != want[row] {
			t.Errorf("row %d %+v: Classify = %v, want %v", row, tr, got, want[row])
		}
		// Conflicts are exactly "external changed and we will own it".
		if got := Classify(tr).IsConflict(); got != (tr.External && tr.Now && want[row] != Impossible) {
			t.Errorf("row %d: IsConflict = %v", row, got)
		}
	}
}

// Impossible rows produce no message and no panic.
func TestImpossibleRowsAreSilent(t *testing.T) {
	r := Report{Subject: "ConfigMap a/b"}
	for _, row := range []int{4, 5, 8, 9} {
		tr := Transition{Prev: row&8 != 0, Now: row&4 != 0, Config: row&2 != 0, External: row&1 != 0}
		if k := r.Add(Field{Path: "data.x", Transition: tr}); k != Impossible {
			t.Fatalf("row %d classified %v", row, k)
		}
	}
	if msgs := r.Messages(Full); len(msgs) != 0 {
		t.Fatalf("impossible rows produced %d messages", len(msgs))
	}
}

// One message per conflict kind, listing every field, with values, manager and remedy.
func TestMessagesAggregatePerKind(t *testing.T) {
	drift := Transition{Prev: true, Now: true, External: true}
	r := Report{Subject: "Deployment prod/web"}
	r.Add(Field{Path: "spec.replicas", Transition: drift, Live: "5", Recorded: "3", Planned: "3", Managers: []string{"horizontal-pod-autoscaler"}})
	r.Add(Field{Path: "spec.paused", Transition: drift, Live: "true", Recorded: "false", Planned: "false", Managers: []string{"kubectl-edit"}})
	r.Add(Field{Path: "spec.template.spec.containers[name=app].image", Transition: Transition{Prev: true, Now: true, Config: true, External: true},
		Live: "nginx:1.18", Recorded: "nginx:1.19", Planned: "nginx:1.20", Managers: []string{"kubectl"}})
	r.Add(Field{Path: "metadata.labels.tier", Transition: Transition{Prev: true, Now: true, Config: true}})

	msgs := r.Messages(Conflicts)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2 (one drift, one update conflict): %+v", len(msgs), msgs)
	}
	d := msgs[0].Detail
	for _, s := range []string{"spec.replicas: 5 -> 3 (changed by horizontal-pod-autoscaler)", "spec.paused: true -> false",
		`add to ignore_fields: ["spec.paused", "spec.replicas"]`, "horizontal-pod-autoscaler, kubectl-edit"} {
		if !strings.Contains(d, s) {
			t.Errorf("drift message lacks %q:\n%s", s, d)
		}
	}
	u := msgs[1].Detail
	if !strings.Contains(u, "nginx:1.18 -> nginx:1.20 (last applied nginx:1.19; they set nginx:1.18 (changed by kubectl))") {
		t.Errorf("update-conflict message lacks both values:\n%s", u)
	}
	if got := r.Messages(None); got != nil {
		t.Fatalf("verbosity none gave %v", got)
	}
}

func TestPersistentConflictWording(t *testing.T) {
	r := Report{Subject: "Deployment prod/web"}
	r.Add(Field{Path: "spec.replicas", Transition: Transition{Prev: true, Now: true, External: true},
		Live: "5", Planned: "3", Managers: []string{"horizontal-pod-autoscaler"}, Streak: 3})
	m := r.Messages(Conflicts)[0]
	if !strings.Contains(m.Summary, "Persistent") ||
		!strings.Contains(m.Detail, "spec.replicas reverted from horizontal-pod-autoscaler on 3 consecutive applies") {
		t.Fatalf("persistent wording missing: %+v", m)
	}
}

func TestNotesOnlyAtFullVerbosity(t *testing.T) {
	r := Report{Subject: "ConfigMap a/b"}
	r.Add(Field{Path: "data.a", Transition: Transition{Now: true, Config: true}})
	r.Add(Field{Path: "data.b", Transition: Transition{Prev: true, Config: true}, Managers: []string{"operator"}})
	if n := len(r.Messages(Conflicts)); n != 0 {
		t.Fatalf("conflicts verbosity gave %d notes", n)
	}
	msgs := r.Messages(Full)
	if len(msgs) != 2 || msgs[0].Warning || !strings.Contains(msgs[1].Detail, "data.b (now managed by operator)") {
		t.Fatalf("full verbosity notes: %+v", msgs)
	}
}

func TestParseVerbosity(t *testing.T) {
	if v, _ := ParseVerbosity(""); v != Conflicts {
		t.Fatalf("default = %v", v)
	}
	if _, err := ParseVerbosity("loud"); err == nil || !strings.Contains(err.Error(), `"full", "conflicts" or "none"`) {
		t.Fatalf("bad value error = %v", err)
	}
}
