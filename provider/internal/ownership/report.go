package ownership

import (
	"fmt"
	"sort"
	"strings"

	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// Field is one field's transition with what the message needs to say.
type Field struct {
	Path       string
	Transition Transition
	// Live is the value in the cluster now; Recorded the value we applied last;
	// Planned the value this apply will set. Empty when absent.
	Live, Recorded, Planned string
	// Managers are the other managers that own the field now.
	Managers []string
	// Streak counts the consecutive plans that re-took this field from the same
	// manager, including this one (persistent conflicts).
	Streak int
}

// Message is one diagnostic to show.
type Message struct {
	Warning         bool // false: a note (shown as a warning with "Note:" in its summary)
	Summary, Detail string
}

// Report collects a resource's classified fields.
type Report struct {
	// Subject names the resource in messages, e.g. "Deployment prod/web".
	Subject string
	// LetGo says, in the remedy of conflict messages, how the resource hands
	// fields to another manager: a format whose %s is the quoted paths. Empty
	// is k8sconnect_object's way, "add to ignore_fields: [%s]".
	LetGo    string
	fields   map[Kind][]Field
	redactor sensitive.Redactor
}

// Add records one field; silent and impossible kinds are dropped.
func (r *Report) Add(f Field) Kind {
	k := Classify(f.Transition)
	if k == Silent || k == Impossible {
		return k
	}
	if r.fields == nil {
		r.fields = map[Kind][]Field{}
	}
	r.fields[k] = append(r.fields[k], f)
	return k
}

// Fields returns what was recorded for one kind, sorted by path.
func (r *Report) Fields(k Kind) []Field {
	fs := append([]Field(nil), r.fields[k]...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	return fs
}

// Messages aggregates the report: at most one message per kind.
func (r *Report) Messages(v Verbosity) []Message {
	if v == None {
		return nil
	}
	var out []Message
	if fs := r.Fields(DriftRevert); len(fs) > 0 {
		out = append(out, r.driftMessage(fs))
	}
	if fs := r.Fields(TakingConflict); len(fs) > 0 {
		out = append(out, r.takingMessage(fs))
	}
	if fs := r.Fields(UpdateConflict); len(fs) > 0 {
		out = append(out, r.updateMessage(fs))
	}
	if v == Full {
		if fs := r.Fields(Taking); len(fs) > 0 {
			out = append(out, Message{Summary: "Note: " + r.Subject + ": k8sconnect starts managing " + pathList(fs),
				Detail: "These fields were not managed by this resource before (for example, they were in ignore_fields)."})
		}
		if fs := r.Fields(Releasing); len(fs) > 0 {
			var b strings.Builder
			for _, f := range fs {
				fmt.Fprintf(&b, "  %s", f.Path)
				if len(f.Managers) > 0 {
					fmt.Fprintf(&b, " (now managed by %s)", strings.Join(f.Managers, ", "))
				}
				b.WriteString("\n")
			}
			out = append(out, Message{Summary: "Note: " + r.Subject + ": k8sconnect releases " + pathList(fs),
				Detail: "These fields are no longer applied by this resource; their values stay in the cluster:\n" + b.String()})
		}
	}
	return out
}

func (r *Report) driftMessage(fs []Field) Message {
	var b strings.Builder
	fmt.Fprintf(&b, "These fields of %s were changed outside this configuration and will be set back:\n\n", r.Subject)
	var persistent []Field
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s: %s%s\n", f.Path, change(f.Live, f.Planned), by(f.Managers))
		if f.Streak >= 2 {
			persistent = append(persistent, f)
		}
	}
	for _, f := range persistent {
		fmt.Fprintf(&b, "\n%s reverted from %s on %d consecutive applies: they keep changing it back.",
			f.Path, managerNames(f.Managers), f.Streak)
	}
	b.WriteString("\n" + r.remedy(fs))
	summary := "Drift: external changes will be reverted"
	if len(persistent) > 0 {
		summary = "Persistent ownership conflict: external changes will be reverted again"
	}
	return Message{Warning: true, Summary: summary, Detail: b.String()}
}

func (r *Report) takingMessage(fs []Field) Message {
	var b strings.Builder
	fmt.Fprintf(&b, "These fields of %s are being managed by another manager, and this apply takes them over:\n\n", r.Subject)
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s: %s%s\n", f.Path, change(f.Live, f.Planned), by(f.Managers))
	}
	b.WriteString("\nIf that manager keeps running it will change them back on every reconcile, and every plan will show drift.\n")
	b.WriteString(r.remedy(fs))
	return Message{Warning: true, Summary: "Ownership conflict: taking fields from an active manager", Detail: b.String()}
}

func (r *Report) updateMessage(fs []Field) Message {
	var b strings.Builder
	fmt.Fprintf(&b, "You changed these fields of %s, and so did another manager; your configuration wins:\n\n", r.Subject)
	for _, f := range fs {
		if sensitive.IsRedacted(f.Live) || sensitive.IsRedacted(f.Planned) || sensitive.IsRedacted(f.Recorded) {
			fmt.Fprintf(&b, "  %s: %s (they changed it too%s)\n", f.Path, sensitiveChange, by(f.Managers))
			continue
		}
		fmt.Fprintf(&b, "  %s: %s -> %s (last applied %s; they set %s%s)\n",
			f.Path, show(f.Live), show(f.Planned), show(f.Recorded), show(f.Live), by(f.Managers))
	}
	b.WriteString("\n" + r.remedy(fs))
	return Message{Warning: true, Summary: "Ownership conflict: overwriting concurrent external changes", Detail: b.String()}
}

// remedy names the exact ignore_fields entries (or what LetGo says) that would
// end the conflict, or the managers to stop.
func (r *Report) remedy(fs []Field) string {
	var paths []string
	listed := map[string]bool{}
	for _, f := range fs {
		p := sensitive.Selectable(f.Path)
		if !listed[p] {
			listed[p] = true
			paths = append(paths, fmt.Sprintf("%q", p))
		}
	}
	managers := map[string]bool{}
	for _, f := range fs {
		for _, m := range f.Managers {
			managers[m] = true
		}
	}
	var ms []string
	for m := range managers {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	who := "the other manager"
	if len(ms) > 0 {
		who = strings.Join(ms, ", ")
	}
	letGo := r.LetGo
	if letGo == "" {
		letGo = "add to ignore_fields: [%s]"
	}
	return fmt.Sprintf("To let %s manage them, %s\nTo keep them yours, stop %s from changing them.",
		who, fmt.Sprintf(letGo, strings.Join(paths, ", ")), who)
}

func by(managers []string) string {
	if len(managers) == 0 {
		return ""
	}
	return " (changed by " + strings.Join(managers, ", ") + ")"
}

func managerNames(managers []string) string {
	if len(managers) == 0 {
		return "another manager"
	}
	return strings.Join(managers, ", ")
}

// sensitiveChange stands for "old -> new" when the field is sensitive: the
// message names the field and who changed it, never a value or its hash.
const sensitiveChange = "changed (sensitive: values not shown)"

// change is "old -> new" for a field's message.
func change(from, to string) string {
	if sensitive.IsRedacted(from) || sensitive.IsRedacted(to) {
		return sensitiveChange
	}
	return show(from) + " -> " + show(to)
}

func show(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

func pathList(fs []Field) string {
	ps := make([]string, len(fs))
	for i, f := range fs {
		ps[i] = f.Path
	}
	return strings.Join(ps, ", ")
}
