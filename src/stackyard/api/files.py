"""Files under STACKS_DIR: browse, edit, upload, download (folders as zip streams).

Admins only: the stacks folder holds every stack's files, `.secrets` included. Every
change (save, upload, new folder, move, delete) is audited with the path as target."""

from __future__ import annotations

from datetime import datetime
from email.utils import formatdate
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from stackyard.api.deps import AdminDep, AuditDep, SettingsDep, StacksDep, require_admin
from stackyard.api.models import Body
from stackyard.files import browse, upload
from stackyard.files.download import FileDownload, prepare
from stackyard.settings import Settings

router = APIRouter(prefix="/files", tags=["files"], dependencies=[Depends(require_admin)])

PathQuery = Annotated[str, Query(description="Relative to the stacks folder; '' is the root")]


class EntryOut(BaseModel):
    name: str
    path: str
    type: Literal["file", "dir", "symlink", "other"]
    size: int
    mode: str
    modified: datetime
    target: str | None = Field(description="A symlink's target, as written in the link")
    link: Literal["file", "dir", "outside", "broken", "other"] | None = Field(
        None,
        description=(
            "What a symlink leads to, resolved inside the stacks folder: a file or folder "
            "there (opened, downloaded and saved through the link), `outside` it (refused), "
            "nothing (`broken`: dangling or a loop) or a special file; null for other entries"
        ),
    )


class FolderOut(BaseModel):
    path: str
    entries: list[EntryOut]


class TextFileOut(BaseModel):
    path: str
    content: str
    version: str = Field(description="Send it back when saving: a changed file is refused")


class TextFileIn(Body):
    path: str
    content: str
    version: str | None = Field(None, description="From the read; null creates a new file")


class SavedOut(BaseModel):
    path: str
    version: str


class PathIn(Body):
    path: str


class MoveIn(Body):
    source: str
    destination: str


class UploadedOut(BaseModel):
    path: str
    size: int


class PathsIn(Body):
    paths: list[str] = Field(max_length=browse.MAX_CHECKED_PATHS)


class ExistingOut(BaseModel):
    existing: list[str] = Field(description="Those of the paths where an entry exists")


def _root(settings: Settings) -> Path:
    return settings.stacks_dir


@router.get("", operation_id="listFolder")
def list_folder(
    settings: SettingsDep,
    path: PathQuery = "",
    hidden: Annotated[bool, Query(description="Include dotfiles and dot-folders")] = False,
) -> FolderOut:
    folder, entries = browse.list_folder(_root(settings), path, hidden)
    return FolderOut(
        path=folder, entries=[EntryOut.model_validate(e, from_attributes=True) for e in entries]
    )


@router.get("/content", operation_id="readFile")
def read_file(settings: SettingsDep, path: PathQuery) -> TextFileOut:
    return TextFileOut.model_validate(browse.read_text(_root(settings), path), from_attributes=True)


@router.put(
    "/content",
    operation_id="saveFile",
    responses={400: {"description": "A stack's compose file or .env that compose refuses"}},
)
def save_file(body: TextFileIn, stacks: StacksDep, audit: AuditDep, admin: AdminDep) -> SavedOut:
    """A stack's compose file or `.env` (`<stack>/compose.yaml`, `<stack>/.env`, ...) is
    checked as the stack page checks it; refused (400 with compose's error), the file
    stays as it was."""
    with audit(admin, "file.save", body.path):
        saved = stacks.save_browsed(body.path, body.content, body.version)
    return SavedOut(path=saved.path, version=saved.version)


@router.post("/exists", operation_id="pathsExist")
def paths_exist(body: PathsIn, settings: SettingsDep) -> ExistingOut:
    """Which of the paths exist: asked once before a folder upload replaces files."""
    return ExistingOut(existing=browse.existing(_root(settings), body.paths))


@router.post("/folder", operation_id="makeFolder", status_code=status.HTTP_201_CREATED)
def make_folder(
    body: PathIn, settings: SettingsDep, audit: AuditDep, admin: AdminDep, stacks: StacksDep
) -> PathIn:
    with audit(admin, "file.mkdir", body.path):
        stacks.check_editable(body.path)
        return PathIn(path=browse.make_folder(_root(settings), body.path))


@router.post("/move", operation_id="moveEntry")
def move_entry(
    body: MoveIn, settings: SettingsDep, audit: AuditDep, admin: AdminDep, stacks: StacksDep
) -> PathIn:
    target = f"{body.source} -> {body.destination}"
    with audit(admin, "file.move", target):
        stacks.check_editable(body.source, body.destination)
        return PathIn(path=browse.move(_root(settings), body.source, body.destination))


@router.delete("", operation_id="deleteEntry", status_code=status.HTTP_204_NO_CONTENT)
def delete_entry(
    settings: SettingsDep,
    audit: AuditDep,
    admin: AdminDep,
    path: PathQuery,
    stacks: StacksDep,
    recursive: Annotated[bool, Query(description="Delete a folder with its contents")] = False,
) -> None:
    with audit(admin, "file.delete", path):
        stacks.check_editable(path)
        browse.delete(_root(settings), path, recursive)


@router.put(
    "/upload",
    operation_id="uploadFile",
    status_code=status.HTTP_201_CREATED,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def upload_file(
    request: Request,
    settings: SettingsDep,
    audit: AuditDep,
    admin: AdminDep,
    path: PathQuery,
    stacks: StacksDep,
    overwrite: Annotated[bool, Query(description="Replace an existing file")] = False,
) -> UploadedOut:
    """The body is the file's bytes. Missing folders are created; the file appears only
    once it is complete."""
    with audit(admin, "file.upload", path) as note:
        stacks.check_editable(path)
        stored, size = await upload.receive(_root(settings), path, request.stream(), overwrite)
        note.detail = f"{size} bytes" + (" (overwrite allowed)" if overwrite else "")
    return UploadedOut(path=stored, size=size)


@router.get(
    "/download",
    operation_id="download",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The file's bytes, or for a folder a zip stream",
            "content": {"application/octet-stream": {}, "application/zip": {}},
        }
    },
)
def download(settings: SettingsDep, path: PathQuery) -> Response:
    """A file, or a folder as `<name>.zip` built while it is sent (no Content-Length)."""
    # Both are named by `content_disposition` (RFC 6266); this docstring is the schema's.
    prepared = prepare(_root(settings), path, settings.zip_level)
    headers = {"Content-Disposition": content_disposition(prepared.filename)}
    if isinstance(prepared, FileDownload):
        headers["Content-Length"] = str(prepared.size)
        headers["Last-Modified"] = formatdate(prepared.modified, usegmt=True)
        return StreamingResponse(prepared.chunks, media_type=prepared.media_type, headers=headers)
    return StreamingResponse(prepared.chunks, media_type="application/zip", headers=headers)


def content_disposition(filename: str, disposition: str = "attachment") -> str:
    """RFC 6266: an ASCII `filename` for old clients (quotes, backslashes, controls and
    non-ASCII replaced) and the exact name as UTF-8 in `filename*` (RFC 8187)."""
    fallback = "".join(
        "_" if ord(c) < 0x20 or ord(c) >= 0x7F or c in '"\\%' else c for c in filename
    )
    exact = quote(filename.encode("utf-8", "surrogateescape"), safe="")
    return f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{exact}"
