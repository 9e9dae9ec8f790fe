//! `POST /api/sql`: read-only SQL over the traces the server was given. The server
//! knows no trace: what runs the query is a [`SqlService`] handed to it
//! ([`crate::spawn_with_sql`]; `tracecube serve --trace DIR` hands it the `sql`
//! crate's session).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::Value;

use crate::api::{ApiError, ApiResult};
use crate::AppState;

/// What answers `POST /api/sql`.
pub trait SqlService: Send + Sync {
    /// Runs the read-only `query`: at most `max_rows` rows, cancelled after `timeout`.
    /// The answer is `{"columns": [..], "rows": [{..}], "truncated": bool}`; an error
    /// is a message for the client (a bad query, or one that ran too long).
    fn run(&self, query: &str, max_rows: usize, timeout: Duration) -> Result<Value, String>;
}

/// `POST /api/sql` with `{"query": "..."}` (or the query as the whole body).
pub(crate) async fn query(State(st): State<AppState>, body: Bytes) -> ApiResult {
    let Some(sql) = st.sql.clone() else {
        return Err(ApiError(StatusCode::NOT_FOUND, "this server has no traces to query: start it with --trace DIR".into()));
    };
    let text = std::str::from_utf8(&body).map_err(|_| ApiError::bad("the body is not UTF-8"))?;
    let query = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => {
            m.get("query").and_then(Value::as_str).map(str::to_string).ok_or_else(|| ApiError::bad("expected {\"query\": \"SELECT ...\"}"))?
        }
        _ => text.to_string(),
    };
    if query.trim().is_empty() {
        return Err(ApiError::bad("empty query"));
    }
    let (rows, timeout) = (st.limits.sql_max_rows, st.limits.sql_timeout);
    let r = tokio::task::spawn_blocking(move || sql.run(&query, rows, timeout)).await;
    match r {
        Ok(Ok(v)) => Ok(Json(v)),
        Ok(Err(msg)) => Err(ApiError::bad(msg)),
        Err(_) => Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, "internal error while answering (a bug: please report the query)".into())),
    }
}
