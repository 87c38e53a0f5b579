// Package ownership classifies what a plan does to the ownership of each field
// (ADR 0008) and turns the result into at most one message per kind of conflict
// per resource. k8sconnect_object, k8sconnect_patch and k8sconnect_helm_release
// (for each object of the release) all use it, so the same situation always
// reads the same way.
//
// Every field is described by four facts:
//
//	prev      we owned it after our last apply
//	now       we will own it after this apply (from the dry run)
//	config    the user's configuration for it changed (value, ignore_fields, patch)
//	external  its live value differs from the value we recorded (value-based:
//	          a co-owner who applied the same value is not a change)
//
// which make the 16 rows of ADR 0008's table.
package ownership

import "fmt"

// Transition is one field's four facts.
type Transition struct {
	Prev, Now, Config, External bool
}

// Row is the transition's row in ADR 0008's table: prev, now, config and external
// as the bits 8, 4, 2 and 1.
func (t Transition) Row() int {
	r := 0
	for i, b := range []bool{t.Prev, t.Now, t.Config, t.External} {
		if b {
			r |= 8 >> i
		}
	}
	return r
}

// Kind is what a transition means for the user.
type Kind int

const (
	// Silent: nothing needs a decision (rows 0-3, 12, 14).
	Silent Kind = iota
	// Taking: we start to manage a field nobody else changed (row 6).
	Taking
	// Releasing: the user let go of a field (rows 10, 11).
	Releasing
	// TakingConflict: we take a field another manager has been changing (row 7).
	TakingConflict
	// DriftRevert: we revert a field someone else changed (row 13).
	DriftRevert
	// UpdateConflict: the user changed a field someone else also changed (row 15).
	UpdateConflict
	// Impossible: rows 4, 5, 8, 9 cannot follow from an apply with force; if the
	// data ever says so, nothing is shown and the caller logs it at debug level.
	Impossible
)

func (k Kind) String() string {
	return [...]string{"silent", "taking", "releasing", "taking-conflict", "drift-revert", "update-conflict", "impossible"}[k]
}

// IsConflict: another manager acts on a field we are about to assert.
func (k Kind) IsConflict() bool {
	return k == TakingConflict || k == DriftRevert || k == UpdateConflict
}

var byRow = [16]Kind{
	0: Silent, 1: Silent, 2: Silent, 3: Silent,
	4: Impossible, 5: Impossible,
	6: Taking, 7: TakingConflict,
	8: Impossible, 9: Impossible,
	10: Releasing, 11: Releasing,
	12: Silent, 13: DriftRevert,
	14: Silent, 15: UpdateConflict,
}

// Classify maps a transition to its kind.
func Classify(t Transition) Kind { return byRow[t.Row()] }

// Verbosity is the provider's ownership_messages setting.
type Verbosity string

const (
	Full      Verbosity = "full"      // conflicts as warnings, taking/releasing as notes
	Conflicts Verbosity = "conflicts" // conflicts only (the default)
	None      Verbosity = "none"      // nothing
)

// ParseVerbosity reads the setting; empty means the default.
func ParseVerbosity(s string) (Verbosity, error) {
	switch Verbosity(s) {
	case "":
		return Conflicts, nil
	case Full, Conflicts, None:
		return Verbosity(s), nil
	}
	return "", fmt.Errorf("ownership_messages must be \"full\", \"conflicts\" or \"none\", not %q", s)
}
