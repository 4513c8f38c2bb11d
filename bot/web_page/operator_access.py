"""Who may read the operator's endpoints: a client on this machine, or one with the operator token (pure)."""
from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping

# A proxy adds these; their values are never trusted, but their presence means the request came through one.
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")


def is_local(client_host: str | None, headers: Mapping[str, str]) -> bool:
    """Whether the request came straight from this machine (a loopback address, no proxy's header)."""
    if not client_host or any(name in headers for name in PROXY_HEADERS):
        return False
    try:
        address = ipaddress.ip_address(client_host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # '::ffff:127.0.0.1'
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def has_token(authorization: str | None, token: str | None) -> bool:
    """Whether the Authorization header is 'Bearer <the operator token>' (never, when no token is set)."""
    if not token or not authorization:
        return False
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def operator_may(client_host: str | None, headers: Mapping[str, str], token: str | None) -> bool:
    """Whether this request may read /metrics and /healthz."""
    return is_local(client_host, headers) or has_token(headers.get("authorization"), token)
