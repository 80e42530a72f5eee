"""What an image says of its release: the OCI labels of its config
(`org.opencontainers.image.version`, `.source`, `.url`, `.revision`, `.created`), each
checked (they come from whoever pushed the image), and the page that tells what changed
when the source is on a forge we know."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import ConfigDict, with_config

OCI = "org.opencontainers.image."
#: The longest label value kept.
VALUE_LIMIT = 300
_PRINTABLE = re.compile(r"^[^\x00-\x1f\x7f]+$")
_REVISION = re.compile(r"^[0-9a-fA-F]{7,64}$")
#: Forges whose releases page is known: host -> the path after the repository.
FORGES = {
    "github.com": "/releases",
    "gitlab.com": "/-/releases",
    "codeberg.org": "/releases",
    "gitea.com": "/releases",
}


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class Release:
    version: str | None = None
    source: str | None = None  # the repository's URL
    url: str | None = None  # the project's page
    revision: str | None = None  # the commit it was built from
    created: str | None = None
    #: Where to read what changed: the forge's releases page of the source.
    link: str | None = None
    #: Why the labels could not be read (they are not asked again for this image).
    error: str | None = None


def release_of(config: dict[str, Any]) -> Release:
    """The release an image config's labels describe (what does not fit is left out)."""
    inner = config.get("config")
    labels = inner.get("Labels") if isinstance(inner, dict) else None
    if not isinstance(labels, dict):
        return Release()
    version = _text(labels.get(OCI + "version"))
    source = _web_url(labels.get(OCI + "source"))
    revision = _text(labels.get(OCI + "revision"))
    return Release(
        version=version,
        source=source,
        url=_web_url(labels.get(OCI + "url")),
        revision=revision if revision and _REVISION.match(revision) else None,
        created=_text(labels.get(OCI + "created")),
        link=releases_page(source) if source else None,
    )


def releases_page(source: str) -> str | None:
    """The releases page of a repository on a known forge; None elsewhere."""
    parts = urlsplit(source)
    suffix = FORGES.get(parts.hostname or "")
    path = parts.path.rstrip("/").removesuffix(".git")
    if suffix is None or path.count("/") < 2:
        return None
    return f"https://{parts.hostname}{path}{suffix}"


def _text(value: object) -> str | None:
    if not isinstance(value, str) or not value or len(value) > VALUE_LIMIT:
        return None
    return value if _PRINTABLE.match(value) else None


def _web_url(value: object) -> str | None:
    """An http(s) URL with a host, or None (a label may say anything)."""
    text = _text(value)
    if text is None or " " in text:
        return None
    parts = urlsplit(text.removeprefix("git+"))
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return None
    return parts.geturl()
