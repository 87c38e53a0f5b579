package main

import (
	"slices"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

func TestToolNames(t *testing.T) {
	all := toolchain.Names()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, all},
		{[]string{"kwok", "helm"}, []string{"kwok", "helm"}},
		{[]string{"-except", "helm"}, slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == "helm" })},
		{[]string{"-except", "helm", "-except", "kwok", "kwok", "etcd", "helm"}, []string{"etcd"}},
		{[]string{"-except", "helm", "helm"}, nil},
	} {
		got, err := toolNames(c.args)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("toolNames(%q) = %q, %v; want %q", c.args, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"-except"}, {"-except", "nope"}} {
		if _, err := toolNames(bad); err == nil {
			t.Errorf("toolNames(%q): no error", bad)
		}
	}
}
