#!/usr/bin/python3
"""Checks deploy/kubernetes against the real binaries (deploy/check-manifests.sh
runs it after rendering every overlay with `kubectl kustomize`).

  check_manifests.py --server BIN --cli BIN --proto FILE --examples DIR \
      --dockerfile FILE --haproxy BIN --haproxy-config FILE \
      --haproxy-dockerfile FILE OVERLAY=RENDERED.yaml...

For every rendered overlay: the Deployment, Services, HPA, PDB and the
ConfigMap of HAProxy's configuration fit together (selectors, names,
ports); the server container's flags are flags of `chunkplan-server
--helpfull`, it listens on loopback only, its probes run `chunkplan health`
(flags of the CLI's --helpfull) against --listen, the readiness probe asks
about the service the proto declares, and --metrics_listen's port is the
container port and the scrape annotation's; the front door (the container
`haproxy`) runs /usr/sbin/haproxy -db -f on the ConfigMap's haproxy.cfg
(byte for byte deploy/haproxy/haproxy.cfg, and accepted by `haproxy -c`
with the container's environment), forwards to --listen, listens where its
`grpc` (and `grpc-tls`) container ports say, which the Services target,
finds its TLS files in a Secret, and is probed through itself;
terminationGracePeriodSeconds exceeds the server's preStop sleep plus
--shutdown_delay plus --shutdown_grace and HAProxy's preStop sleep plus
its hard-stop-after; the pod runs as non-root on read-only root file
systems with requests and limits. The gpu overlay adds a GPU limit, a node
selector and a toleration; some overlay serves TLS.

Then it starts chunkplan-server with the Deployment's own arguments (the
addresses moved to 127.0.0.1, port 0) and asks it, over a dns:/// target
with the scheduler example's service config, for the health of every
service the probes name: the flags parse, and the config is one gRPC takes.
The sidecar example's flags and probe commands are checked the same way
against both binaries' --helpfull, and the Dockerfile's EXPOSE, USER,
ENTRYPOINT and CMD against the Deployment (and deploy/haproxy/Dockerfile's
package, USER and STOPSIGNAL).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

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


def check_container_basics(name, container):
    """Read-only root, no privilege escalation, requests and limits."""
    what_ = f"{name}: {container['name']}"
    security = container.get("securityContext", {})
    check(security.get("readOnlyRootFilesystem") is True,
          f"{what_}: the root file system is not read-only")
    check(security.get("allowPrivilegeEscalation") is False,
          f"{what_}: privilege escalation is allowed")
    resources = container.get("resources", {})
    for part in ("requests", "limits"):
        for what in ("cpu", "memory"):
            check(what in resources.get(part, {}),
                  f"{what_}: no {what} in resources.{part}")
    return resources


def health_probe_args(name, container, probe_name, cli_flags, listen):
    """The flags of a probe that runs `chunkplan health` against the
    server's own port; None (and a failure) otherwise."""
    command = container.get(probe_name, {}).get("exec", {}).get("command")
    if not check(command and command[0].endswith("/chunkplan") and
                 command[1] == "health",
                 f"{name}: {probe_name} is not `chunkplan health`"):
        return None
    probe_args = parse_args_list(command[2:])
    for flag in probe_args:
        check(flag in cli_flags,
              f"{name}: --{flag} is not a chunkplan CLI flag")
    check(probe_args.get("server") == listen,
          f"{name}: {probe_name} asks {probe_args.get('server')}, the server "
          f"listens on {listen}")
    return probe_args


def pre_stop_sleep(container):
    command = container.get("lifecycle", {}).get("preStop", {}).get(
        "exec", {}).get("command", [])
    return float(command[1]) if command and command[0].endswith("sleep") \
        else 0.0


def check_overlay(name, documents, server_flags, server_defaults,
                  cli_flags, service_name):
    kinds = by_kind(documents)
    missing = [kind for kind in ("Deployment", "Service", "ConfigMap",
                                 "HorizontalPodAutoscaler",
                                 "PodDisruptionBudget") if kind not in kinds]
    if not check(not missing, f"{name}: no {', '.join(missing)}"):
        return None
    (deployment,) = kinds["Deployment"]
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    check("replicas" not in spec,
          f"{name}: the Deployment sets replicas, which the HPA owns (each "
          f"apply would reset the HPA's count)")
    check(spec["selector"]["matchLabels"].items() <= labels.items(),
          f"{name}: the Deployment's selector misses its pods")
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True,
          f"{name}: runAsNonRoot is not true")
    (container,) = [c for c in pod["containers"] if c["name"] == "chunkplan"]
    resources = check_container_basics(name, container)

    args = parse_args_list(container.get("args", []))
    for flag in args:
        check(flag in server_flags,
              f"{name}: --{flag} is not a chunkplan-server flag")
    # Workers and sweep helpers match the CPU limit (whole cores).
    cpu_limit = str(resources.get("limits", {}).get("cpu", ""))
    for flag in ("threads", "sweep_threads"):
        check(args.get(flag) == cpu_limit,
              f"{name}: --{flag}={args.get(flag)} is not the CPU limit "
              f"({cpu_limit!r} cores)")
    listen = args.get("listen", server_defaults.get("listen", ""))
    check(listen.startswith("127.0.0.1:"),
          f"{name}: --listen={listen} is not loopback only (the front door "
          f"is the pod's way in)")
    server_port = port_of(listen)
    metrics_port = port_of(args["metrics_listen"]) \
        if check("metrics_listen" in args, f"{name}: no --metrics_listen") \
        else None
    server_ports = {p["name"]: p["containerPort"]
                    for p in container.get("ports", [])}
    check("grpc" not in server_ports,
          f"{name}: the server container declares a grpc port (clients "
          f"reach HAProxy's)")
    check(server_ports.get("metrics") == metrics_port,
          f"{name}: containerPort metrics is not --metrics_listen's port")
    annotations = spec["template"]["metadata"].get("annotations", {})
    check(annotations.get("prometheus.io/port") == str(metrics_port),
          f"{name}: prometheus.io/port is not the metrics port")
    check(annotations.get("prometheus.io/path") == "/metrics",
          f"{name}: prometheus.io/path is not /metrics")

    probe_services = set()
    for probe_name in ("startupProbe", "livenessProbe", "readinessProbe"):
        probe_args = health_probe_args(name, container, probe_name,
                                       cli_flags, listen)
        if probe_args is not None:
            probe_services.add(probe_args.get("service", ""))
            if probe_name == "readinessProbe":
                check(probe_args.get("service") == service_name,
                      f"{name}: readiness does not ask about {service_name}")

    grace = seconds(args.get("shutdown_grace",
                             server_defaults.get("shutdown_grace", "")))
    delay = seconds(args.get("shutdown_delay",
                             server_defaults.get("shutdown_delay", "0s")))
    sleep = pre_stop_sleep(container)
    check(pod.get("terminationGracePeriodSeconds", 30) >
          sleep + delay + grace,
          f"{name}: terminationGracePeriodSeconds is not above preStop "
          f"{sleep}s + --shutdown_delay {delay}s + --shutdown_grace "
          f"{grace}s")

    door = check_front_door(name, pod, kinds["ConfigMap"], listen,
                            service_name)
    if door is None:
        return None
    probe_services |= door["probe_services"]
    check(probe_services <= {"", service_name},
          f"{name}: probes ask about {probe_services}, the server knows "
          f"'' and {service_name}")
    ports = dict(server_ports, **door["ports"])
    grpc_port = door["ports"].get("grpc")

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
            check(target in door["ports"].values() or target == metrics_port,
                  f"{name}: Service port {port['name']} targets {target}, "
                  f"neither HAProxy's ports nor the metrics port")
            if port["name"] == "grpc":
                check(target == grpc_port,
                      f"{name}: Service grpc port misses HAProxy's h2c port")
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
            "grpc_port": grpc_port, "server_port": server_port,
            "metrics_port": metrics_port,
            "run_as_user": pod.get("securityContext", {}).get("runAsUser"),
            "haproxy": door}


def expand_env(name, env):
    """{variable: value} of a container's env list, with $(VAR) references
    expanded as the kubelet does (only to variables defined earlier; a
    reference to another is a failure); fieldRef values are left as the
    field's path."""
    values = {}
    for item in env:
        value = item.get("value")
        if value is None:
            value = "<" + item.get("valueFrom", {}).get(
                "fieldRef", {}).get("fieldPath", "?") + ">"

        def substitute(match):
            check(match.group(1) in values,
                  f"{name}: env {item['name']} refers to $({match.group(1)}),"
                  f" not defined before it")
            return values.get(match.group(1), match.group(0))
        values[item["name"]] = re.sub(r"\$\(([A-Za-z_0-9]+)\)", substitute,
                                      value)
    return values


def mounted_file(pod, container, path):
    """(volume, key) of the ConfigMap or Secret key that `path` is in
    `container`, or None."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if not path.startswith(directory):
            continue
        volume = volumes.get(mount["name"], {})
        source = volume.get("configMap") or volume.get("secret") or {}
        relative = path[len(directory):]
        items = {i["path"]: i["key"] for i in source.get("items", [])}
        return volume, items.get(relative, relative)
    return None


def check_front_door(name, pod, config_maps, server_listen, service_name):
    """The container `haproxy`: Debian's HAProxy with the ConfigMap's
    haproxy.cfg, listening for h2c where the `grpc` container port says,
    forwarding to the server's --listen, its TLS files mounted where set,
    probes through it, requests and limits. Returns what main() needs."""
    containers = [c for c in pod["containers"] if c["name"] == "haproxy"]
    if not check(len(containers) == 1, f"{name}: no container haproxy"):
        return None
    (door,) = containers
    check_container_basics(name, door)
    command = door.get("command", []) + door.get("args", [])
    check(command[:2] == ["/usr/sbin/haproxy", "-db"] and "-f" in command,
          f"{name}: haproxy's command is not /usr/sbin/haproxy -db -f FILE")
    config_path = command[command.index("-f") + 1] if "-f" in command else ""
    found = mounted_file(pod, door, config_path)
    config_text = None
    if check(found and "configMap" in found[0],
             f"{name}: haproxy's {config_path} is not from a ConfigMap"):
        volume, key = found
        maps = {m["metadata"]["name"]: m for m in config_maps}
        config_map = maps.get(volume["configMap"]["name"], {})
        config_text = config_map.get("data", {}).get(key)
        check(config_text is not None,
              f"{name}: ConfigMap {volume['configMap']['name']} has no {key}")
    env = expand_env(name, door.get("env", []))
    ports = {p["name"]: p["containerPort"] for p in door.get("ports", [])}
    check(env.get("CHUNKPLAN_UPSTREAM") == server_listen,
          f"{name}: CHUNKPLAN_UPSTREAM={env.get('CHUNKPLAN_UPSTREAM')} is "
          f"not the server's --listen {server_listen}")
    bind = env.get("CHUNKPLAN_H2C_BIND", "")
    check(":" in bind and "grpc" in ports and port_of(bind) == ports["grpc"],
          f"{name}: CHUNKPLAN_H2C_BIND={bind} is not on containerPort grpc")
    check(not bind.startswith(("0.0.0.0:", ":", "[::]:")),
          f"{name}: CHUNKPLAN_H2C_BIND={bind} takes every address, the "
          f"server's loopback port among them")
    tls_files = {}
    if "CHUNKPLAN_TLS_CERT" in env:
        tls_bind = env.get("CHUNKPLAN_TLS_BIND", "")
        check(":" in tls_bind and "grpc-tls" in ports and
              port_of(tls_bind) == ports["grpc-tls"],
              f"{name}: CHUNKPLAN_TLS_BIND={tls_bind} is not on containerPort "
              f"grpc-tls")
        cert = env["CHUNKPLAN_TLS_CERT"]
        for variable, path in (("CHUNKPLAN_TLS_CERT", cert),
                               ("CHUNKPLAN_TLS_CERT key", cert + ".key"),
                               ("CHUNKPLAN_TLS_CLIENT_CA",
                                env.get("CHUNKPLAN_TLS_CLIENT_CA"))):
            if path is None:
                continue
            found = mounted_file(pod, door, path)
            check(found and "secret" in found[0],
                  f"{name}: {variable} {path} is not from a Secret")
            tls_files[variable] = path
    probe = door.get("readinessProbe", {}).get("grpc", {})
    check(probe.get("port") == ports.get("grpc") and
          probe.get("service") == service_name,
          f"{name}: haproxy's readiness is not a gRPC probe of "
          f"{service_name} through its grpc port")
    check("livenessProbe" in door, f"{name}: haproxy has no liveness probe")
    if config_text is not None:
        stop = re.search(r"^\s*hard-stop-after (\d+)s", config_text, re.M)
        check(stop is not None, f"{name}: haproxy.cfg has no hard-stop-after")
        if stop:
            limit = pre_stop_sleep(door) + int(stop.group(1))
            check(pod.get("terminationGracePeriodSeconds", 30) > limit,
                  f"{name}: terminationGracePeriodSeconds is not above "
                  f"haproxy's preStop sleep + hard-stop-after ({limit} s)")
    return {"ports": ports, "env": env, "config": config_text,
            "tls_files": tls_files, "probe_services": {probe.get("service",
                                                                "")}}


def check_haproxy_config(name, haproxy, door, source_config):
    """`haproxy -c` on the rendered haproxy.cfg with the container's
    environment (the pod's address as 127.0.0.1, TLS files made here with
    openssl); and the rendering is deploy/haproxy/haproxy.cfg itself."""
    if door["config"] is None:
        return
    with open(source_config) as f:
        check(door["config"] == f.read(),
              f"{name}: the ConfigMap's haproxy.cfg is not "
              f"deploy/haproxy/haproxy.cfg")
    with tempfile.TemporaryDirectory(prefix="chunkplan-haproxy-") as tmp:
        config = os.path.join(tmp, "haproxy.cfg")
        with open(config, "w") as f:
            f.write(door["config"])
        env = {k: v.replace("<status.podIP>", "127.0.0.1")
               for k, v in door["env"].items()}
        if door["tls_files"]:
            cert, key = (os.path.join(tmp, n) for n in ("cert.pem",
                                                        "cert.pem.key"))
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                 "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                 "-out", cert, "-days", "1", "-subj", "/CN=check"],
                check=True, capture_output=True, timeout=PATIENCE_S)
            env["CHUNKPLAN_TLS_CERT"] = cert
            if "CHUNKPLAN_TLS_CLIENT_CA" in env:
                env["CHUNKPLAN_TLS_CLIENT_CA"] = cert
        result = subprocess.run(
            [haproxy, "-c", "-f", config], env=dict(os.environ, **env),
            capture_output=True, text=True, timeout=PATIENCE_S)
        check(result.returncode == 0,
              f"{name}: haproxy -c refuses the rendered haproxy.cfg with the "
              f"container's environment:\n{result.stdout}{result.stderr}")


def check_haproxy_dockerfile(path, overlay):
    """deploy/haproxy/Dockerfile: Debian's package, the Deployment's user,
    the soft stop signal."""
    with open(path) as f:
        text = f.read()
    check(re.search(r"apt-get install .*haproxy", text, re.S) is not None,
          "haproxy Dockerfile: does not install Debian's haproxy")
    user = re.search(r"^USER (\d+)", text, re.M)
    check(user and int(user.group(1)) == overlay["run_as_user"],
          "haproxy Dockerfile: USER is not the Deployment's runAsUser")
    check(re.search(r"^STOPSIGNAL SIGUSR1$", text, re.M) is not None,
          "haproxy Dockerfile: STOPSIGNAL is not SIGUSR1 (a soft stop)")


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
    want = {overlay["server_port"], overlay["metrics_port"]}
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
        for flag, port in (("listen", overlay["server_port"]),
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
    parser.add_argument("--haproxy", required=True,
                        help="the haproxy binary, for `haproxy -c`")
    parser.add_argument("--haproxy-config", required=True,
                        help="deploy/haproxy/haproxy.cfg")
    parser.add_argument("--haproxy-dockerfile", required=True)
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
                                       server_defaults, cli_flags,
                                       service_name)
        if overlays[name] is not None:
            check_haproxy_config(name, options.haproxy,
                                 overlays[name]["haproxy"],
                                 options.haproxy_config)
    check(any(o and o["haproxy"]["tls_files"] for o in overlays.values()),
          "no overlay serves TLS at the front door")
    check_sidecar(os.path.join(options.examples, "trainer-sidecar.yaml"),
                  server_flags, cli_flags)
    first = next(iter(overlays.values()))
    if first is not None:
        config = scheduler_config(
            os.path.join(options.examples, "scheduler-client.yaml"), first)
        ask_health(options.server, first, config)
        check_dockerfile(options.dockerfile, first, server_flags)
        check_haproxy_dockerfile(options.haproxy_dockerfile, first)

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"manifests agree with the binaries: overlays "
          f"{', '.join(overlays)} (HAProxy's configuration among them), "
          f"sidecar and scheduler examples, Dockerfiles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
