"""The test suite's network guard: every connection and name lookup to a host that is not this
machine is refused, in the pytest process (installed by ``tests/conftest.py``) and in every
Python process the tests start (``sitecustomize.py`` beside this file, on ``PYTHONPATH``).

Loopback stays open: 127.0.0.0/8, ::1, ``localhost``, the unspecified addresses (on Linux a
connection to 0.0.0.0 reaches this machine) and Unix sockets. The suite's PostgreSQL, Redis,
moto, Milvus and uvicorn servers all listen there.

A refusal raises :class:`NetworkBlockedError` (an ``OSError``, as a machine without a network
would give, so code that handles being offline is exercised, not crashed) naming the host, and
is recorded: in this process's :data:`REFUSALS` and, when ``VARVEMEM_OFFLINE_GUARD_LOG`` names a
file, one line there per refusal (child processes write to it too). ``tests/conftest.py`` fails
every test during which a refusal was recorded, so a refusal swallowed by a ``try`` still fails.

Standard library only: it runs before anything else in a child interpreter.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

LOG_ENV = "OFFLINE_GUARD_LOG"  # not VARVEMEM_*: the tests strip those from children's environments
PREFIX = "varvemem test suite is offline:"
LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
REFUSALS: list[str] = []
_installed: dict[str, Any] = {}


class NetworkBlockedError(ConnectionRefusedError):
    """A connection to a host that is not this machine, refused by the test suite."""


class LookupBlockedError(socket.gaierror):
    """A name lookup of a host that is not this machine, refused by the test suite."""


def is_local(host: Any) -> bool:
    """Whether ``host`` (a name or an address, str or bytes, maybe None) is this machine."""
    if host is None:
        return True  # getaddrinfo(None, port): the local wildcard, for a server to bind
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    host = str(host).strip().rstrip(".").lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host in ("", "0.0.0.0", "::") or host in LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        addr = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False  # any other name needs a resolver, which may ask the network
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


def _refuse(host: Any, port: Any, what: str, error: type[OSError]) -> OSError:
    shown = f"{host}:{port}" if port not in (None, "") else str(host)
    message = (f"{PREFIX} {what} to {shown} refused (pid {os.getpid()}); only loopback "
               f"(127.0.0.0/8, ::1, localhost) and Unix sockets are allowed")
    REFUSALS.append(message)
    log = os.environ.get(LOG_ENV)
    if log:
        try:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(message.replace("\n", " ") + "\n")
        except OSError:
            pass  # a child without write access (say, one run as nobody): the error still raises
    if error is LookupBlockedError:
        return LookupBlockedError(socket.EAI_NONAME, message)
    return error(111, message)  # ECONNREFUSED


def _check_address(sock: socket.socket, address: Any, what: str) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return  # AF_UNIX and the rest: not the network
    if isinstance(address, tuple) and address:
        host = address[0]
        port = address[1] if len(address) > 1 else None
    else:
        host, port = address, None
    if not is_local(host):
        raise _refuse(host, port, what, NetworkBlockedError)


def install() -> None:
    """Patch the socket module of this interpreter (idempotent)."""
    if _installed:
        return
    _installed.update(
        connect=socket.socket.connect, connect_ex=socket.socket.connect_ex,
        sendto=socket.socket.sendto, getaddrinfo=socket.getaddrinfo,
        gethostbyname=socket.gethostbyname, gethostbyname_ex=socket.gethostbyname_ex,
        create_connection=socket.create_connection)
    orig = dict(_installed)

    def connect(self: socket.socket, address: Any) -> None:
        _check_address(self, address, "connection")
        return orig["connect"](self, address)  # type: ignore[no-any-return]

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self, address, "connection")
        return orig["connect_ex"](self, address)  # type: ignore[no-any-return]

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        _check_address(self, args[-1], "datagram")
        return orig["sendto"](self, data, *args)  # type: ignore[no-any-return]

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_local(host):
            raise _refuse(host, port, "name lookup", LookupBlockedError)
        return orig["getaddrinfo"](host, port, *args, **kwargs)

    def gethostbyname(host: Any) -> str:
        if not is_local(host):
            raise _refuse(host, None, "name lookup", LookupBlockedError)
        return orig["gethostbyname"](host)  # type: ignore[no-any-return]

    def gethostbyname_ex(host: Any) -> Any:
        if not is_local(host):
            raise _refuse(host, None, "name lookup", LookupBlockedError)
        return orig["gethostbyname_ex"](host)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        host, port = address[0], address[1]
        if not is_local(host):
            raise _refuse(host, port, "connection", NetworkBlockedError)
        return orig["create_connection"](address, *args, **kwargs)  # type: ignore[no-any-return]

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    socket.create_connection = create_connection  # type: ignore[assignment]


def is_installed() -> bool:
    return bool(_installed) and socket.getaddrinfo is not _installed["getaddrinfo"]
