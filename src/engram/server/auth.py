"""Who is calling: the tenant of an API key, or the one tenant of a server run without
keys. The tenant never comes from a request body or query."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from ..errors import ConfigError, InvalidScopeError
from ..model import check_label

API_KEYS_ENV = "ENGRAM_API_KEYS"
TENANT_ENV = "ENGRAM_TENANT"
DEFAULT_TENANT = "default"


class Unauthorized(Exception):
    """No API key, or one that is not configured (answered 401)."""


def parse_api_keys(text: str | None) -> dict[str, str] | None:
    """``"key1=tenant1,key2=tenant2"`` → {key: tenant}; None or blank → None (no keys).
    A key may itself contain '=' (base64): the tenant is what follows the last one."""
    if text is None or not text.strip():
        return None
    keys: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        key, sep, tenant = entry.rpartition("=")
        key, tenant = key.strip(), tenant.strip()
        if not sep or not key or not tenant:
            raise ConfigError(f"{API_KEYS_ENV}: expected key=tenant entries separated by commas, got {_masked(entry)}")
        if key in keys:
            raise ConfigError(f"{API_KEYS_ENV}: the key {_masked(key)} is given twice")
        keys[key] = tenant
    return keys or None


def _masked(secret: str) -> str:
    return repr(secret[:3] + "…") if len(secret) > 6 else "'…'"


class Tenancy:
    """Maps API keys to tenants. Keys are kept only as SHA-256 digests and looked up by
    digest, so the lookup time says nothing about how much of a guessed key matched."""

    def __init__(self, api_keys: Mapping[str, str] | None, default_tenant: str = DEFAULT_TENANT) -> None:
        if api_keys is not None and not api_keys:
            raise ConfigError("api_keys is empty: pass None to run single-tenant, or at least one key")
        self.default_tenant = _tenant(default_tenant)
        self._tenants = None if api_keys is None else {
            _digest(key): _tenant(tenant) for key, tenant in api_keys.items()
        }

    @property
    def single_tenant(self) -> bool:
        return self._tenants is None

    def tenant_for(self, api_key: str | None) -> str:
        if self._tenants is None:
            return self.default_tenant
        if not api_key:
            raise Unauthorized("an API key is required: send Authorization: Bearer <key>")
        tenant = self._tenants.get(_digest(api_key))
        if tenant is None:
            raise Unauthorized("the API key is not valid")
        return tenant

    def describe(self) -> str:
        if self._tenants is None:
            return (f"single-tenant mode: every request acts as tenant {self.default_tenant!r} with no API key "
                    f"(set {API_KEYS_ENV}=key=tenant,... to require keys)")
        keys, tenants = len(self._tenants), len(set(self._tenants.values()))
        return f"API keys required: {_count(keys, 'key')} for {_count(tenants, 'tenant')}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _digest(key: str) -> bytes:
    if not isinstance(key, str) or not key:
        raise ConfigError("API keys must be non-empty strings")
    return hashlib.sha256(key.encode("utf-8")).digest()


def _tenant(tenant: str) -> str:
    try:
        return check_label(tenant, "tenant")
    except InvalidScopeError as exc:
        raise ConfigError(f"bad tenant in the API key configuration: {exc}") from None
