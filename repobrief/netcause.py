"""Why a connection failed, read the same way for GitHub, the LLM endpoint and webhooks:
the DNS failure under an HTTP client's wrappers, and whether it means "no such name"
or "no DNS server answered" (worth a retry)."""

from __future__ import annotations

import socket


def dns_failure(exc: BaseException) -> socket.gaierror | None:
    """The name lookup that failed under `exc` (its `exc`, `__cause__` or `__context__`
    chain), if that is what it was."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, socket.gaierror):
            return cause
        seen.add(id(cause))
        inner = getattr(cause, "exc", None)
        cause = inner if isinstance(inner, BaseException) else (cause.__cause__ or cause.__context__)
    return None


def lookup_unavailable(error: socket.gaierror) -> bool:
    """No DNS server answered (try again), as opposed to: the name does not exist."""
    return error.errno == getattr(socket, "EAI_AGAIN", None)


__all__ = ["dns_failure", "lookup_unavailable"]
