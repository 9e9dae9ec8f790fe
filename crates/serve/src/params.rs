//! Query-string parameters → the arguments of `tracecube query`, checked.
//!
//! Parameters map one-to-one to the command's flags (`metric`, `agg`, `at`, `range`,
//! `last`, `by`, `where`, `top`, `every`; `by` and `where` repeatable), so an answer
//! is the command's by construction: both go through [`cube::cli::QueryArgs`].
//! Unknown or repeated single parameters, absurd sizes and reversed ranges are
//! refused with a message naming the parameter.

use cube::cli::QueryArgs;

/// The largest `top` accepted.
pub use cube::cli::MAX_TOP;
/// The largest number of windows an `every` may produce (the cube's limit).
pub use cube::query::MAX_WINDOWS;

/// Parameter names of `/api/query`.
const QUERY_PARAMS: [&str; 9] = ["metric", "agg", "at", "range", "last", "by", "where", "top", "every"];

/// The decoded `name=value` pairs of a query string, in order.
pub(crate) fn pairs(raw: Option<&str>) -> Vec<(String, String)> {
    form_urlencoded::parse(raw.unwrap_or("").as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// Refuses names outside `known`.
pub(crate) fn check_known(pairs: &[(String, String)], known: &[&str]) -> Result<(), String> {
    match pairs.iter().find(|(k, _)| !known.contains(&k.as_str())) {
        Some((k, _)) => Err(format!("unknown parameter {k:?} (known: {})", known.join(", "))),
        None => Ok(()),
    }
}

/// The value of a parameter given at most once.
pub(crate) fn single<'a>(pairs: &'a [(String, String)], name: &str) -> Result<Option<&'a str>, String> {
    let mut it = pairs.iter().filter(|(k, _)| k == name);
    let first = it.next().map(|(_, v)| v.as_str());
    if it.next().is_some() {
        return Err(format!("parameter {name:?} given more than once"));
    }
    Ok(first)
}

/// Every value of a repeatable parameter.
pub(crate) fn all(pairs: &[(String, String)], name: &str) -> Vec<String> {
    pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect()
}

/// The `tracecube query` arguments these parameters mean.
pub(crate) fn query_args(pairs: &[(String, String)]) -> Result<QueryArgs, String> {
    check_known(pairs, &QUERY_PARAMS)?;
    let metric = single(pairs, "metric")?.ok_or("parameter \"metric\" is required (see /api/metrics)")?;
    if metric.is_empty() {
        return Err("parameter \"metric\" is empty (see /api/metrics)".into());
    }
    let top = match single(pairs, "top")? {
        None => None,
        Some(t) => {
            let k: u64 = t.trim().parse().map_err(|_| format!("top={t:?}: expected a whole number from 1 to {MAX_TOP}"))?;
            if k == 0 || k > MAX_TOP as u64 {
                return Err(format!("top={k}: expected a whole number from 1 to {MAX_TOP}"));
            }
            Some(k as usize)
        }
    };
    let text = |n: &str| single(pairs, n).map(|v| v.map(str::to_string));
    Ok(QueryArgs {
        metric: metric.to_string(),
        agg: text("agg")?,
        at: text("at")?,
        range: text("range")?,
        last: text("last")?,
        by: all(pairs, "by"),
        filters: all(pairs, "where"),
        top,
        every: text("every")?,
        // Civil times in the server's zone, as `tracecube query` reads them there.
        gmt: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Result<QueryArgs, String> {
        query_args(&pairs(Some(s)))
    }

    #[test]
    fn maps_one_to_one() {
        let a = q("metric=cpu_time&by=process%3Atid&by=cpu&where=process:name%3Drustc,bash&top=5&range=%2B1s..%2B2s&every=10ms&agg=avg").unwrap();
        assert_eq!(a.metric, "cpu_time");
        assert_eq!(a.by, ["process:tid", "cpu"]);
        assert_eq!(a.filters, ["process:name=rustc,bash"]);
        assert_eq!(a.top, Some(5));
        assert_eq!(a.range.as_deref(), Some("+1s..+2s"));
        assert_eq!(a.every.as_deref(), Some("10ms"));
        assert_eq!(a.agg.as_deref(), Some("avg"));
    }

    #[test]
    fn refuses_what_is_wrong() {
        assert!(q("").unwrap_err().contains("\"metric\" is required"));
        assert!(q("metric=x&color=red").unwrap_err().contains("unknown parameter \"color\""));
        assert!(q("metric=x&top=0").unwrap_err().contains("top=0"));
        assert!(q("metric=x&top=1000000000").unwrap_err().contains("top=1000000000"));
        assert!(q("metric=x&top=-3").unwrap_err().contains("top=\"-3\""));
        assert!(q("metric=x&at=1&at=2").unwrap_err().contains("more than once"));
        assert!(q("metric=x&top=%FF%FE").is_err());
    }
}
