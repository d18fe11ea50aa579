"""An SSLContext for serving: the certificate and key, TLS versions, and the client-certificate policy."""

from __future__ import annotations

import ssl

from gpudash.errors import UsageError
from gpudash.exporter.server.web_config import TLSSettings

_VERSIONS = {
    "TLS10": ssl.TLSVersion.TLSv1,
    "TLS11": ssl.TLSVersion.TLSv1_1,
    "TLS12": ssl.TLSVersion.TLSv1_2,
    "TLS13": ssl.TLSVersion.TLSv1_3,
}
_VERIFY = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def server_context(settings: TLSSettings) -> ssl.SSLContext:
    """Raises UsageError (one line naming where the settings came from) when a file cannot be used."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = _VERSIONS[settings.min_version]
    context.maximum_version = _VERSIONS[settings.max_version]
    if settings.prefer_server_cipher_suites:
        context.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    try:
        context.load_cert_chain(certfile=settings.cert_file, keyfile=settings.key_file)
    except ssl.SSLError as exc:
        raise UsageError(f"{settings.source}: cannot load the certificate and key: {exc.reason or exc}") from None
    except OSError as exc:
        raise UsageError(f"{settings.source}: cannot read the certificate or key: {exc.strerror or exc}") from None
    if settings.client_auth != "none":
        try:
            context.load_verify_locations(cafile=settings.client_ca_file or None, cadata=settings.client_ca or None)
        except (ssl.SSLError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise UsageError(f"{settings.source}: cannot load the client CA: {reason}") from None
        except OSError as exc:
            raise UsageError(f"{settings.source}: cannot read the client CA: {exc.strerror or exc}") from None
        context.verify_mode = _VERIFY[settings.client_auth]
    context.set_alpn_protocols(["http/1.1"])
    return context
