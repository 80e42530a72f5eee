"""The baseline server: a bare FastAPI app on uvicorn answering one health route."""

from fastapi import FastAPI

app = FastAPI()


@app.get("/api/health")
def health() -> dict[str, str]:
    return {"status": "ok"}
