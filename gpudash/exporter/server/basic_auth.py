"""Basic authentication against bcrypt hashes, as exporter-toolkit does it: one bcrypt check at a time (each
costs tens of milliseconds of CPU at cost 10), the verdict cached per user, hash and password so a scraper
pays it once, and an unknown user checked against a fixed hash so that timing does not tell which users
exist. Only the digest of a password is kept in the cache."""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
import time
from collections.abc import Callable

CACHE_ENTRIES = 1024


class BasicAuth:
    def __init__(self, users: dict[str, bytes]) -> None:
        import bcrypt  # only a server with users pays for it (well under a millisecond)

        self._bcrypt = bcrypt
        self._users = dict(users)
        self._cache: dict[bytes, bool] = {}
        self._cache_lock = threading.Lock()
        self._bcrypt_lock = threading.Lock()
        self._decoy: bytes | None = None  # made at the first unknown user, at the users' cheapest cost

    def check(self, header: str | None, give_up: Callable[[], bool], deadline: float) -> bool:
        """Whether the Authorization header names a user with the right password. Waits for the bcrypt lock
        until `deadline` (time.monotonic()) or until `give_up()` says the connection was closed: False then."""
        credentials = _parse(header)
        if credentials is None:
            return False
        user, password = credentials
        known = user in self._users
        hashed = self._users[user] if known else self._decoy_hash()
        key = hashlib.sha256(b"\0".join((user.encode(), hashed, password))).digest()
        with self._cache_lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached and known
        while not self._bcrypt_lock.acquire(timeout=0.05):
            if give_up() or time.monotonic() > deadline:
                return False
        try:
            ok = self._bcrypt.checkpw(password, hashed)
        except ValueError:  # bcrypt 5 refuses passwords over 72 bytes, as Go's bcrypt does
            ok = False
        finally:
            self._bcrypt_lock.release()
        with self._cache_lock:
            if len(self._cache) >= CACHE_ENTRIES:
                self._cache.clear()
            self._cache[key] = ok
        return ok and known

    def _decoy_hash(self) -> bytes:
        if self._decoy is None:
            cost = min(int(h[4:6]) for h in self._users.values())
            self._decoy = self._bcrypt.hashpw(
                b"no such user", self._bcrypt.gensalt(rounds=cost)
            )  # racing twice is harmless
        return self._decoy


def _parse(header: str | None) -> tuple[str, bytes] | None:
    if not header:
        return None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    user, colon, password = decoded.partition(b":")
    if not colon:
        return None
    return user.decode("utf-8", "replace"), password
