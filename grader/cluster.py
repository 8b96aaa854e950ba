"""A Dask cluster the grader may use: its workers run this course's own code, and it speaks TLS with mutual
authentication.

A Dask worker runs whatever pickled task reaches it, and the course's workers run as root (to drop each job
to a uid of its own): so the grader refuses a scheduler it cannot reach by TLS with a certificate of the
course's own authority, and refuses a worker whose installed course (commit, lock file, grader and library
code) is not the grader's, naming it, before any job is sent.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from pathlib import Path

from grader.course import ROOT

# A build with no git history (a container image) says which commit it was made from.
COMMIT_ENV = "TORCHCOURSE_COMMIT"
CERTS_ENV = "TORCHCOURSE_CLUSTER_CERTS"
LOCK = Path("requirements") / "lock.txt"
ROLES = ("scheduler", "worker", "client")


class ClusterRefused(RuntimeError):
    """The cluster is not one the grader may send jobs to (the message says which part and why)."""


# --------------------------------------------------------------------------- what is installed


def _sha256_of_packages(*packages: Path) -> str:
    """One hash of the packages' Python files, by their paths inside each package (where it is installed is
    no part of it)."""
    h = hashlib.sha256()
    for package in packages:
        for p in sorted(package.rglob("*.py")):
            h.update(f"{package.name}/{p.relative_to(package)}".encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _commit(root: Path) -> str:
    if os.environ.get(COMMIT_ENV):
        return os.environ[COMMIT_ENV].strip()
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


@functools.cache
def installed() -> dict[str, str]:
    """This process's course: the commit it was installed from, the hash of its lock file, and the hash of the
    code a job runs (the grader package and the course library): a working tree changed since its commit
    differs in `code`."""
    import torchcourse

    lock = ROOT / LOCK
    library = Path(torchcourse.__file__).resolve().parent
    grader = ROOT / "grader"
    return {
        "commit": _commit(ROOT),
        "lock": hashlib.sha256(lock.read_bytes()).hexdigest() if lock.is_file() else "missing",
        "code": _sha256_of_packages(grader, library),
        "where": str(ROOT),
    }


def worker_identity() -> dict[str, str]:
    """Run on each Dask worker by reference (`client.run`): the worker imports its own installed grader to
    answer, so one without the grader fails here, by name, before any job."""
    return installed()


def differences(theirs: dict, ours: dict) -> list[str]:
    """What of a worker's course differs from the grader's, as phrases ("course commit 1234abcd, not 5678ef01")."""
    said = []
    for key, what in (("commit", "course commit"), ("lock", "lock file requirements/lock.txt (sha256)"),
                      ("code", "grader and course library code (sha256)")):
        if theirs.get(key) != ours[key]:
            said.append(f"{what} {str(theirs.get(key))[:12]}, not {ours[key][:12]}")
    return said


def refuse_mismatched(identities: dict[str, object], names: dict[str, str]) -> None:
    """Raise ClusterRefused naming every worker whose course is not the grader's, or that could not say
    (an exception in place of its identity: the grader is not installed there)."""
    ours = installed()
    bad = []
    for address, theirs in sorted(identities.items()):
        who = f"worker {names.get(address) or address} ({address})"
        if isinstance(theirs, BaseException):
            bad.append(f"{who} cannot run the grader installed there: {type(theirs).__name__}: {theirs}")
        elif not address.startswith("tls://"):
            bad.append(f"{who} listens without TLS: start it with the course's certificates")
        elif diff := differences(theirs, ours):
            bad.append(f"{who} runs {'; '.join(diff)}")
    if bad:
        raise ClusterRefused("refused: " + " | ".join(bad) + " (install the grader's commit and lock there, "
                             "see grader/README.md, 'Grading on several machines')")


# --------------------------------------------------------------------------- certificates


def cert_paths(folder: Path, role: str) -> tuple[Path, Path]:
    return folder / f"{role}.pem", folder / f"{role}.key"


def make_certs(folder: Path, days: int = 365, hosts: tuple[str, ...] = ()) -> list[Path]:
    """A certificate authority of the course's own and a certificate with its key for each role (scheduler,
    worker, client), signed by it. Dask checks that the peer's certificate chains to the CA, not its host name;
    `hosts` are still written into the scheduler's and workers' certificates for tools that do."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    existing = [p for p in [folder / "ca.pem", folder / "ca.key", *(q for r in ROLES for q in cert_paths(folder, r))]
                if p.exists()]
    if existing:
        raise FileExistsError(f"{existing[0]} exists: make certificates in an empty folder (a new authority "
                              "means every machine gets the new files)")
    now = datetime.datetime.now(datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "torchcourse grading cluster"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def write_key(key, path: Path) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # private from the first byte
        with os.fdopen(fd, "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("torchcourse grading CA")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    write_key(ca_key, folder / "ca.key")
    sans: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    for h in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    written = [folder / "ca.pem", folder / "ca.key"]
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        b = (x509.CertificateBuilder().subject_name(name(f"torchcourse {role}")).issuer_name(ca.subject)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             # Each side of a Dask connection may be either end of TLS: a worker serves and dials.
             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                            critical=False))
        if role != "client":
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = b.sign(ca_key, hashes.SHA256())
        pem, keyfile = cert_paths(folder, role)
        pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_key(key, keyfile)
        written += [pem, keyfile]
    return written


def security(folder: Path | str, role: str = "client"):
    """Dask's `Security` for `role` from a folder `make_certs` wrote: TLS only, the peer's certificate required
    and checked against the course's CA."""
    from distributed.security import Security

    folder = Path(folder)
    pem, key = cert_paths(folder, role)
    missing = [p for p in (folder / "ca.pem", pem, key) if not p.is_file()]
    if missing:
        raise ClusterRefused(f"no {missing[0].name} in {folder}: make the certificates with "
                             "`python -m grader cluster-certs DIR` and copy them there")
    return Security(tls_ca_file=str(folder / "ca.pem"), tls_client_cert=str(pem), tls_client_key=str(key),
                    require_encryption=True)


def certs_folder(given: str | None) -> Path:
    """The client's certificates: `--certs`, else $TORCHCOURSE_CLUSTER_CERTS; refused when neither is set."""
    folder = given or os.environ.get(CERTS_ENV)
    if not folder:
        raise ClusterRefused(f"--scheduler needs the course's client certificate: pass --certs DIR (or set "
                             f"{CERTS_ENV}); `python -m grader cluster-certs DIR` makes them")
    return Path(folder)


def check_address(address: str) -> None:
    if not address.startswith("tls://"):
        raise ClusterRefused(f"refused scheduler {address!r}: only tls://HOST:PORT (a Dask worker runs any task "
                             "whoever reaches it sends, as root here: the cluster must require TLS with the course's "
                             "certificates; see grader/README.md, 'Grading on several machines')")


def connect(address: str, certs: str | None, timeout: str = "30s"):
    """A Dask client for a TLS scheduler, with the course's client certificate; refused otherwise."""
    from distributed import Client

    check_address(address)
    return Client(address, security=security(certs_folder(certs)), timeout=timeout)


def scheduler_allowed_failures(dask_scheduler=None) -> int:
    """Run on the scheduler: how many times it reruns a task whose worker died before calling it failed."""
    return int(dask_scheduler.allowed_failures)


def verify_scheduler(client) -> None:
    """The scheduler hands a job whose worker died straight back to the grader (allowed-failures 0), which runs
    it once more, as the local pool does: with Dask's default a job that kills its worker would kill three
    more before the grader heard of it, and then be run again."""
    allowed = client.run_on_scheduler(scheduler_allowed_failures)
    if allowed != 0:
        raise ClusterRefused(f"the scheduler at {client.scheduler.address} reruns a job whose worker died "
                             f"{allowed} times (distributed.scheduler.allowed-failures): start it with "
                             "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 (grader/README.md, 'Grading on "
                             "several machines')")


def verify_workers(client) -> list[str]:
    """Every worker's course checked against the grader's (ClusterRefused naming the ones that differ);
    the addresses of the workers, none refused. A cluster with no worker is refused too."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    if not info:
        raise ClusterRefused(f"the scheduler at {client.scheduler.address} has no workers")
    names = {a: str(w.get("name", "")) for a, w in info.items()}
    identities = client.run(worker_identity, on_error="return")
    refuse_mismatched(identities, names)
    return sorted(identities)


def verify_cluster(client) -> list[str]:
    """A cluster the grader may send jobs to: its scheduler (`verify_scheduler`), then every worker
    (`verify_workers`, whose addresses it returns); ClusterRefused naming what is not."""
    verify_scheduler(client)
    return verify_workers(client)
