package localcluster

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwok plays the kubelet of NodeName: it keeps the node Ready at nodeIP and
// moves the pods bound to it through the stages in stages/*.yaml, giving each
// an IP from podCIDR.
const (
	podCIDR = "10.244.0.0/16"
	nodeIP  = "10.200.0.1"
)

//go:embed stages/*.yaml
var stageFiles embed.FS

// stagesPath is kwok's configuration: the stages, joined.
func (c *Cluster) stagesPath() string { return filepath.Join(c.Dir, "kwok", "stages.yaml") }

// writeStages writes the file at stagesPath.
func (c *Cluster) writeStages() error {
	stages, err := stagesYAML()
	if err != nil {
		return err
	}
	return os.WriteFile(c.stagesPath(), stages, 0o600)
}

// createNode registers NodeName, annotated for kwok to manage, with room for
// thousands of pods. It is there before the scheduler starts, so no pod waits
// for a node.
func (s *startup) createNode(ctx context.Context) error {
	plenty := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("1000"),
		corev1.ResourceMemory:           resource.MustParse("1Ti"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		corev1.ResourcePods:             resource.MustParse("5000"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: NodeName,
			Labels: map[string]string{
				"kubernetes.io/hostname": NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
		},
		Status: corev1.NodeStatus{Capacity: plenty, Allocatable: plenty},
	}
	_, err := s.admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", NodeName, err)
	}
	return nil
}

// startKwok starts kwok without waiting for it (see waitNodeReady).
func (s *startup) startKwok(context.Context) error {
	return s.run(kwokName, []string{
		"--kubeconfig=" + s.c.componentKubeconfig(kwokName),
		"--config=" + s.c.stagesPath(),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=" + podCIDR,
		"--node-ip=" + nodeIP,
		"--node-lease-duration-seconds=40",
	}, "HOME="+s.c.path("kwok")) // kwok also reads $HOME/.kwok/kwok.yaml: not the user's
}

// waitNodeReady waits until kwok reports NodeName Ready.
func (s *startup) waitNodeReady(ctx context.Context) error {
	return s.c.waitFor(ctx, "node "+NodeName+" to be Ready (kwok)", kwokName, func(ctx context.Context) error {
		n, err := s.admin.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not Ready yet")
	})
}

// stagesYAML joins the embedded kwok stages into one multi-document file.
func stagesYAML() ([]byte, error) {
	names, err := fs.Glob(stageFiles, "stages/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := stageFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "---\n# %s\n%s\n", n, data)
	}
	return []byte(b.String()), nil
}
