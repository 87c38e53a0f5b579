"""Runs a program of examples/pulumi-python (__main__.py, or one of its
scenarios/*.py) as an Automation API inline program, one operation per run.
See ../README.md for the interface."""

import json
import os
import re
import runpy
import sys

from pulumi import automation as auto

RESULT_PREFIX = "k8sconnect-result: "


def main() -> None:
    args = sys.argv[1:]
    operation = args[0] if args else ""
    if operation not in ("up", "preview", "refresh", "destroy") or args[1:] not in ([], ["--refresh"]):
        sys.exit(f"usage: run.py up|preview|refresh|destroy [--refresh] (got {' '.join(args)!r})")
    refresh = args[1:] == ["--refresh"]
    example_dir = os.path.abspath(
        os.environ.get("K8SCONNECT_PULUMI_EXAMPLE")
        or os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "pulumi-python")
    )
    stack_name = os.environ.get("K8SCONNECT_PULUMI_STACK") or "dev"
    config = json.loads(os.environ.get("K8SCONNECT_PULUMI_CONFIG") or "{}") or {}
    work_dir = os.environ.get("K8SCONNECT_PULUMI_WORKDIR") or None
    project_name = project_name_of(example_dir)
    scenario = os.environ.get("K8SCONNECT_PULUMI_PROGRAM")
    source = os.path.join(example_dir, "scenarios", scenario + ".py") if scenario else os.path.join(example_dir, "__main__.py")

    def program() -> None:
        # The program exactly as `pulumi up` would run it.
        runpy.run_path(source, run_name="__main__")

    stack = auto.create_or_select_stack(
        stack_name=stack_name,
        project_name=project_name,
        program=program,
        opts=auto.LocalWorkspaceOptions(
            work_dir=work_dir,
            project_settings=auto.ProjectSettings(name=project_name, runtime="python"),
        ),
    )
    values = {}
    for key, v in config.items():
        if isinstance(v, dict):
            values[key] = auto.ConfigValue(value=str(v["value"]), secret=bool(v.get("secret")))
        else:
            values[key] = auto.ConfigValue(value=str(v))
    stack.set_all_config(values)

    def on_output(line: str) -> None:
        print(line, flush=True)

    result = {"operation": operation, "changes": {}, "outputs": {}}
    if operation == "up":
        r = stack.up(on_output=on_output, refresh=refresh)
        result["changes"] = r.summary.resource_changes or {}
        result["outputs"] = {k: o.value for k, o in r.outputs.items()}
    elif operation == "preview":
        r = stack.preview(on_output=on_output, refresh=refresh)
        result["changes"] = {str(k): v for k, v in (r.change_summary or {}).items()}
    elif operation == "refresh":
        r = stack.refresh(on_output=on_output)
        result["changes"] = r.summary.resource_changes or {}
    else:
        r = stack.destroy(on_output=on_output)
        result["changes"] = r.summary.resource_changes or {}
    print("\n" + RESULT_PREFIX + json.dumps(result), flush=True)


def project_name_of(directory: str) -> str:
    """Reads `name:` from the example's Pulumi.yaml, so config keys land in
    the namespace the program reads."""
    with open(os.path.join(directory, "Pulumi.yaml"), encoding="utf-8") as f:
        m = re.search(r"^name:\s*(\S+)\s*$", f.read(), re.MULTILINE)
    if not m:
        sys.exit(f"no name in {directory}/Pulumi.yaml")
    return m.group(1)


if __name__ == "__main__":
    main()
