"""Names under `.invalid` (RFC 6761: never registered) get the resolver's "no such name"
here, without a query to any DNS server, so the tests of a host that does not resolve
send nothing beyond loopback and do not depend on this machine's resolver. Installed in
every test process by conftest, and in a test's subprocess by putting `tests/nodns`
(whose `sitecustomize` installs it) and `tests` on its PYTHONPATH."""

from __future__ import annotations

import socket
from pathlib import Path

NODNS = [str(Path(__file__).parent / "nodns"), str(Path(__file__).parent)]
_real = socket.getaddrinfo


def lookup(host, *args, **kw):
    name = host.decode("ascii", "replace") if isinstance(host, bytes) else host  # asyncio asks with bytes
    if isinstance(name, str) and name.rstrip(".").lower().endswith(".invalid"):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return _real(host, *args, **kw)


def install() -> None:
    socket.getaddrinfo = lookup
