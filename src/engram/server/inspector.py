"""Pages served next to the API, with every asset from this machine (no CDN):

- ``/ui/``: the memory inspector (plain HTML, CSS and JS in ``engram/server/ui``,
  packaged in the wheel), a client of the /v1 API like any other.
- ``/docs`` and ``/redoc``: Swagger UI and ReDoc from the ``fastapi-offline``
  package's copies of their bundles (installed with ``engram-agentmem[server]``)."""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

log = logging.getLogger("engram.server")

UI_PATH = "/ui"
DOCS_ASSETS = "/docs-assets"


def ui_directory() -> Path:
    return Path(str(resources.files("engram.server") / "ui"))


def add_inspector(app: FastAPI) -> None:
    @app.get(UI_PATH, include_in_schema=False)
    def inspector_root() -> RedirectResponse:  # relative asset paths need the slash
        return RedirectResponse(f"{UI_PATH}/")

    app.mount(UI_PATH, StaticFiles(directory=ui_directory(), html=True), name="inspector")


def docs_assets() -> Path | None:
    try:
        import fastapi_offline
    except ImportError:
        return None
    folder = Path(fastapi_offline.__file__).parent / "static"
    return folder if (folder / "swagger-ui-bundle.js").exists() else None


def add_docs(app: FastAPI) -> None:
    """/docs and /redoc from local files; without fastapi-offline, FastAPI's own pages
    (which load their scripts from a CDN) and a warning."""
    folder = docs_assets()
    if folder is None:
        log.warning("fastapi-offline is not installed: /docs and /redoc load Swagger UI from a CDN "
                    "(pip install 'engram-agentmem[server]')")
        app.get("/docs", include_in_schema=False)(lambda: get_swagger_ui_html(openapi_url="/openapi.json",
                                                                              title="engram"))
        return
    app.mount(DOCS_ASSETS, StaticFiles(directory=folder), name="docs-assets")
    redirect = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} — API", oauth2_redirect_url=redirect,
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},
        )

    @app.get(redirect, include_in_schema=False)
    def swagger_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} — API",
                              redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
                              redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png", with_google_fonts=False)
