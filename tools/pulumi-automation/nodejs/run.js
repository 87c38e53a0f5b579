// Runs a program of examples/pulumi-typescript (index.ts, or one of its
// scenarios/*.ts) as an Automation API inline program, one operation per run.
// See ../README.md for the interface.
"use strict";

const fs = require("fs");
const path = require("path");

const resultPrefix = "k8sconnect-result: ";

async function main() {
    const [operation, flag, ...rest] = process.argv.slice(2);
    if (!["up", "preview", "refresh", "destroy"].includes(operation) || (flag && flag !== "--refresh") || rest.length) {
        throw new Error(`usage: run.js up|preview|refresh|destroy [--refresh] (got ${process.argv.slice(2).join(" ")})`);
    }
    const refresh = flag === "--refresh";
    const exampleDir = path.resolve(
        process.env.K8SCONNECT_PULUMI_EXAMPLE || path.join(__dirname, "..", "..", "..", "examples", "pulumi-typescript"),
    );
    const stackName = process.env.K8SCONNECT_PULUMI_STACK || "dev";
    const config = JSON.parse(process.env.K8SCONNECT_PULUMI_CONFIG || "{}") || {};
    const workDir = process.env.K8SCONNECT_PULUMI_WORKDIR || undefined;

    // The example's own @pulumi/pulumi: the program and the SDK must share one
    // copy of the runtime.
    const { LocalWorkspace } = require(require.resolve("@pulumi/pulumi/automation", { paths: [exampleDir] }));
    const scenario = process.env.K8SCONNECT_PULUMI_PROGRAM;
    const program = require(path.join(exampleDir, "bin", ...(scenario ? ["scenarios", `${scenario}.js`] : ["index.js"])));
    const projectName = projectNameOf(exampleDir);

    const stack = await LocalWorkspace.createOrSelectStack(
        { stackName, projectName, program },
        { workDir, projectSettings: { name: projectName, runtime: "nodejs" } },
    );
    const values = {};
    for (const [key, v] of Object.entries(config)) {
        values[key] = typeof v === "object" && v !== null ? { value: String(v.value), secret: !!v.secret } : { value: String(v) };
    }
    await stack.setAllConfig(values);

    const onOutput = (s) => process.stdout.write(s);
    const result = { operation, changes: {}, outputs: {} };
    switch (operation) {
        case "up": {
            const r = await stack.up({ onOutput, refresh });
            result.changes = r.summary.resourceChanges || {};
            for (const [k, o] of Object.entries(r.outputs)) result.outputs[k] = o.value;
            break;
        }
        case "preview": {
            const r = await stack.preview({ onOutput, refresh });
            result.changes = r.changeSummary || {};
            break;
        }
        case "refresh": {
            const r = await stack.refresh({ onOutput });
            result.changes = r.summary.resourceChanges || {};
            break;
        }
        case "destroy": {
            const r = await stack.destroy({ onOutput });
            result.changes = r.summary.resourceChanges || {};
            break;
        }
    }
    process.stdout.write("\n" + resultPrefix + JSON.stringify(result) + "\n");
}

// projectNameOf reads `name:` from the example's Pulumi.yaml, so config keys
// land in the namespace the program reads.
function projectNameOf(dir) {
    const m = /^name:\s*(\S+)\s*$/m.exec(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8"));
    if (!m) throw new Error(`no name in ${dir}/Pulumi.yaml`);
    return m[1];
}

main().catch((err) => {
    console.error(err && err.stack ? err.stack : err);
    process.exit(1);
});
