package patch

import (
	"errors"
	"strings"
	"testing"
)

// A decoder's message may quote the text it stopped at: for a write-only
// input only the position is kept; for any other, the whole message.
func TestDecodeDetailHidesWhatAWriteOnlyInputHolds(t *testing.T) {
	err := errors.New(`yaml: line 3, column 7: did not find expected key near "hunter2"`)
	for _, in := range inputs {
		got := decodeDetail(err, in)
		switch {
		case in.writeOnly && (strings.Contains(got, "hunter2") || !strings.Contains(got, "line 3, column 7")):
			t.Errorf("%s: %q", in.attr, got)
		case !in.writeOnly && got != err.Error():
			t.Errorf("%s: %q, want the whole message", in.attr, got)
		}
	}
	if got := decodeDetail(errors.New(`invalid character 'h' looking for beginning of value`), inputs[1]); strings.Contains(got, "'h'") {
		t.Errorf("a message without a position: %q", got)
	}
}
