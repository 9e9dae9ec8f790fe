//! The JSON endpoints. Each handler parses its parameters (a 400 names what is
//! wrong), then reads the cube under a read lock on a blocking thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use cube::{Agg, Cube, CubeError};
use serde_json::{json, Value};

use crate::params::{self, check_known, pairs, single};
use crate::AppState;

/// A failed request: a status and a message for the client.
pub(crate) struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl ApiError {
    pub(crate) fn bad(msg: impl Into<String>) -> ApiError {
        ApiError(StatusCode::BAD_REQUEST, msg.into())
    }
}

impl From<CubeError> for ApiError {
    fn from(e: CubeError) -> ApiError {
        match e {
            CubeError::Query(_) | CubeError::Time(_) => ApiError(StatusCode::BAD_REQUEST, e.to_string()),
            _ => ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        }
    }
}

impl From<String> for ApiError {
    fn from(msg: String) -> ApiError {
        ApiError::bad(msg)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

pub(crate) type ApiResult = Result<Json<Value>, ApiError>;

/// Runs `f` on the cube under a read lock, off the async workers. A panic fails
/// only this request (500), never the server.
async fn with_cube(st: &AppState, f: impl FnOnce(&Cube) -> Result<Value, ApiError> + Send + 'static) -> ApiResult {
    let cube = st.cube.clone();
    let r = tokio::task::spawn_blocking(move || {
        // A writer that panicked leaves the cube as it was at its last update: still
        // worth answering from.
        let c = cube.read().unwrap_or_else(|p| p.into_inner());
        f(&c)
    })
    .await;
    match r {
        Ok(v) => v.map(Json),
        Err(_) => Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, "internal error while answering (a bug: please report the request)".into())),
    }
}

/// Sets its flag when dropped. A handler's future is dropped when its client goes
/// away, so the query it started stops at its next window instead of running on.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `GET /api/query`: `tracecube query --format json` over HTTP, refused before it
/// runs when its estimated cost is over the server's bound, and cancelled when the
/// client goes away.
pub(crate) async fn query(State(st): State<AppState>, RawQuery(raw): RawQuery) -> ApiResult {
    let args = params::query_args(&pairs(raw.as_deref()))?;
    let cancel = Arc::new(AtomicBool::new(false));
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let max = st.limits.max_query_cost;
    with_cube(&st, move |c| {
        let req = args.to_request(c)?;
        let cost = c.query_cost(&req)?;
        if cost > max {
            return Err(ApiError::bad(format!(
                "this query would read {cost} cell values, over the server's limit of {max}: ask a larger every, a shorter range, fewer groups or a narrower where"
            )));
        }
        Ok(c.query_until(&req, &cancel)?.to_json())
    })
    .await
}

/// The aggregates a metric can answer.
fn aggs(m: &cube::schema::Metric) -> Vec<Agg> {
    let mut v = vec![Agg::Sum];
    if m.count.is_some() {
        v.extend([Agg::Count, Agg::Avg]);
    }
    if m.extremes.is_some() {
        v.extend([Agg::Min, Agg::Max]);
    }
    v
}

/// `GET /api/metrics`: name, measure, finest `dim:level` per dimension, aggregates.
pub(crate) async fn metrics(State(st): State<AppState>, RawQuery(raw): RawQuery) -> ApiResult {
    check_known(&pairs(raw.as_deref()), &[])?;
    with_cube(&st, |c| {
        let s = &c.schema;
        let list: Vec<Value> = s
            .metrics
            .iter()
            .map(|m| {
                let by: Vec<String> =
                    m.dims.iter().zip(&m.leaf).map(|(&d, &l)| format!("{}:{}", s.dims[d as usize].name, s.dims[d as usize].levels[l as usize])).collect();
                let dims: Vec<&str> = m.dims.iter().map(|&d| s.dims[d as usize].name.as_str()).collect();
                json!({ "name": m.name, "measure": m.measure, "dims": dims, "by": by, "aggs": aggs(m) })
            })
            .collect();
        Ok(json!({ "metrics": list }))
    })
    .await
}

/// `GET /api/dimensions`: name, levels (coarsest first) and member count per level.
pub(crate) async fn dimensions(State(st): State<AppState>, RawQuery(raw): RawQuery) -> ApiResult {
    check_known(&pairs(raw.as_deref()), &[])?;
    with_cube(&st, |c| {
        let list: Vec<Value> = c
            .schema
            .dims
            .iter()
            .map(|d| {
                let counts: Vec<usize> = (0..d.levels.len()).map(|l| d.members_at(l as u8).len()).collect();
                json!({ "name": d.name, "levels": d.levels, "members": counts })
            })
            .collect();
        Ok(json!({ "dimensions": list }))
    })
    .await
}

/// `GET /api/members?dim=D&level=L&within=LEVEL=LABEL`: the members of `D` at `L`
/// (default: its leaf), each with its path from the top; `within` (repeatable)
/// keeps those whose ancestor at `LEVEL` is `LABEL`.
pub(crate) async fn members(State(st): State<AppState>, RawQuery(raw): RawQuery) -> ApiResult {
    let p = pairs(raw.as_deref());
    check_known(&p, &["dim", "level", "within"])?;
    let dim = single(&p, "dim")?.ok_or_else(|| ApiError::bad("parameter \"dim\" is required (see /api/dimensions)"))?.to_string();
    let level = single(&p, "level")?.map(str::to_string);
    let within: Vec<(String, String)> = params::all(&p, "within")
        .into_iter()
        .map(|w| w.split_once('=').map(|(l, v)| (l.to_string(), v.to_string())).ok_or_else(|| format!("within={w:?}: expected LEVEL=LABEL")))
        .collect::<Result<_, _>>()?;
    with_cube(&st, move |c| {
        let s = &c.schema;
        let d = s.dims.iter().find(|d| d.name == dim).ok_or_else(|| {
            let names: Vec<&str> = s.dims.iter().map(|d| d.name.as_str()).collect();
            ApiError::bad(format!("no dimension {dim:?} (dimensions: {})", names.join(", ")))
        })?;
        let lv =
            |name: &str| d.level(name).ok_or_else(|| ApiError::bad(format!("dimension {} has no level {name:?} (levels: {})", d.name, d.levels.join(", "))));
        let l = match &level {
            Some(n) => lv(n)?,
            None => d.leaf_level(),
        };
        let within: Vec<(u8, &str)> = within.iter().map(|(n, v)| lv(n).map(|x| (x, v.as_str()))).collect::<Result<_, _>>()?;
        if let Some((wl, _)) = within.iter().find(|(wl, _)| *wl > l) {
            return Err(ApiError::bad(format!("within: level {} is below level {} (give a coarser one)", d.levels[*wl as usize], d.levels[l as usize])));
        }
        let list: Vec<Value> = d
            .members_at(l)
            .into_iter()
            .filter(|&n| within.iter().all(|&(wl, v)| d.label(d.ancestor(n, wl)) == v))
            .map(|n| json!({ "label": d.label(n), "path": d.labels(n) }))
            .collect();
        Ok(json!({ "dim": d.name, "level": d.levels[l as usize], "members": list }))
    })
    .await
}

/// `GET /api/info`: what the page needs to set itself up.
pub(crate) async fn info(State(st): State<AppState>, RawQuery(raw): RawQuery) -> ApiResult {
    check_known(&pairs(raw.as_deref()), &[])?;
    let (live, sql) = (st.live, st.sql.is_some());
    with_cube(&st, move |c| {
        let levels: Vec<Value> = c.config.levels.iter().map(|l| json!({ "granularity_ns": l.granularity_ns, "span_ns": l.span_ns })).collect();
        Ok(json!({
            "live": live,
            "sql": sql,
            "span": c.span().map(|(a, b)| json!({ "first_ns": a, "last_ns": b })),
            "origin_ns": c.span().map_or(0, |s| s.0),
            "data_begin_ns": c.data_begin(),
            "now_ns": c.now(),
            "updates": c.updates,
            "levels": levels,
        }))
    })
    .await
}

/// Anything else: 404 with the list of endpoints.
pub(crate) async fn not_found(uri: Uri) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, format!("no endpoint {} (see /api/openapi.json)", uri.path()))
}
