//! Analysis results as tables, from their JSON report (`analyze --format json`):
//! each list of objects becomes a table `ANALYSIS_KEY` (one row per object), each
//! map of numbers a table `ANALYSIS_KEY` of `(key, value)` rows, and the scalars a
//! one-row table `ANALYSIS_summary`. For `cpu`: `cpu_cpus`, `cpu_threads`,
//! `cpu_summary`; `io`: `io_threads`, `io_processes`, `io_files`, `io_summary`;
//! `count`: `count_by_name`, `count_by_cpu`, `count_summary`.

use serde_json::Value as Json;

use crate::table::{Table, Value};

/// A JSON scalar as a table value (objects and arrays as JSON text).
pub fn value_of(j: &Json) -> Value {
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Value::UInt(u),
            (None, Some(i)) => Value::Int(i),
            _ => n.as_f64().map_or(Value::Null, Value::Float),
        },
        Json::String(s) => Value::Text(s.clone()),
        other => Value::Text(other.to_string()),
    }
}

/// The tables of one analysis report (`analysis` is its name: count, cpu, io).
pub fn report_tables(analysis: &str, report: &Json) -> Vec<Table> {
    let Some(obj) = report.as_object() else { return Vec::new() };
    let mut out = Vec::new();
    let mut summary = Table::new(&format!("{analysis}_summary"));
    let mut scalars = Vec::new();
    for (key, v) in obj {
        match v {
            Json::Array(items) if items.iter().all(Json::is_object) => {
                let mut t = Table::new(&format!("{analysis}_{key}"));
                for it in items {
                    if let Some(o) = it.as_object() {
                        t.push_row(o.iter().map(|(k, v)| (k.as_str(), value_of(v))));
                    }
                }
                out.push(t);
            }
            Json::Object(m) => {
                let mut t = Table::new(&format!("{analysis}_{key}"));
                let kname = key.strip_prefix("by_").unwrap_or("key");
                for (k, v) in m {
                    // A CPU is an integer in every table (JSON maps can only key by text).
                    let key = match (kname, k.parse::<u64>()) {
                        ("cpu", Ok(cpu)) => Value::UInt(cpu),
                        _ => Value::Text(k.clone()),
                    };
                    t.push_row([(kname, key), ("value", value_of(v))]);
                }
                out.push(t);
            }
            Json::String(_) if key == "analysis" => {}
            other => scalars.push((key.as_str(), value_of(other))),
        }
    }
    summary.push_row(scalars);
    out.push(summary);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Values;

    #[test]
    fn lists_maps_and_scalars() {
        let r = serde_json::json!({"analysis":"io","begin_ns":5,"end_ns":9,
            "processes":[{"pid":1,"comm":"a","read_bytes":10,"write_bytes":0},{"pid":2,"comm":"b","read_bytes":7,"write_bytes":3}],
            "by_name":{"x":4,"y":1}});
        let t = report_tables("io", &r);
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["io_by_name", "io_processes", "io_summary"]);
        assert_eq!(t[1].column("read_bytes"), Some(&Values::UInt(vec![Some(10), Some(7)])));
        assert_eq!(t[0].column("name"), Some(&Values::Text(vec![Some("x".into()), Some("y".into())])));
        assert_eq!(t[2].column("end_ns"), Some(&Values::UInt(vec![Some(9)])));
        let c = report_tables("count", &serde_json::json!({"by_cpu":{"0":4,"3":1}}));
        assert_eq!(c[0].column("cpu"), Some(&Values::UInt(vec![Some(0), Some(3)])), "cpu is an integer, as in every other table");
    }
}
