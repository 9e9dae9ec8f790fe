//! Entry points for the `tracecube` binary: the query arguments as the user types
//! them, turned into a [`Request`], and the demo queries.

use crate::cube::Cube;
use crate::error::{CubeError, Result};
use crate::query::{Agg, Request, When};
use crate::time::{parse_duration, parse_instant, TimeBase, Zone};

/// The largest `top` accepted (by `tracecube query` and the server alike).
pub const MAX_TOP: usize = 100_000;

/// Refuses what the cube would otherwise answer without complaint but a user surely
/// did not mean: a reversed range, a window of length 0, `top` 0 or above [`MAX_TOP`].
/// (Too many windows is the cube's own error, at [`crate::query::MAX_WINDOWS`].) The
/// command and the server give the same messages.
pub fn check_request(req: &Request) -> Result<()> {
    if let When::Range(a, b) = req.when {
        if a > b {
            return Err(CubeError::Query(format!("range: begin {a} is after end {b} (expected T1..T2 with T1 <= T2)")));
        }
    }
    if req.every == Some(0) {
        return Err(CubeError::Query("every: the window length must be positive".into()));
    }
    if let Some(k) = req.top {
        if k == 0 || k > MAX_TOP {
            return Err(CubeError::Query(format!("top={k}: expected a whole number from 1 to {MAX_TOP}")));
        }
    }
    Ok(())
}

/// `tracecube query` arguments, as strings (clap fills it; see the crate README).
#[derive(Debug, Clone, Default)]
pub struct QueryArgs {
    /// `--metric M`.
    pub metric: String,
    /// `--agg sum|count|avg|min|max`.
    pub agg: Option<String>,
    /// `--at T`.
    pub at: Option<String>,
    /// `--range T1..T2`.
    pub range: Option<String>,
    /// `--last DUR`.
    pub last: Option<String>,
    /// `--by DIM[:LEVEL]`, repeated.
    pub by: Vec<String>,
    /// `--where DIM[:LEVEL]=M1[,M2…]`, repeated.
    pub filters: Vec<String>,
    /// `--top K`.
    pub top: Option<usize>,
    /// `--every DUR`.
    pub every: Option<String>,
    /// `--gmt`: civil times without an offset are UTC, not local.
    pub gmt: bool,
}

impl QueryArgs {
    /// The request these arguments mean for `cube`, instants read by
    /// [`parse_instant`] (offsets from its first update: the first event). Without
    /// `--at/--range/--last`, the whole history.
    pub fn to_request(&self, cube: &Cube) -> Result<Request> {
        let base = TimeBase { origin_ns: cube.span().map_or(0, |s| s.0) as i64, zone: if self.gmt { Zone::Utc } else { Zone::Local } };
        let instant = |t: &str| -> Result<u64> {
            // Cube times are u64 ns: every one of them may be written, up to u64::MAX.
            if let Ok(ns) = t.trim().parse::<u64>() {
                return Ok(ns);
            }
            u64::try_from(parse_instant(t, base)?).map_err(|_| CubeError::Time(format!("{t:?}: before 1970, where no cube has data")))
        };
        let when = match (&self.at, &self.range, &self.last) {
            (Some(t), None, None) => When::At(instant(t)?),
            (None, Some(r), None) => {
                let (a, b) = r.split_once("..").ok_or_else(|| CubeError::Query(format!("--range {r:?}: expected T1..T2")))?;
                When::Range(instant(a)?, instant(b)?)
            }
            (None, None, Some(d)) => When::Last(parse_duration(d)?),
            (None, None, None) => When::At(u64::MAX),
            _ => return Err(CubeError::Query("give one of --at, --range, --last".into())),
        };
        let filters = self
            .filters
            .iter()
            .map(|f| {
                let (d, v) = f.split_once('=').ok_or_else(|| CubeError::Query(format!("--where {f:?}: expected DIM[:LEVEL]=MEMBER[,MEMBER]")))?;
                Ok((d.to_string(), v.split(',').map(str::to_string).collect()))
            })
            .collect::<Result<_>>()?;
        let req = Request {
            metric: self.metric.clone(),
            agg: self.agg.as_deref().map(str::parse::<Agg>).transpose()?.unwrap_or_default(),
            when,
            by: self.by.clone(),
            filters,
            top: self.top,
            every: self.every.as_deref().map(parse_duration).transpose()?,
        };
        check_request(&req)?;
        Ok(req)
    }
}

/// A few queries for `tracecube demo`, rendered as text.
pub fn demo_queries(cube: &Cube) -> Result<String> {
    let q = |metric: &str, by: &[&str], top: Option<usize>, last: Option<&str>| QueryArgs {
        metric: metric.into(),
        by: by.iter().map(|s| s.to_string()).collect(),
        top,
        last: last.map(str::to_string),
        ..Default::default()
    };
    let mut out = String::new();
    for (title, a) in [
        ("Top 5 threads by CPU time, whole trace", q("cpu_time", &["process:tid"], Some(5), None)),
        ("Rolled up to process names", q("cpu_time", &["process:name"], None, None)),
        ("Bytes written per top directory", q("bytes_written", &["file:d1"], None, None)),
        ("Events per operation kind, last 100 ms", q("events", &["operation:kind"], None, Some("100ms"))),
    ] {
        out += &format!("# {title}\n{}\n", cube.query(&a.to_request(cube)?)?.to_text());
    }
    Ok(out)
}
