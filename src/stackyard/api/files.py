"""Files under STACKS_DIR: browse, edit, upload, download (folders as zip streams).

Admins only: the stacks folder holds every stack's files, `.secrets` included."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, status
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import BaseModel, Field

from stackyard.api.deps import SettingsDep, require_admin
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


class FolderOut(BaseModel):
    path: str
    entries: list[EntryOut]


class TextFileOut(BaseModel):
    path: str
    content: str
    version: str = Field(description="Send it back when saving: a changed file is refused")


class TextFileIn(BaseModel):
    path: str
    content: str
    version: str | None = Field(None, description="From the read; null creates a new file")


class SavedOut(BaseModel):
    path: str
    version: str


class PathIn(BaseModel):
    path: str


class MoveIn(BaseModel):
    source: str
    destination: str


class UploadedOut(BaseModel):
    path: str
    size: int


def _root(settings: Settings):
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


@router.put("/content", operation_id="saveFile")
def save_file(body: TextFileIn, settings: SettingsDep) -> SavedOut:
    saved = browse.save_text(_root(settings), body.path, body.content, body.version)
    return SavedOut(path=saved.path, version=saved.version)


@router.post("/folder", operation_id="makeFolder", status_code=status.HTTP_201_CREATED)
def make_folder(body: PathIn, settings: SettingsDep) -> PathIn:
    return PathIn(path=browse.make_folder(_root(settings), body.path))


@router.post("/move", operation_id="moveEntry")
def move_entry(body: MoveIn, settings: SettingsDep) -> PathIn:
    return PathIn(path=browse.move(_root(settings), body.source, body.destination))


@router.delete("", operation_id="deleteEntry", status_code=status.HTTP_204_NO_CONTENT)
def delete_entry(
    settings: SettingsDep,
    path: PathQuery,
    recursive: Annotated[bool, Query(description="Delete a folder with its contents")] = False,
) -> None:
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
    path: PathQuery,
    overwrite: Annotated[bool, Query(description="Replace an existing file")] = False,
) -> UploadedOut:
    """The body is the file's bytes. Missing folders are created; the file appears only
    once it is complete."""
    stored, size = await upload.receive(_root(settings), path, request.stream(), overwrite)
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
def download(settings: SettingsDep, path: PathQuery):
    """A file, or a folder as `<name>.zip` built while it is sent (no Content-Length)."""
    prepared = prepare(_root(settings), path, settings.zip_level)
    if isinstance(prepared, FileDownload):
        return FileResponse(
            prepared.path,
            media_type=prepared.media_type,
            filename=prepared.filename,
            content_disposition_type="attachment",
        )
    return StreamingResponse(
        prepared.chunks,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{prepared.filename}"'},
    )
