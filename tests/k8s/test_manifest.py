# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""The Kubernetes manifest of docs/k8s (docs/whole-jobs.md, "Several nodes").

No cluster here, so nothing is applied: every document is validated against
the Kubernetes API's own JSON schemas (the kubernetes-validate package, which
carries them: no network), strictly (an unknown field, e.g. a misspelt
hostPID, is an error), as `kubectl apply --dry-run=client` would; then what
fvbpf needs of it, which the schema cannot say (host PID namespace,
privileges, the shared volume and its claim, a selector that selects the
template), and that the recipe in docs/whole-jobs.md names what the
manifest defines.  Run with build/venv-k8s's Python (make venv):

  build/venv-k8s/bin/python -m unittest -v tests/k8s/test_manifest.py
"""
import copy
import os
import re
import unittest

import kubernetes_validate
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MANIFEST = os.path.join(ROOT, "docs", "k8s", "fvbpf-daemonset.yaml")
DOC = os.path.join(ROOT, "docs", "whole-jobs.md")
# The oldest release still maintained when this was written, and the
# package's newest: the manifest uses nothing newer than either.
VERSIONS = ("1.31.0", kubernetes_validate.latest_version())


def load():
    with open(MANIFEST) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def by_kind(docs, kind):
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, (kind, len(found))
    return found[0]


def validate(doc, version):
    kubernetes_validate.validate(doc, version, strict=True)


class Schema(unittest.TestCase):
    def test_every_document_is_valid(self):
        docs = load()
        self.assertEqual(sorted(d["kind"] for d in docs),
                         ["DaemonSet", "Namespace", "PersistentVolumeClaim"])
        for version in VERSIONS:
            for d in docs:
                with self.subTest(version=version, kind=d["kind"]):
                    validate(d, version)

    def test_the_validator_refuses_what_the_api_would(self):
        """The check can fail: broken copies of the DaemonSet are refused."""
        ds = by_kind(load(), "DaemonSet")
        broken = []
        d = copy.deepcopy(ds)
        spec = d["spec"]["template"]["spec"]
        spec["hostPid"] = spec.pop("hostPID")          # misspelt: unknown field
        broken.append(("hostPid", d))
        d = copy.deepcopy(ds)
        del d["spec"]["selector"]                       # required
        broken.append(("no selector", d))
        d = copy.deepcopy(ds)
        d["spec"]["template"]["spec"]["hostPID"] = "yes"  # not a boolean
        broken.append(("hostPID a string", d))
        d = copy.deepcopy(ds)
        del d["spec"]["template"]["spec"]["containers"][0]["name"]  # required
        broken.append(("container without a name", d))
        for what, d in broken:
            with self.subTest(what):
                with self.assertRaises(kubernetes_validate.ValidationError):
                    validate(d, VERSIONS[-1])


class WhatFvbpfNeeds(unittest.TestCase):
    def setUp(self):
        self.docs = load()
        self.ns = by_kind(self.docs, "Namespace")["metadata"]["name"]
        self.ds = by_kind(self.docs, "DaemonSet")
        self.pvc = by_kind(self.docs, "PersistentVolumeClaim")
        self.pod = self.ds["spec"]["template"]["spec"]
        self.c = self.pod["containers"][0]

    def test_one_namespace(self):
        for d in (self.ds, self.pvc):
            self.assertEqual(d["metadata"]["namespace"], self.ns)

    def test_host_pid_and_privileged(self):
        # fvbpf refuses to run in a PID namespace of its own; BPF, uprobes,
        # /proc/PID/root and --inject need the privileges
        self.assertIs(self.pod["hostPID"], True)
        self.assertIs(self.c["securityContext"]["privileged"], True)

    def test_selector_selects_the_template(self):
        # the API server refuses a DaemonSet whose selector does not match
        # its template's labels; the schema cannot say so
        labels = self.ds["spec"]["template"]["metadata"]["labels"]
        for k, v in self.ds["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(labels.get(k), v)

    def test_every_node(self):
        self.assertIn({"operator": "Exists"}, self.pod["tolerations"])

    def test_waits_for_kubectl_exec(self):
        # a container that exits would be restarted over and over
        self.assertEqual(self.c["command"], ["sleep", "infinity"])

    def test_shared_volume(self):
        vols = {v["name"]: v for v in self.pod["volumes"]}
        mounts = {m["name"]: m["mountPath"] for m in self.c["volumeMounts"]}
        self.assertEqual(mounts.get("traces"), "/traces")
        self.assertEqual(vols["traces"]["persistentVolumeClaim"]["claimName"],
                         self.pvc["metadata"]["name"])
        self.assertIn("ReadWriteMany", self.pvc["spec"]["accessModes"])

    def test_node_name_for_per_node_directories(self):
        env = {e["name"]: e for e in self.c["env"]}
        self.assertEqual(env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName")

    def test_the_docs_recipe_names_what_the_manifest_defines(self):
        with open(DOC) as f:
            text = f.read()
        label = "%s=%s" % next(iter(self.ds["spec"]["selector"]["matchLabels"].items()))
        for want in ("kubectl apply -f docs/k8s/fvbpf-daemonset.yaml", "-l " + label,
                     "/traces/", "$NODE_NAME"):
            self.assertTrue(want in text, "%r not in %s" % (want, DOC))
        execs = re.findall(r"kubectl -n (\S+) (?:exec|get pods) .*", text)
        self.assertTrue(execs, "no kubectl -n NS exec in " + DOC)
        for ns in execs:
            self.assertEqual(ns, self.ns)


if __name__ == "__main__":
    unittest.main()
