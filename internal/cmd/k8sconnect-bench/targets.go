package main

import (
	"fmt"
	"slices"
	"strings"
)

// target is one operation's limit: at most max times the baseline's time
// for the same operation.
type target struct {
	op  string
	max float64
}

// targets are the limits docs/performance.md's table of targets sets the
// workload's engines, each against the workload's baseline, and the limit
// on the plugins' peak RSS: for N objects, create and an update at most
// 1.5x kubectl, a no-change plan and a destroy at most 1.0x; for the bundle,
// create and either update at most 1.0x, a no-change plan at most 0.5x; for
// a chart, install and upgrade at most 1.5x helm, a no-change plan at most
// 1.0x its server dry run.
func (w workload) targets() (ops []target, rssMB float64) {
	switch w {
	case bundle:
		return []target{{opCreate, 1.0}, {opPlan, 0.5}, {opUpdate, 1.0}, {opUpdateCRD, 1.0}}, 100
	case chart:
		return []target{{opCreate, 1.5}, {opPlan, 1.0}, {opUpdate, 1.5}}, 150
	}
	return []target{{opCreate, 1.5}, {opPlan, 1.0}, {opUpdate, 1.5}, {opDestroy, 1.0}}, 100
}

// setTargets are the limits of the same workload as one manifest set
// (docs/performance.md): create and an update at most 1.0x kubectl, a
// no-change plan at most 0.5x, a destroy at most 1.0x kubectl delete; the
// plugins' peak RSS at most 150 MB. A set holds every object in one plan
// whatever the workload, so its memory limit is the set's own on either.
func (w workload) setTargets() (ops []target, rssMB float64) {
	ops = []target{{opCreate, 1.0}, {opPlan, 0.5}, {opUpdate, 1.0}}
	if w == bundle {
		ops = append(ops, target{opUpdateCRD, 1.0})
	}
	return append(ops, target{opDestroy, 1.0}), 150
}

// targetsOf are the limits tool is held to: a set's (a configuration named
// _set) or the workload's.
func (w workload) targetsOf(tool string) ([]target, float64) {
	if strings.HasSuffix(tool, "_set") && w != chart {
		return w.setTargets()
	}
	return w.targets()
}

func limitsLine(what string, ops []target, rssMB float64) string {
	var limits []string
	for _, t := range ops {
		limits = append(limits, fmt.Sprintf("%s at most %.1fx", t.op, t.max))
	}
	return fmt.Sprintf("%s: %s; the plugins' peak RSS at most %.0f MB.", what, strings.Join(limits, ", "), rssMB)
}

// targetLines are the notes that hold each engine configuration to the
// workload's targets at each size: its time over the baseline's per
// operation, and its plugins' peak RSS over every operation, each met or
// missed. An engine alone (_data) runs no provider and makes no object, so
// it is held to nothing.
func targetLines(w workload, ms []measurement, ns []int) []string {
	ops, rssMB := w.targets()
	lines := []string{limitsLine(fmt.Sprintf("Targets (%s, docs/performance.md), against %s", w, w.baseline()), ops, rssMB)}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	var tools []string
	for _, m := range ms {
		if m.tool != w.baseline() && !strings.HasSuffix(m.tool, "_"+string(alone)) && !slices.Contains(tools, m.tool) {
			tools = append(tools, m.tool)
		}
	}
	setLine := false
	for _, t := range tools {
		ops, rssMB := w.targetsOf(t)
		if strings.HasSuffix(t, "_set") && w != chart && !setLine {
			lines = append(lines, limitsLine("As one set", ops, rssMB))
			setLine = true
		}
		for _, n := range w.sizes(ns) {
			var parts []string
			for _, target := range ops {
				m, ok1 := find(ms, t, n, target.op)
				k, ok2 := find(ms, w.baseline(), n, target.op)
				if !ok1 || !ok2 {
					continue
				}
				r := m.duration.Seconds() / k.duration.Seconds()
				parts = append(parts, fmt.Sprintf("%s %.2fx (%s)", target.op, r, verdict(r <= target.max)))
			}
			var peakKiB int64
			for _, m := range ms {
				if m.tool == t && m.n == n {
					peakKiB = max(peakKiB, m.peakKiB)
				}
			}
			if peakKiB > 0 {
				mb := float64(peakKiB) * 1024 / 1e6
				parts = append(parts, fmt.Sprintf("peak RSS %.0f MB (%s)", mb, verdict(mb <= rssMB)))
			}
			if len(parts) > 0 {
				lines = append(lines, fmt.Sprintf("%s at %s=%d against the targets: %s.", t, w.sizeColumn(), n, strings.Join(parts, ", ")))
			}
		}
	}
	return lines
}
