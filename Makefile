# k8sconnect developer entry points. Every target builds what it needs; binaries
# that take minutes (kube-apiserver, etcd, kwok, pulumi, tofu) are built once and
# cached under $(K8SCONNECT_TOOLS_DIR) (default: the user cache dir).

SHELL   := bash
.SHELLFLAGS := -eu -o pipefail -c
GO      ?= go
VERSION ?= 0.1.0-dev
DEV     := $(GO) run ./internal/cmd/k8sconnect-dev
WORK    := $(CURDIR)/.work
TEST_TIMEOUT ?= 45m

.PHONY: all tools build cluster-up cluster-down generate docs demo demo-down test test-unit lint bench

all: build

## tools: build the pinned toolchain (kube-apiserver, etcd, kwok, pulumi, tofu) once
tools:
	$(DEV) tools

## build: terraform-provider-k8sconnect and pulumi-resource-k8sconnect into bin/
## (the bridge is its own Go module: see bridge/README.md)
build:
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/ ./provider/cmd/terraform-provider-k8sconnect
	cd bridge && $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o ../bin/ ./cmd/pulumi-resource-k8sconnect

## cluster-up: start the embedded cluster if it is not running; last line is KUBECONFIG=<path>
cluster-up:
	@$(DEV) cluster-up

## cluster-down: stop the embedded cluster
cluster-down:
	$(DEV) cluster-down

## bench: time N (default 200) ConfigMaps through terraform against kubectl; peak RSS; requests per object
N ?= 200
bench: tools
	$(GO) run ./internal/cmd/k8sconnect-bench -n $(N)

## generate: schema/ and the SDKs in sdk/ from the provider (a test fails when they are stale)
generate:
	cd bridge && $(GO) run ./cmd/k8sconnect-sdkgen

## docs: the Terraform/OpenTofu registry docs in docs/ from the schema, examples/ and templates/ (a test fails when stale)
docs:
	$(DEV) docs

## demo: the quickstart on the embedded cluster, with terraform and with Pulumi YAML.
## Builds only what it needs; `make demo-down` removes what it made.
DEMO := $(WORK)/demo
DEMO_PULUMI := PULUMI_HOME=$(DEMO)/pulumi-home PULUMI_BACKEND_URL=file://$(DEMO)/pulumi-state \
	PULUMI_CONFIG_PASSPHRASE=demo PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
demo: build
	@mkdir -p $(DEMO)/pulumi-home $(DEMO)/pulumi-state $(DEMO)/terraform
	@kubeconfig=$$($(DEV) cluster-up | tail -n 1 | sed 's/^KUBECONFIG=//'); \
	pulumi=$$($(DEV) tools pulumi | tail -n 1 | sed 's/^pulumi=//'); \
	printf 'provider_installation {\n  dev_overrides {\n    "registry.terraform.io/k8sconnect/k8sconnect" = "%s"\n    "registry.opentofu.org/k8sconnect/k8sconnect" = "%s"\n  }\n  direct {}\n}\n' $(CURDIR)/bin $(CURDIR)/bin > $(DEMO)/terraformrc; \
	cp examples/terraform/quickstart/*.tf $(DEMO)/terraform/; \
	echo "== terraform apply (examples/terraform/quickstart)"; \
	TF_CLI_CONFIG_FILE=$(DEMO)/terraformrc CHECKPOINT_DISABLE=1 terraform -chdir=$(DEMO)/terraform apply \
		-auto-approve -input=false -compact-warnings -var kubeconfig_path=$$kubeconfig; \
	echo "== pulumi up (examples/pulumi-yaml)"; \
	export $(DEMO_PULUMI); \
	"$$pulumi" plugin install resource k8sconnect $(VERSION) --file $(CURDIR)/bin/pulumi-resource-k8sconnect --reinstall >/dev/null; \
	cd examples/pulumi-yaml && { "$$pulumi" stack select demo 2>/dev/null || "$$pulumi" stack init demo >/dev/null; } && \
	"$$pulumi" config set kubeconfigPath $$kubeconfig --config-file $(DEMO)/Pulumi.demo.yaml && \
	"$$pulumi" up --yes --skip-preview --config-file $(DEMO)/Pulumi.demo.yaml && cd $(CURDIR) && \
	echo && echo "== what k8sconnect made" && \
	echo "  Terraform: namespace k8sconnect-quickstart, ConfigMap greeting; state $(DEMO)/terraform/terraform.tfstate" && \
	echo "  Pulumi:    namespace k8sconnect-pulumi, ConfigMap greeting; stack demo in $(DEMO)/pulumi-state" && \
	echo "  Look at them:" && \
	echo "    export KUBECONFIG=$$kubeconfig" && \
	echo "    kubectl get configmap greeting -n k8sconnect-quickstart -o yaml" && \
	echo "    kubectl get configmap greeting -n k8sconnect-pulumi --show-managed-fields -o yaml" && \
	echo "  Remove them and stop the cluster: make demo-down"

## demo-down: destroy what `make demo` made and stop the embedded cluster
demo-down:
	@if [ -f $(DEMO)/terraform/terraform.tfstate ] && $(DEV) cluster-status >/dev/null 2>&1; then \
		kubeconfig=$$($(DEV) cluster-up | tail -n 1 | sed 's/^KUBECONFIG=//'); \
		TF_CLI_CONFIG_FILE=$(DEMO)/terraformrc CHECKPOINT_DISABLE=1 terraform -chdir=$(DEMO)/terraform destroy \
			-auto-approve -input=false -compact-warnings -var kubeconfig_path=$$kubeconfig; \
		pulumi=$$($(DEV) tools pulumi | tail -n 1 | sed 's/^pulumi=//'); export $(DEMO_PULUMI); \
		cd examples/pulumi-yaml && "$$pulumi" destroy --yes --stack demo --config-file $(DEMO)/Pulumi.demo.yaml; \
	fi
	@$(DEV) cluster-down
	@rm -rf $(DEMO)

## test: everything CI runs. -count=1: the Go test cache cannot see the cluster, so a
## cached pass would be a test that did not run
test: tools
	$(GO) vet ./...
	cd bridge && $(GO) vet ./...
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd bridge && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	K8SCONNECT_ENGINE=tofu $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run 'TestAcc' ./provider/... ./internal/testing/doctest/

## lint: golangci-lint (pinned in tools/golangci-lint, configured by .golangci.yml) and a
## go mod tidy check, in both modules
LINT := $(GO) tool -modfile=$(CURDIR)/tools/golangci-lint/go.mod golangci-lint run --config $(CURDIR)/.golangci.yml
lint:
	$(LINT) ./...
	cd bridge && $(LINT) ./...
	$(GO) mod tidy -diff
	cd bridge && $(GO) mod tidy -diff

## test-unit: the tests that need no cluster (-short), in both modules; under a minute with a warm build cache
test-unit:
	$(GO) test -short -count=1 ./...
	cd bridge && $(GO) test -short -count=1 ./...
