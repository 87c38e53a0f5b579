// Command go runs a program of examples/pulumi-go (the quickstart, or one of
// its scenarios) as an Automation API inline program, one operation per run.
// See ../README.md for the interface.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/k8sconnect/k8sconnect/examples/pulumi-go/quickstart"
	"github.com/k8sconnect/k8sconnect/examples/pulumi-go/scenarios"
)

const resultPrefix = "k8sconnect-result: "

type result struct {
	Operation string         `json:"operation"`
	Changes   map[string]int `json:"changes"`
	Outputs   map[string]any `json:"outputs"`
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if len(os.Args) < 2 || len(os.Args) > 3 || (len(os.Args) == 3 && os.Args[2] != "--refresh") {
		return fmt.Errorf("usage: %s up|preview|refresh|destroy [--refresh]", os.Args[0])
	}
	operation := os.Args[1]
	refreshFirst := len(os.Args) == 3
	program := pulumi.RunFunc(quickstart.Program)
	if name := os.Getenv("K8SCONNECT_PULUMI_PROGRAM"); name != "" {
		p, ok := scenarios.Programs[name]
		if !ok {
			return fmt.Errorf("K8SCONNECT_PULUMI_PROGRAM: no scenario %q in examples/pulumi-go/scenarios", name)
		}
		program = p
	}

	exampleDir := os.Getenv("K8SCONNECT_PULUMI_EXAMPLE")
	if exampleDir == "" {
		exampleDir = filepath.Join("..", "..", "..", "examples", "pulumi-go")
	}
	project, err := projectName(exampleDir)
	if err != nil {
		return err
	}
	stackName := os.Getenv("K8SCONNECT_PULUMI_STACK")
	if stackName == "" {
		stackName = "dev"
	}
	config := map[string]json.RawMessage{}
	if s := os.Getenv("K8SCONNECT_PULUMI_CONFIG"); s != "" {
		if err := json.Unmarshal([]byte(s), &config); err != nil {
			return fmt.Errorf("K8SCONNECT_PULUMI_CONFIG: %w", err)
		}
	}

	var opts []auto.LocalWorkspaceOption
	if dir := os.Getenv("K8SCONNECT_PULUMI_WORKDIR"); dir != "" {
		opts = append(opts, auto.WorkDir(dir))
	}
	stack, err := auto.UpsertStackInlineSource(ctx, stackName, project, program, opts...)
	if err != nil {
		return err
	}
	values := auto.ConfigMap{}
	for key, raw := range config {
		var v auto.ConfigValue
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			v.Value = s
		} else if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("K8SCONNECT_PULUMI_CONFIG[%s]: want a string or {\"value\":..., \"secret\":...}: %w", key, err)
		}
		values[key] = v
	}
	if err := stack.SetAllConfig(ctx, values); err != nil {
		return err
	}

	res := result{Operation: operation, Changes: map[string]int{}, Outputs: map[string]any{}}
	switch operation {
	case "up":
		opts := []optup.Option{optup.ProgressStreams(os.Stdout)}
		if refreshFirst {
			opts = append(opts, optup.Refresh())
		}
		r, err := stack.Up(ctx, opts...)
		if err != nil {
			return err
		}
		res.Changes = changes(r.Summary.ResourceChanges)
		for k, o := range r.Outputs {
			res.Outputs[k] = o.Value
		}
	case "preview":
		opts := []optpreview.Option{optpreview.ProgressStreams(os.Stdout)}
		if refreshFirst {
			opts = append(opts, optpreview.Refresh())
		}
		r, err := stack.Preview(ctx, opts...)
		if err != nil {
			return err
		}
		for op, n := range r.ChangeSummary {
			res.Changes[string(op)] = n
		}
	case "refresh":
		r, err := stack.Refresh(ctx, optrefresh.ProgressStreams(os.Stdout))
		if err != nil {
			return err
		}
		res.Changes = changes(r.Summary.ResourceChanges)
	case "destroy":
		r, err := stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stdout))
		if err != nil {
			return err
		}
		res.Changes = changes(r.Summary.ResourceChanges)
	default:
		return fmt.Errorf("unknown operation %q: use up, preview, refresh or destroy", operation)
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Printf("\n%s%s\n", resultPrefix, out)
	return nil
}

func changes(m *map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return *m
}

var nameLine = regexp.MustCompile(`(?m)^name:\s*(\S+)\s*$`)

// projectName reads `name:` from the example's Pulumi.yaml, so config keys land
// in the namespace the program reads.
func projectName(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "Pulumi.yaml"))
	if err != nil {
		return "", err
	}
	m := nameLine.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("no name in %s/Pulumi.yaml", dir)
	}
	return string(m[1]), nil
}
