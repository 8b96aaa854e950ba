"""The cluster's certificates and the grader's refusals that need no cluster (tests/grading/test_cluster.py
starts a real one)."""

from __future__ import annotations

import ssl
import stat
import subprocess
import sys

import pytest

from grader.cluster import ClusterRefused, installed, make_certs, refuse_mismatched
from tests.helpers.course import REPO


def test_cluster_certs_makes_a_ca_and_a_private_key_per_role_and_refuses_to_overwrite(tmp_path):
    out = subprocess.run([sys.executable, "-m", "grader", "cluster-certs", str(tmp_path / "c"), "--host", "10.0.0.5"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for role in ("scheduler", "worker", "client"):
        assert stat.S_IMODE((tmp_path / "c" / f"{role}.key").stat().st_mode) == 0o600
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(tmp_path / "c" / "ca.pem"))
        ctx.load_cert_chain(str(tmp_path / "c" / f"{role}.pem"), str(tmp_path / "c" / f"{role}.key"))  # key matches
    assert stat.S_IMODE((tmp_path / "c" / "ca.key").stat().st_mode) == 0o600
    again = subprocess.run([sys.executable, "-m", "grader", "cluster-certs", str(tmp_path / "c")], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "exists" in again.stderr
    with pytest.raises(FileExistsError):
        make_certs(tmp_path / "c")


def test_a_worker_that_differs_or_cannot_say_is_named():
    ours = installed()
    good = dict(ours)
    refuse_mismatched({"tls://10.0.0.1:1": good}, {"tls://10.0.0.1:1": "w1"})  # the grader's own: accepted
    with pytest.raises(ClusterRefused) as why:
        refuse_mismatched({"tls://10.0.0.1:1": good, "tls://10.0.0.2:1": {**good, "lock": "f" * 64},
                           "tls://10.0.0.3:1": ModuleNotFoundError("No module named 'grader'"),
                           "tcp://10.0.0.4:1": good},
                          {"tls://10.0.0.2:1": "w2", "tls://10.0.0.3:1": "w3", "tcp://10.0.0.4:1": "w4"})
    text = str(why.value)
    assert "worker w2" in text and "lock file" in text and "ffffffffffff" in text
    assert "worker w3" in text and "No module named 'grader'" in text
    assert "worker w4" in text and "without TLS" in text
    assert "10.0.0.1" not in text


def test_cluster_check_refuses_a_scheduler_without_tls_or_certificates_before_connecting(tmp_path):
    out = subprocess.run([sys.executable, "-m", "grader", "cluster-check", "tcp://127.0.0.1:1", "--certs",
                          str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "only tls://" in out.stderr, out.stderr
    out = subprocess.run([sys.executable, "-m", "grader", "cluster-check", "tls://127.0.0.1:1", "--certs",
                          str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "no ca.pem" in out.stderr, out.stderr
