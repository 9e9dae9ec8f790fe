//! The web page and its assets, embedded in the binary (no build step): our own
//! HTML, CSS and script, uPlot (MIT, `assets/uPlot.LICENSE`) for the charts, and the
//! OpenAPI description of the API.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// The OpenAPI 3 description of every endpoint.
pub const OPENAPI: &str = include_str!("../assets/openapi.json");

/// `(name, content type, bytes)` of each file under `/assets/`.
const FILES: [(&str, &str, &str); 5] = [
    ("app.js", "text/javascript; charset=utf-8", include_str!("../assets/app.js")),
    ("app.css", "text/css; charset=utf-8", include_str!("../assets/app.css")),
    ("uPlot.iife.min.js", "text/javascript; charset=utf-8", include_str!("../assets/uPlot.iife.min.js")),
    ("uPlot.min.css", "text/css; charset=utf-8", include_str!("../assets/uPlot.min.css")),
    ("uPlot.LICENSE", "text/plain; charset=utf-8", include_str!("../assets/uPlot.LICENSE")),
];

/// `GET /`: the page; `live` mode is written into it so it refreshes on its own.
pub(crate) async fn index(State(st): State<AppState>) -> Response {
    let html = include_str!("../assets/index.html").replace("data-live=\"false\"", if st.live { "data-live=\"true\"" } else { "data-live=\"false\"" });
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], html).into_response()
}

/// `GET /assets/{file}`.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    match FILES.iter().find(|(n, _, _)| *n == file) {
        Some((_, ct, body)) => ([(header::CONTENT_TYPE, *ct)], *body).into_response(),
        None => (StatusCode::NOT_FOUND, format!("no asset {file:?}")).into_response(),
    }
}

/// `GET /api/openapi.json`.
pub(crate) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
