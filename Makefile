# k8sconnect developer entry points. Every target builds what it needs; binaries
# that take minutes (kube-apiserver, etcd, kwok, pulumi, tofu) are built once and
# cached under $(K8SCONNECT_TOOLS_DIR) (default: the user cache dir).

SHELL   := bash
.SHELLFLAGS := -eu -o pipefail -c
GO      ?= go
VERSION ?= 0.1.0-dev
DEV     := $(GO) run ./provider/cmd/k8sconnect-dev
WORK    := $(CURDIR)/.work
TEST_TIMEOUT ?= 45m

.PHONY: all tools build cluster-up cluster-down generate demo test test-unit test-terraform test-tofu test-pulumi bench

all: build

## tools: build the pinned toolchain (kube-apiserver, etcd, kwok, pulumi, tofu) once
tools:
	$(DEV) tools

## build: terraform-provider-k8sconnect and pulumi-resource-k8sconnect into bin/
build:
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/ \
		./provider/cmd/terraform-provider-k8sconnect \
		./bridge/cmd/pulumi-resource-k8sconnect

## cluster-up: start the embedded cluster if it is not running; last line is KUBECONFIG=<path>
cluster-up:
	@$(DEV) cluster-up

## cluster-down: stop the embedded cluster
cluster-down:
	$(DEV) cluster-down

## bench: time N (default 200) ConfigMaps through terraform against kubectl; peak RSS; requests per object
N ?= 200
bench: tools
	$(GO) run ./provider/cmd/k8sconnect-bench -n $(N)

## test: everything CI runs
test: tools
	$(GO) vet ./...
	$(GO) test -timeout $(TEST_TIMEOUT) ./...
	K8SCONNECT_ENGINE=tofu $(GO) test -timeout $(TEST_TIMEOUT) -run 'TestAcc' ./provider/...
