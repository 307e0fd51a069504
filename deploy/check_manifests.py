#!/usr/bin/python3
"""Checks deploy/kubernetes against the real binaries (deploy/check-manifests.sh
runs it after rendering every overlay with `kubectl kustomize`).

  check_manifests.py --server BIN --cli BIN --proto FILE --examples DIR \
      --dockerfile FILE OVERLAY=RENDERED.yaml...

For every rendered overlay: the Deployment, Services, HPA and PDB fit
together (selectors, names, ports); the container's flags are flags of
`chunkplan-server --helpfull`, and the ports of --listen and
--metrics_listen are the container ports, the probes' ports, the Services'
targets and the scrape annotation; the readiness probe asks the health
service about the service the proto declares; terminationGracePeriodSeconds
exceeds the preStop sleep plus --shutdown_delay plus --shutdown_grace; the pod runs as non-root on
a read-only root file system with requests and limits. The gpu overlay adds
a GPU limit, a node selector and a toleration.

Then it starts chunkplan-server with the Deployment's own arguments (the
addresses moved to 127.0.0.1, port 0) and asks it, over a dns:/// target
with the scheduler example's service config, for the health of every
service the probes name: the flags parse, and the config is one gRPC takes.
The sidecar example's flags and probe commands are checked the same way
against both binaries' --helpfull, and the Dockerfile's EXPOSE, USER,
ENTRYPOINT and CMD against the Deployment.
"""

import argparse
import json
import os
import re
import subprocess
import sys

import yaml

PATIENCE_S = 60
FLAG = re.compile(r"^\s+--([a-z_0-9]+) \(", re.M)
READY = re.compile(r"chunkplan-server listening on (\S+?)(?:\"|\s|$)")

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def helpfull_flags(binary):
    out = subprocess.run([binary, "--helpfull"], capture_output=True,
                         text=True, timeout=PATIENCE_S)
    text = out.stdout + out.stderr
    flags = set(FLAG.findall(text))
    defaults = dict(re.findall(r"--([a-z_0-9]+) \(.*?\);\s+default: ([^;]*);",
                               text, re.S))
    assert flags, f"no flags in {binary} --helpfull"
    return flags, {k: v.strip().strip('"') for k, v in defaults.items()}


def proto_service(proto_path):
    with open(proto_path) as f:
        text = f.read()
    package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
    service = re.search(r"^service (\w+)", text, re.M).group(1)
    return f"{package}.{service}"


def parse_args_list(args):
    """{flag: value} of ["--name=value", ...]."""
    parsed = {}
    for arg in args:
        check(arg.startswith("--") and "=" in arg,
              f"argument {arg!r} is not --name=value")
        name, _, value = arg[2:].partition("=")
        parsed[name] = value
    return parsed


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def seconds(duration):
    """Seconds of an absl duration such as '20s', '1m30s', '500ms'."""
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)(ms|us|ns|h|m|s)", duration):
        total += float(number) * {"h": 3600, "m": 60, "s": 1, "ms": 1e-3,
                                  "us": 1e-6, "ns": 1e-9}[unit]
    return total


def by_kind(documents):
    kinds = {}
    for doc in documents:
        kinds.setdefault(doc["kind"], []).append(doc)
    return kinds


def check_overlay(name, documents, server_flags, server_defaults,
                  service_name):
    kinds = by_kind(documents)
    missing = [kind for kind in ("Deployment", "Service",
                                 "HorizontalPodAutoscaler",
                                 "PodDisruptionBudget") if kind not in kinds]
    if not check(not missing, f"{name}: no {', '.join(missing)}"):
        return None
    (deployment,) = kinds["Deployment"]
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    check(spec.get("replicas") == 2, f"{name}: replicas is not 2")
    check(spec["selector"]["matchLabels"].items() <= labels.items(),
          f"{name}: the Deployment's selector misses its pods")
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True,
          f"{name}: runAsNonRoot is not true")
    (container,) = [c for c in pod["containers"] if c["name"] == "chunkplan"]
    security = container.get("securityContext", {})
    check(security.get("readOnlyRootFilesystem") is True,
          f"{name}: the root file system is not read-only")
    check(security.get("allowPrivilegeEscalation") is False,
          f"{name}: privilege escalation is allowed")
    resources = container.get("resources", {})
    for part in ("requests", "limits"):
        for what in ("cpu", "memory"):
            check(what in resources.get(part, {}),
                  f"{name}: no {what} in resources.{part}")

    args = parse_args_list(container.get("args", []))
    for flag in args:
        check(flag in server_flags,
              f"{name}: --{flag} is not a chunkplan-server flag")
    listen = args.get("listen", server_defaults.get("listen", ""))
    check(listen.startswith("0.0.0.0:") or listen.startswith("[::]:"),
          f"{name}: --listen={listen} is not every interface")
    grpc_port = port_of(listen)
    metrics_port = port_of(args["metrics_listen"]) \
        if check("metrics_listen" in args, f"{name}: no --metrics_listen") \
        else None
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(ports.get("grpc") == grpc_port,
          f"{name}: containerPort grpc is not --listen's {grpc_port}")
    check(ports.get("metrics") == metrics_port,
          f"{name}: containerPort metrics is not --metrics_listen's port")
    annotations = spec["template"]["metadata"].get("annotations", {})
    check(annotations.get("prometheus.io/port") == str(metrics_port),
          f"{name}: prometheus.io/port is not the metrics port")
    check(annotations.get("prometheus.io/path") == "/metrics",
          f"{name}: prometheus.io/path is not /metrics")

    probe_services = set()
    for probe_name in ("startupProbe", "livenessProbe", "readinessProbe"):
        probe = container.get(probe_name)
        if not check(probe is not None and "grpc" in probe,
                     f"{name}: {probe_name} is not a native gRPC probe"):
            continue
        check(probe["grpc"]["port"] == grpc_port,
              f"{name}: {probe_name} port is not {grpc_port}")
        probe_services.add(probe["grpc"].get("service", ""))
    check(probe_services <= {"", service_name},
          f"{name}: probes ask about {probe_services}, the server knows "
          f"'' and {service_name}")
    check(container["readinessProbe"]["grpc"].get("service") == service_name,
          f"{name}: readiness does not ask about {service_name}")

    grace = seconds(args.get("shutdown_grace",
                             server_defaults.get("shutdown_grace", "")))
    delay = seconds(args.get("shutdown_delay",
                             server_defaults.get("shutdown_delay", "0s")))
    pre_stop = container.get("lifecycle", {}).get("preStop", {})
    sleep = 0.0
    command = pre_stop.get("exec", {}).get("command", [])
    if command and command[0].endswith("sleep"):
        sleep = float(command[1])
    check(pod.get("terminationGracePeriodSeconds", 30) >
          sleep + delay + grace,
          f"{name}: terminationGracePeriodSeconds is not above preStop "
          f"{sleep}s + --shutdown_delay {delay}s + --shutdown_grace "
          f"{grace}s")

    services = {s["metadata"]["name"]: s for s in kinds["Service"]}
    headless = [s for s in services.values()
                if s["spec"].get("clusterIP") == "None"]
    check(len(headless) == 1 and len(services) == 2,
          f"{name}: want one Service and one headless Service")
    for service in services.values():
        check(service["spec"]["selector"].items() <= labels.items(),
              f"{name}: Service {service['metadata']['name']} selects no pod")
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            target = ports.get(target, target)
            check(target in (grpc_port, metrics_port),
                  f"{name}: Service port {port['name']} targets {target}")
            if port["name"] == "grpc":
                check(target == grpc_port,
                      f"{name}: Service grpc port misses --listen")
    (hpa,) = kinds["HorizontalPodAutoscaler"]
    check(hpa["spec"]["scaleTargetRef"]["name"] ==
          deployment["metadata"]["name"],
          f"{name}: the HPA scales another Deployment")
    check(hpa["spec"]["minReplicas"] >= 2, f"{name}: HPA minReplicas < 2")
    (pdb,) = kinds["PodDisruptionBudget"]
    check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(),
          f"{name}: the PDB selects no pod")

    if name == "gpu":
        check("nvidia.com/gpu" in resources.get("limits", {}),
              "gpu: no nvidia.com/gpu limit")
        check(bool(pod.get("nodeSelector")), "gpu: no nodeSelector")
        check(any(t.get("key") == "nvidia.com/gpu"
                  for t in pod.get("tolerations", [])),
              "gpu: no nvidia.com/gpu toleration")
    else:
        check("nvidia.com/gpu" not in resources.get("limits", {}),
              f"{name}: asks for a GPU")
    return {"args": args, "probe_services": probe_services,
            "headless": headless[0]["metadata"]["name"] if headless else "",
            "namespace": deployment["metadata"].get("namespace", "default"),
            "grpc_port": grpc_port, "metrics_port": metrics_port,
            "run_as_user": pod.get("securityContext", {}).get("runAsUser")}


def check_sidecar(path, server_flags, cli_flags):
    with open(path) as f:
        pod = yaml.safe_load(f)
    sidecars = [c for c in pod["spec"].get("initContainers", [])
                if c["name"] == "chunkplan"]
    if not check(len(sidecars) == 1 and
                 sidecars[0].get("restartPolicy") == "Always",
                 "sidecar: no native sidecar named chunkplan"):
        return
    sidecar = sidecars[0]
    args = parse_args_list(sidecar["args"])
    for flag in args:
        check(flag in server_flags,
              f"sidecar: --{flag} is not a chunkplan-server flag")
    check(args.get("listen", "").startswith("127.0.0.1:"),
          "sidecar: chunkplan does not listen on localhost")
    for probe_name in ("startupProbe", "livenessProbe"):
        command = sidecar.get(probe_name, {}).get("exec", {}).get("command")
        if not check(command and command[0].endswith("/chunkplan") and
                     command[1] == "health",
                     f"sidecar: {probe_name} is not `chunkplan health`"):
            continue
        probe_args = parse_args_list(command[2:])
        for flag in probe_args:
            check(flag in cli_flags,
                  f"sidecar: --{flag} is not a chunkplan CLI flag")
        check(probe_args.get("server") == args["listen"],
              f"sidecar: {probe_name} asks {probe_args.get('server')}")
    targets = [e["value"] for c in pod["spec"]["containers"]
               for e in c.get("env", []) if e["name"] == "CHUNKPLAN_TARGET"]
    check(targets == [args["listen"]],
          "sidecar: the trainer's CHUNKPLAN_TARGET is not the sidecar")


def scheduler_config(path, overlay):
    with open(path) as f:
        config_map = yaml.safe_load(f)
    data = config_map["data"]
    config = json.loads(data["service_config.json"])
    check(config["loadBalancingConfig"] == [{"round_robin": {}}],
          "scheduler: not round_robin")
    retry = config["methodConfig"][0].get("retryPolicy", {})
    check("UNAVAILABLE" in retry.get("retryableStatusCodes", []),
          "scheduler: does not retry UNAVAILABLE")
    want = (f"dns:///{overlay['headless']}.{overlay['namespace']}"
            f".svc.cluster.local:{overlay['grpc_port']}")
    check(data["target"] == want,
          f"scheduler: target {data['target']} is not {want}")
    return data["service_config.json"]


def ask_health(server, overlay, service_config):
    import grpc
    args = dict(overlay["args"])
    args["listen"] = "127.0.0.1:0"
    args["metrics_listen"] = "127.0.0.1:0"
    process = subprocess.Popen(
        [server, *(f"--{k}={v}" for k, v in args.items())],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        address = None
        log = []
        for line in process.stdout:
            log.append(line)
            match = READY.search(line)
            if match:
                address = match.group(1)
                break
        if not check(address, "the server did not start with the manifest's "
                     "flags:\n" + "".join(log)):
            return
        port = port_of(address)
        channel = grpc.insecure_channel(
            f"dns:///localhost:{port}",
            options=[("grpc.service_config", service_config),
                     ("grpc.enable_retries", 1)])
        # grpc.health.v1.HealthCheckRequest{service}: field 1, a string.
        check_call = channel.unary_unary("/grpc.health.v1.Health/Check")
        for service in sorted(overlay["probe_services"]):
            encoded = service.encode()
            request = (b"\x0a" + bytes([len(encoded)]) + encoded
                       if encoded else b"")
            reply = check_call(request, timeout=PATIENCE_S)
            # HealthCheckResponse{status: SERVING (1)}.
            check(reply == b"\x08\x01",
                  f"health of {service!r} is not SERVING: {reply!r}")
        channel.close()
    finally:
        process.terminate()
        process.wait(timeout=PATIENCE_S)


def check_dockerfile(path, overlay, server_flags):
    """The image's ports, user and entrypoint flags are the manifests'."""
    with open(path) as f:
        text = f.read()
    exposed = {int(p) for line in re.findall(r"^EXPOSE (.+)$", text, re.M)
               for p in line.split()}
    want = {overlay["grpc_port"], overlay["metrics_port"]}
    check(exposed == want, f"Dockerfile: EXPOSE {exposed}, manifests {want}")
    user = re.search(r"^USER (\d+)", text, re.M)
    check(user and int(user.group(1)) == overlay["run_as_user"],
          "Dockerfile: USER is not the Deployment's runAsUser")
    for key in ("ENTRYPOINT", "CMD"):
        line = re.search(rf"^{key} (\[.*\])$", text, re.M)
        if not check(line, f"Dockerfile: no {key} in exec form"):
            continue
        words = json.loads(line.group(1))
        if key == "ENTRYPOINT":
            check(words[0] == "/usr/local/bin/chunkplan-server",
                  "Dockerfile: ENTRYPOINT is not chunkplan-server")
            words = words[1:]
        args = parse_args_list(words)
        for flag in args:
            check(flag in server_flags,
                  f"Dockerfile: --{flag} is not a chunkplan-server flag")
        for flag, port in (("listen", overlay["grpc_port"]),
                           ("metrics_listen", overlay["metrics_port"])):
            if flag in args:
                check(port_of(args[flag]) == port,
                      f"Dockerfile: --{flag} is not on port {port}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--proto", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--dockerfile", required=True)
    parser.add_argument("rendered", nargs="+",
                        help="OVERLAY=FILE of `kubectl kustomize` output")
    options = parser.parse_args()

    server_flags, server_defaults = helpfull_flags(options.server)
    cli_flags, _ = helpfull_flags(options.cli)
    service_name = proto_service(options.proto)
    overlays = {}
    for item in options.rendered:
        name, _, path = item.partition("=")
        with open(path) as f:
            documents = [d for d in yaml.safe_load_all(f) if d]
        overlays[name] = check_overlay(name, documents, server_flags,
                                       server_defaults, service_name)
    check_sidecar(os.path.join(options.examples, "trainer-sidecar.yaml"),
                  server_flags, cli_flags)
    first = next(iter(overlays.values()))
    if first is not None:
        config = scheduler_config(
            os.path.join(options.examples, "scheduler-client.yaml"), first)
        ask_health(options.server, first, config)
        check_dockerfile(options.dockerfile, first, server_flags)

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"manifests agree with the binaries: overlays "
          f"{', '.join(overlays)}, sidecar and scheduler examples, "
          f"Dockerfile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
